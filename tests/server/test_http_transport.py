"""Streamable HTTP rules on a real loopback server (in-process thread), driven raw with httpx2:
answer forms (JSON / SSE / 202), sessions, DELETE, GET, protocol-version header, bad bodies."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator

import httpx2
import pytest
from http_helpers import (
    BASE_HEADERS,
    NEGOTIATED,
    init_message,
    open_session,
    post,
    rpc_error,
    sse_messages,
)

from testkit.mcp_http import EchoService, running_server

CAP = 64 * 1024


@pytest.fixture(scope="module")
def service() -> EchoService:
    """The server's service: what its calls did, to wait on."""
    return EchoService()


@pytest.fixture(scope="module")
def url(service: EchoService) -> Iterator[str]:
    with running_server(service, max_message_bytes=CAP) as endpoint:
        yield endpoint


@pytest.fixture
def client() -> Iterator[httpx2.Client]:
    with httpx2.Client(timeout=10) as http:
        yield http


def _ping(client: httpx2.Client, url: str, session: str, msg_id: int = 99) -> None:
    """The server still answers (used after bad input)."""
    reply = post(client, url, {"jsonrpc": "2.0", "id": msg_id, "method": "ping"}, session=session)
    assert reply.status_code == 200 and reply.json() == {"jsonrpc": "2.0", "id": msg_id, "result": {}}


# -- answer forms -----------------------------------------------------------------------


def test_initialize_answers_json_and_issues_a_session_id(client: httpx2.Client, url: str) -> None:
    reply = post(client, url, init_message(7))
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json"
    session = reply.headers["mcp-session-id"]
    assert len(session) >= 16 and all(0x21 <= ord(ch) <= 0x7E for ch in session)
    body = reply.json()
    assert body["id"] == 7
    assert body["result"]["protocolVersion"] == NEGOTIATED
    assert body["result"]["serverInfo"] == {"name": "echo-test", "version": "1.2.3"}
    second = post(client, url, init_message(7)).headers["mcp-session-id"]
    assert second != session  # every initialize opens its own session


def test_tool_call_without_server_requests_is_plain_json(client: httpx2.Client, url: str) -> None:
    session = open_session(client, url)
    call = {"jsonrpc": "2.0", "id": "c-1", "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "héllo"}}}
    reply = post(client, url, call, session=session)
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
    assert reply.json() == {"jsonrpc": "2.0", "id": "c-1",
                            "result": {"content": [{"type": "text", "text": "héllo"}]}}


def test_notification_and_response_bodies_get_202_without_body(client: httpx2.Client, url: str) -> None:
    session = open_session(client, url)
    changed = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
    note = post(client, url, changed, session=session)
    assert (note.status_code, note.content) == (202, b"")
    answer = post(client, url, {"jsonrpc": "2.0", "id": 12345, "result": {}}, session=session)
    assert (answer.status_code, answer.content) == (202, b"")


def test_unknown_method_is_a_jsonrpc_error_in_a_200_reply(client: httpx2.Client, url: str) -> None:
    session = open_session(client, url)
    reply = post(client, url, {"jsonrpc": "2.0", "id": 3, "method": "resources/list"}, session=session)
    assert reply.status_code == 200
    assert rpc_error(reply) == {"code": -32601, "message": "Method not found: resources/list"}


def test_roots_request_switches_the_answer_to_sse(client: httpx2.Client, url: str) -> None:
    session = open_session(client, url, capabilities={"roots": {"listChanged": True}})
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "roots", "arguments": {}}}
    headers = {**BASE_HEADERS, "mcp-session-id": session, "mcp-protocol-version": NEGOTIATED}
    with client.stream("POST", url, content=json.dumps(call), headers=headers) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"] == "text/event-stream"
        lines = stream.iter_lines()
        event = [next(lines), next(lines), next(lines)]
        assert re.fullmatch(r"id: \d+-\d+", event[0]) and event[1] == "event: message"
        roots_request = json.loads(event[2].removeprefix("data: "))
        assert roots_request["method"] == "roots/list"
        answer = {"jsonrpc": "2.0", "id": roots_request["id"],
                  "result": {"roots": [{"uri": "file:///srv/data", "name": "data"}]}}
        assert post(client, url, answer, session=session).status_code == 202
        rest = sse_messages("\n".join(lines))
    assert len(rest) == 1 and rest[0]["id"] == 5
    assert rest[0]["result"]["structuredContent"] == {"roots": ["file:///srv/data"], "error": None}


# -- sessions -------------------------------------------------------------------------


