"""Resumable streams (SEP-1699) on a real loopback server (in-process thread), driven raw
with httpx2: priming events, the standalone GET stream, a stream closed early (hold) or
cut by the client and resumed with GET + Last-Event-ID, the limits on what is kept, and
every access check on GET."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from http_helpers import BASE_HEADERS, rpc_error

from testkit.mcp_http import EchoService, running_server
from toolrelay.protocol.jsonrpc import JSONObject
from toolrelay.server.http_session import HttpSession
from toolrelay.server.http_streams import StreamOptions

LATEST = "2025-11-25"
TOKEN = "resume-token-8642"
RETRY_MS = 250


@pytest.fixture(scope="module")
def service() -> EchoService:
    return EchoService()


@pytest.fixture(scope="module")
def url(service: EchoService) -> Iterator[str]:
    """A server that closes a call's stream at once when its answer is not there yet."""
    with running_server(service, streams=StreamOptions(hold=0, retry_ms=RETRY_MS, events_kept=8)) as endpoint:
        yield endpoint


@pytest.fixture
def client() -> Iterator[httpx2.Client]:
    with httpx2.Client(timeout=10) as http:
        yield http


def open_session(client: httpx2.Client, url: str, version: str = LATEST, **headers: str) -> dict[str, str]:
    """initialize + initialized at ``version``; the headers every later request carries."""
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "0"}}}
    reply = client.post(url, json=init, headers={**BASE_HEADERS, **headers})
    assert reply.status_code == 200, reply.text
    session = {"mcp-session-id": reply.headers["mcp-session-id"], "mcp-protocol-version": version, **headers}
    done = client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                       headers={**BASE_HEADERS, **session})
    assert done.status_code == 202
    return session


def call(msg_id: int, tool: str, **arguments: Any) -> JSONObject:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": params}


def events_of(response: httpx2.Response) -> list[httpx2.ServerSentEvent]:
    return list(httpx2.EventSource(response))


def post_events(
    client: httpx2.Client, url: str, session: dict[str, str], message: JSONObject
) -> list[httpx2.ServerSentEvent]:
    """POST ``message``; the events of the stream that answers it."""
    with client.stream("POST", url, json=message, headers={**BASE_HEADERS, **session}) as reply:
        assert reply.headers["content-type"] == "text/event-stream"
        return events_of(reply)


def messages(events: list[httpx2.ServerSentEvent]) -> list[JSONObject]:
    return [json.loads(event.data) for event in events if event.data]


def resume(client: httpx2.Client, url: str, session: dict[str, str], last_event_id: str) -> httpx2.Response:
    headers = {"accept": "text/event-stream", "last-event-id": last_event_id, **session}
    return client.get(url, headers=headers)


# -- priming --------------------------------------------------------------------------


def test_a_tool_call_at_2025_11_25_is_a_stream_that_begins_with_a_priming_event(
    client: httpx2.Client, url: str
) -> None:
    session = open_session(client, url)
    priming, answer = post_events(client, url, session, call(1, "echo", text="hi"))
    assert (priming.data, priming.retry) == ("", RETRY_MS) and priming.id
    assert answer.id != priming.id
    assert json.loads(answer.data) == {"jsonrpc": "2.0", "id": 1, "result": {
        "content": [{"type": "text", "text": "hi"}]}}


def test_at_2025_06_18_a_quick_answer_stays_json(client: httpx2.Client, url: str) -> None:
    session = open_session(client, url, "2025-06-18")
    reply = client.post(url, json=call(1, "echo", text="hi"), headers={**BASE_HEADERS, **session})
    assert reply.headers["content-type"] == "application/json"
    assert reply.json()["result"]["content"][0]["text"] == "hi"


# -- resuming ---------------------------------------------------------------------------


def test_a_stream_closed_early_is_resumed_with_its_answer_once(
    client: httpx2.Client, url: str, service: EchoService
) -> None:
    session = open_session(client, url)
    events = post_events(client, url, session, call(7, "slow", seconds=0.3))
    assert [(e.data, e.retry) for e in events] == [("", RETRY_MS), ("", RETRY_MS)]  # priming, then retry
    service.calls.wait_for("finished", "slow")
    resumed = resume(client, url, session, events[0].id)
    assert resumed.status_code == 200 and resumed.headers["content-type"] == "text/event-stream"
    answers = messages(events_of(resumed))
    slept = {"content": [{"type": "text", "text": "slept 0.3 s"}]}
    assert answers == [{"jsonrpc": "2.0", "id": 7, "result": slept}]
    assert service.calls.seen.count(("started", "slow")) == 1
    again = resume(client, url, session, events[0].id)  # from the same point: the same events again
    assert messages(events_of(again)) == answers


