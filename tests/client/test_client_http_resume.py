"""Resumable Streamable HTTP, client side (SEP-1699): when a request's event stream ends
before its answer after an event with an id, the client waits the server's ``retry:``,
resumes it with GET + ``Last-Event-ID`` and takes the answer from there; the call
completes once, and the transcript shows the reconnection (a notice) between the
request and its one response. Against toolrelay's own file server (a connection cut by a
proxy mid-call, in a real run that verifies), toolrelay's server holding calls briefly,
the official SDK's server, and a stub for what no real server does on request.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from client_helpers import Recorder, async_wait_until, open_connection, run, sdk_http_server

from testkit.cutting_proxy import CuttingProxy
from testkit.mcp_http import EchoService, McpHttpThread, running_server
from testkit.mcp_http_stub import Received, StubBehaviour, StubServer
from toolrelay.client.config import ServerConfig
from toolrelay.errors import HttpStatusError, TransportError
from toolrelay.files import FileService, root_from_argument
from toolrelay.runner import RunOptions, run_async
from toolrelay.server.http_streams import StreamOptions
from toolrelay.verify import load_run, verify

LATEST = "2025-11-25"
NOTES = "".join(f"line {n}\n" for n in range(1, 31))


def http_config(url: str, name: str = "h", root: Path | None = None) -> ServerConfig:
    """``root``: the directory toolrelay offers as its root (the file server narrows to it)."""
    return ServerConfig(name=name, transport="http", url=url, roots=None if root is None else (str(root),))


def resumptions(recorder: Recorder) -> list[str]:
    return [text for text in recorder.notices() if "resuming it after" in text]


def tool_calls(recorder: Recorder, role: str) -> list[Any]:
    return [e for e in recorder.of(role) if e.method == "tools/call"]


def resuming_gets(stub: StubServer) -> list[Received]:
    return [r for r in stub.behaviour.received if r.verb == "GET" and "last-event-id" in r.headers]


async def call_once(url: str, tmp_path: Path, recorder: Recorder, tool: str, arguments: dict[str, Any],
                    version: str = LATEST) -> dict[str, Any]:
    async with open_connection(http_config(url, root=tmp_path), tmp_path, recorder,
                               protocol_version=version) as conn:
        result: dict[str, Any] = (await conn.call_tool(tool, arguments, call_id="c1")).raise_for_error()
        return result


# -- toolrelay's own file server, its connection cut mid-call ----------------------------


@pytest.fixture
def cut_file_server(tmp_path: Path) -> Iterator[tuple[str, CuttingProxy]]:
    """The file server on tmp_path (notes.txt), behind a proxy that cuts the first tool
    call's stream right after its priming event."""
    (tmp_path / "notes.txt").write_text(NOTES, encoding="utf-8")
    service = FileService([root_from_argument(str(tmp_path))])
    server = McpHttpThread(service, streams=StreamOptions(retry_ms=200))
    port = int(server.start().rsplit(":", 1)[1].removesuffix("/mcp"))
    try:
        with CuttingProxy(port) as proxy:
            yield f"http://127.0.0.1:{proxy.port}/mcp", proxy
    finally:
        server.stop()


def test_a_call_whose_connection_is_cut_resumes_and_completes_once(
    tmp_path: Path, cut_file_server: tuple[str, CuttingProxy]
) -> None:
    url, proxy = cut_file_server
    recorder = Recorder()
    result = run(call_once(url, tmp_path, recorder, "read_text_file", {"path": "notes.txt", "head": 2}))
    assert result["content"][0]["text"] == "line 1\nline 2\n"
    assert proxy.cuts == 1
    [request], [response] = tool_calls(recorder, "mcp_request"), tool_calls(recorder, "mcp_response")
    assert request.mcp_id == response.mcp_id and response.call_id == "c1"
    [notice] = [e for e in recorder.seen if getattr(e, "text", "").startswith("server h: the event stream")]
    assert notice.level == "info" and notice.text.startswith(
        f"server h: the event stream of tools/call request {request.mcp_id} ended before its answer; "
        "resuming it after 200 ms with GET (Last-Event-ID: ")
    order = [recorder.seen.index(e) for e in (request, notice, response)]
    assert order == sorted(order)


def test_a_run_through_a_cut_connection_is_recorded_and_verifies(
    tmp_path: Path, cut_file_server: tuple[str, CuttingProxy]
) -> None:
    url, proxy = cut_file_server
    transcript = tmp_path / "run.jsonl"
    options = RunOptions(model="offline", config=[http_config(url, "fs", tmp_path)], transcript=transcript,
                         protocol_version=LATEST)
    result = run(run_async("Read the first 20 lines of notes.txt", options))
    assert result.status == "completed" and proxy.cuts == 1
    assert [call.status for call in result.calls] == ["ok"]
    assert verify(load_run(transcript)).ok
    records = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]
    around_the_call = [r["kind"] for r in records if r.get("method") == "tools/call"
                       or (r["kind"] == "notice" and r.get("server") == "fs")]
    assert around_the_call == ["mcp_request", "notice", "mcp_response"]  # one call, two streams