def test_request_without_session_id_is_400(client: httpx2.Client, url: str) -> None:
    reply = post(client, url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert reply.status_code == 400
    assert rpc_error(reply)["message"] == (
        "Bad Request: missing Mcp-Session-Id header; send initialize first to start a session"
    )


def test_unknown_session_id_is_404(client: httpx2.Client, url: str) -> None:
    reply = post(client, url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, session="no-such-session")
    assert reply.status_code == 404
    assert rpc_error(reply)["message"] == (
        "Not Found: this MCP session does not exist or has ended; start a new one with initialize"
    )


def test_delete_ends_the_session(client: httpx2.Client, url: str) -> None:
    session = open_session(client, url)
    ended = client.delete(url, headers={"mcp-session-id": session})
    assert ended.status_code == 200
    after = post(client, url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, session=session)
    assert after.status_code == 404
    again = client.delete(url, headers={"mcp-session-id": session})
    assert again.status_code == 404
    missing = client.delete(url)
    assert missing.status_code == 400 and "missing Mcp-Session-Id" in rpc_error(missing)["message"]


def test_initialize_with_a_session_id_is_refused(client: httpx2.Client, url: str) -> None:
    session = open_session(client, url)
    reply = post(client, url, init_message(8), session=session)
    assert reply.status_code == 400
    assert rpc_error(reply) == {"code": -32600, "message": (
        "Bad Request: initialize starts a new session; send it without an Mcp-Session-Id header")}
    assert reply.json()["id"] == 8


def test_failed_initialize_opens_no_session(client: httpx2.Client, url: str) -> None:
    reply = post(client, url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert reply.status_code == 200
    assert "mcp-session-id" not in reply.headers
    assert rpc_error(reply) == {
        "code": -32602, "message": 'Invalid params: "protocolVersion" must be a string'}


def test_get_needs_a_session_other_methods_405_other_paths_404(client: httpx2.Client, url: str) -> None:
    get = client.get(url, headers={"accept": "text/event-stream"})
    assert get.status_code == 400 and "missing Mcp-Session-Id" in rpc_error(get)["message"]
    other = client.post(url.replace("/mcp", "/other"), content=b"{}", headers=BASE_HEADERS)
    assert other.status_code == 404 and rpc_error(other)["message"] == "Not Found: the MCP endpoint is /mcp"
    put = client.put(url, content=b"{}")
    assert put.status_code == 405
    assert put.headers["allow"] == "OPTIONS, GET, POST, DELETE"


# -- headers --------------------------------------------------------------------------


@pytest.mark.parametrize("accept", ["application/json", "text/event-stream", None, "*/*"])
def test_accept_must_list_json_and_sse(client: httpx2.Client, url: str, accept: str | None) -> None:
    headers = {"content-type": "application/json"}
    if accept is not None:
        headers["accept"] = accept
    reply = client.post(url, content=json.dumps(init_message()), headers=headers)
    assert reply.status_code == 406
    assert rpc_error(reply)["message"] == (
        "Not Acceptable: the Accept header must list both application/json and text/event-stream"
    )


def test_content_type_must_be_json(client: httpx2.Client, url: str) -> None:
    reply = post(client, url, init_message(), headers={"content-type": "text/plain"})
    assert reply.status_code == 415
    assert rpc_error(reply)["message"] == "Unsupported Media Type: Content-Type must be application/json"


def test_protocol_version_header_is_checked(client: httpx2.Client, url: str) -> None:
    session = open_session(client, url)
    tools = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    bogus = post(client, url, tools, session=session, headers={"mcp-protocol-version": "1999-01-01"})
    assert bogus.status_code == 400
    assert rpc_error(bogus)["message"] == (
        "Bad Request: unsupported MCP-Protocol-Version '1999-01-01' "
        "(supported: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)"
    )
    # another revision we speak is accepted, as the SDK servers and the conformance suite expect
    other = post(client, url, tools, session=session, headers={"mcp-protocol-version": "2025-03-26"})
    assert other.status_code == 200 and len(other.json()["result"]["tools"]) == 3
    absent = client.post(url, content=json.dumps(tools),
                         headers={**BASE_HEADERS, "mcp-session-id": session})
    assert absent.status_code == 200 and len(absent.json()["result"]["tools"]) == 3


# -- bad bodies -------------------------------------------------------------------------


BATCH = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]


@pytest.mark.parametrize(
    ("body", "answer_id", "code", "said"),
    [
        (b'{"jsonrpc": "2.0", "id": 1, "method": ', None, -32700, r"Parse error: .+"),
        (json.dumps(BATCH).encode(), None, -32600,
         re.escape("Invalid Request: batch arrays are not supported (removed in MCP 2025-06-18)")),
        (b'{"jsonrpc": "1.0", "id": 4, "method": "ping"}', 4, -32600,
         re.escape('Invalid Request: "jsonrpc" must be "2.0"')),
    ],
    ids=["malformed-json", "batch-array", "invalid-message"],
)
def test_a_bad_body_is_400_with_its_error_and_the_session_goes_on(
    client: httpx2.Client, url: str, body: bytes, answer_id: int | None, code: int, said: str
) -> None:
    session = open_session(client, url)
    reply = post(client, url, body, session=session)
    assert reply.status_code == 400
    answer = reply.json()
    assert set(answer) == {"jsonrpc", "id", "error"} and set(answer["error"]) == {"code", "message"}
    assert (answer["jsonrpc"], answer["id"], answer["error"]["code"]) == ("2.0", answer_id, code)
    assert re.fullmatch(said, answer["error"]["message"]), answer["error"]["message"]
    _ping(client, url, session)


def test_body_above_the_cap_is_413_and_the_connection_goes_on(client: httpx2.Client, url: str) -> None:
    session = open_session(client, url)
    huge = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "x" * (CAP + 1)}}}
    reply = post(client, url, huge, session=session)
    assert reply.status_code == 413
    assert rpc_error(reply) == {"code": -32600,
                                "message": f"Payload Too Large: a message may have at most {CAP} bytes"}
    _ping(client, url, session)
    fits = {**huge, "params": {"name": "echo", "arguments": {"text": "x" * (CAP - 200)}}}
    echoed = post(client, url, fits, session=session).json()["result"]["content"][0]["text"]
    assert echoed == "x" * (CAP - 200)