def test_a_stream_the_client_dropped_keeps_its_events_for_the_resume(
    client: httpx2.Client, url: str, service: EchoService
) -> None:
    session = open_session(client, url)
    with client.stream("POST", url, json=call(3, "roots"), headers={**BASE_HEADERS, **session}) as reply:
        priming = next(iter(httpx2.EventSource(reply)))  # then the client goes
    service.calls.wait_for("finished", "roots")
    answers = messages(events_of(resume(client, url, session, priming.id)))
    assert [a["id"] for a in answers] == [3]


def test_resuming_replays_only_that_streams_events(
    client: httpx2.Client, url: str, service: EchoService
) -> None:
    session = open_session(client, url)
    primings = {}
    for msg_id, seconds in ((11, 0.2), (12, 0.25)):
        primings[msg_id] = post_events(client, url, session, call(msg_id, "slow", seconds=seconds))[0].id
    service.calls.wait_for("finished", "slow")
    service.calls.wait_for("finished", "slow")
    for msg_id, event_id in primings.items():
        assert [a["id"] for a in messages(events_of(resume(client, url, session, event_id)))] == [msg_id]


# -- what cannot be resumed ---------------------------------------------------------------


def test_an_unknown_or_foreign_last_event_id_is_400(client: httpx2.Client, url: str) -> None:
    mine, theirs = open_session(client, url), open_session(client, url)
    their_event = post_events(client, url, theirs, call(1, "echo", text="x"))[0].id
    for last_event_id in ("garbage", "99-99999", their_event):
        refused = resume(client, url, mine, last_event_id)
        assert refused.status_code == 400
        message = rpc_error(refused)["message"]
        assert message.startswith(f"Bad Request: cannot resume after Last-Event-ID {last_event_id!r}")
        assert "this server keeps 8 events for 300 s per session" in message
    assert client.post(url, json=call(2, "echo", text="still here"),
                       headers={**BASE_HEADERS, **mine}).status_code == 200


def test_a_stream_whose_answer_was_pushed_out_cannot_be_resumed(
    client: httpx2.Client, url: str, service: EchoService
) -> None:
    session = open_session(client, url)
    priming = post_events(client, url, session, call(1, "slow", seconds=0.1))[0].id
    service.calls.wait_for("finished", "slow")
    for msg_id in range(2, 7):  # 5 calls, 2 events each: past the 8 events kept
        client.post(url, json=call(msg_id, "echo", text="x"), headers={**BASE_HEADERS, **session}).read()
    assert resume(client, url, session, priming).status_code == 400


# -- the standalone stream -------------------------------------------------------------


def test_get_opens_the_standalone_stream_with_a_priming_event(client: httpx2.Client, url: str) -> None:
    session = open_session(client, url)
    headers = {"accept": "text/event-stream", **session}
    with client.stream("GET", url, headers=headers) as first:
        assert first.status_code == 200 and first.headers["content-type"] == "text/event-stream"
        first_events = iter(httpx2.EventSource(first))
        priming = next(first_events)
        assert (priming.data, priming.retry) == ("", RETRY_MS)
        with client.stream("GET", url, headers=headers) as second:  # takes the stream over
            assert next(iter(httpx2.EventSource(second))).id != priming.id
            assert list(first_events) == []  # the first connection was ended


def test_server_messages_outside_any_request_go_on_the_standalone_stream() -> None:
    async def notify() -> list[bytes | None]:
        session = HttpSession(EchoService())
        session.session.peer.notify("notifications/tools/list_changed")
        return [e.data for e in session.events.after(session.standalone.number, 0, session.now()) or []]

    [data] = asyncio.run(notify())
    assert json.loads(data or b"") == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


# -- access checks on GET ----------------------------------------------------------------


@pytest.fixture(scope="module")
def guarded() -> Iterator[str]:
    with running_server(token=TOKEN) as endpoint:
        yield endpoint


def test_get_passes_every_check_a_post_does(client: httpx2.Client, guarded: str) -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    session = open_session(client, guarded, **auth)
    sse = {"accept": "text/event-stream"}

    def get(**headers: str) -> httpx2.Response:
        return client.get(guarded, headers={**sse, **session, **headers})

    no_token = {k: v for k, v in session.items() if k != "authorization"}
    assert client.get(guarded, headers={**sse, **no_token}).status_code == 401
    assert client.get(guarded, headers={**sse, **no_token, "last-event-id": "0-1"}).status_code == 401
    assert get(host="evil.example.com").status_code == 403
    assert get(origin="http://evil.example.com").status_code == 403
    assert get(accept="application/json").status_code == 406
    assert get(**{"mcp-session-id": "no-such-session"}).status_code == 404
    assert get(**{"mcp-protocol-version": "1999-01-01"}).status_code == 400
    older = {**sse, **session, "mcp-protocol-version": "2025-06-18"}
    with client.stream("GET", guarded, headers=older) as ok:
        assert ok.status_code == 200  # another supported revision is accepted, as on POST