# -- toolrelay's server, holding each connection briefly --------------------------------


def test_a_server_that_holds_calls_briefly_is_polled_until_the_answer(tmp_path: Path) -> None:
    service = EchoService()
    recorder = Recorder()
    with running_server(service, streams=StreamOptions(hold=0.1, retry_ms=100)) as url:
        result = run(call_once(url, tmp_path, recorder, "slow", {"seconds": 1}))
    assert result["content"][0]["text"] == "slept 1 s"
    assert len(resumptions(recorder)) >= 2  # each connection is closed after 0.1 s without the answer
    assert len(tool_calls(recorder, "mcp_response")) == 1
    assert service.calls.seen.count(("started", "slow")) == 1


def test_at_2025_06_18_the_server_holds_the_stream_until_the_answer(tmp_path: Path) -> None:
    recorder = Recorder()
    with running_server(streams=StreamOptions(hold=0)) as url:
        result = run(call_once(url, tmp_path, recorder, "slow", {"seconds": 0.2}, version="2025-06-18"))
    assert result["content"][0]["text"] == "slept 0.2 s"
    assert resumptions(recorder) == []  # its clients expect no priming event, so no early close


# -- the official SDK's server ----------------------------------------------------------


def test_the_sdk_servers_closed_stream_is_resumed(tmp_path: Path) -> None:
    recorder = Recorder()
    with sdk_http_server("http-resumable") as url:
        result = run(call_once(url, tmp_path, recorder, "reconnect", {}))
    assert result["content"][0]["text"] == "answered after the stream was closed"
    [notice] = resumptions(recorder)
    assert "resuming it after 200 ms with GET" in notice
    assert len(tool_calls(recorder, "mcp_response")) == 1


# -- what a stub does on request ----------------------------------------------------------


def test_the_reconnection_waits_retry_and_sends_last_event_id(tmp_path: Path) -> None:
    recorder = Recorder()
    with StubServer(StubBehaviour(resumable=True, retry_ms=300)) as stub:
        result = run(call_once(stub.url, tmp_path, recorder, "echo", {"text": "again"}))
        [post] = [r for r in stub.posts() if (r.body or {}).get("method") == "tools/call"]
        [get] = resuming_gets(stub)
    assert result["content"][0]["text"] == "again"
    assert get.headers["last-event-id"] == f"p-{post.body['id']}"
    assert get.headers["accept"] == "text/event-stream" and get.headers["mcp-session-id"] == "session-1"
    assert get.at - post.at >= 0.3  # the server's retry, honoured
    assert resumptions(recorder) == [f"server h: the event stream of tools/call request {post.body['id']} "
                                     f"ended before its answer; resuming it after 300 ms with GET "
                                     f"(Last-Event-ID: p-{post.body['id']})"]


def test_a_refused_resumption_fails_the_call_with_the_servers_reason(tmp_path: Path) -> None:
    error = {"code": -32600, "message": "no such event"}
    refusal = json.dumps({"jsonrpc": "2.0", "id": None, "error": error})
    behaviour = StubBehaviour(resumable=True, retry_ms=100, resume_refusal=(400, refusal))
    with StubServer(behaviour) as stub, pytest.raises(HttpStatusError) as refused:
        run(call_once(stub.url, tmp_path, Recorder(), "echo", {"text": "x"}))
    assert refused.value.status == 400
    assert "answered HTTP 400 Bad Request to the GET resuming the event stream of tools/call request" in str(
        refused.value)
    assert str(refused.value).endswith(": no such event")


def test_reconnections_that_bring_nothing_are_given_up(tmp_path: Path) -> None:
    with StubServer(StubBehaviour(resumable=True, retry_ms=100, resume_silent=True)) as stub:
        with pytest.raises(TransportError) as given_up:
            run(call_once(stub.url, tmp_path, Recorder(), "echo", {"text": "x"}))
        gets = resuming_gets(stub)  # read before the stub stops
    assert "ended before its answer, and 3 reconnections in a row brought nothing more" in str(given_up.value)
    assert len(gets) == 3


def test_the_get_stream_is_resumed_and_brings_what_the_server_sent_meanwhile(tmp_path: Path) -> None:
    changed: list[str] = []

    async def scenario(url: str) -> bool:
        async with open_connection(http_config(url), tmp_path, protocol_version=LATEST) as conn:
            conn.on_tools_changed = changed.append
            return await async_wait_until(lambda: changed == ["h"])

    with StubServer(StubBehaviour(standalone_ends=True, retry_ms=100)) as stub:
        assert run(scenario(stub.url))
        gets = [r.headers.get("last-event-id") for r in stub.behaviour.received if r.verb == "GET"]
    assert gets == [None, "g-1"]