def test_chunked_body_above_the_cap_is_413(client: httpx2.Client, url: str) -> None:
    session = open_session(client, url)

    def chunks() -> Iterator[bytes]:
        for _ in range(8):
            yield b" " * (CAP // 4)

    headers = {**BASE_HEADERS, "mcp-session-id": session}
    reply = client.post(url, content=chunks(), headers=headers)
    assert reply.status_code == 413
    _ping(client, url, session)


# -- cancellation and concurrency ----------------------------------------------------------


def _slow_call_in_flight(
    url: str, session: str, msg_id: int, service: EchoService
) -> tuple[dict[str, object], threading.Thread, list[httpx2.Response]]:
    """POST a 30 s ``slow`` call from another thread; return once the tool has started:
    (the call, the thread, where its reply will be)."""
    slow = {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call",
            "params": {"name": "slow", "arguments": {"seconds": 30}}}
    replies: list[httpx2.Response] = []

    def call() -> None:
        with httpx2.Client(timeout=20) as other:
            replies.append(post(other, url, slow, session=session))

    worker = threading.Thread(target=call)
    worker.start()
    service.calls.wait_for("started", "slow")
    return slow, worker, replies


def test_cancelled_call_ends_its_post_without_a_response(
    client: httpx2.Client, url: str, service: EchoService
) -> None:
    session = open_session(client, url)
    started = time.monotonic()
    slow, worker, replies = _slow_call_in_flight(url, session, 41, service)
    duplicate = post(client, url, slow, session=session)
    assert duplicate.status_code == 400
    assert rpc_error(duplicate)["message"] == (
        "Bad Request: request id 41 is already in progress in this session")
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 41}}
    assert post(client, url, cancel, session=session).status_code == 202
    worker.join(10)
    assert time.monotonic() - started < 5
    assert replies[0].status_code == 204 and replies[0].content == b""
    _ping(client, url, session)


def test_delete_during_a_call_answers_it_with_an_error(
    client: httpx2.Client, url: str, service: EchoService
) -> None:
    session = open_session(client, url)
    _, worker, replies = _slow_call_in_flight(url, session, 42, service)
    assert client.delete(url, headers={"mcp-session-id": session}).status_code == 200
    worker.join(10)
    assert replies[0].status_code == 200
    assert replies[0].json() == {"jsonrpc": "2.0", "id": 42, "error": {
        "code": -32000, "message": "Session ended: the client ended the session (DELETE)"}}


def test_too_many_sessions_end_the_least_recently_used_idle_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("toolrelay.server.http.MAX_SESSIONS", 3)
    tools = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    with running_server() as url, httpx2.Client(timeout=10) as client:
        first, second, third = (open_session(client, url) for _ in range(3))
        assert post(client, url, tools, session=first).status_code == 200  # first is now recent
        fourth = open_session(client, url)
        assert post(client, url, tools, session=second).status_code == 404  # the least recently used
        for kept in (first, third, fourth):
            assert post(client, url, tools, session=kept).status_code == 200
