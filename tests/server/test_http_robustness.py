"""The HTTP server under rough treatment: keep-alive, malformed HTTP, clients that vanish
mid-request, bodies far above the cap (memory stays flat), and shutdown with work in
flight. Raw sockets against a real loopback server."""

from __future__ import annotations

import gc
import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from http_helpers import BASE_HEADERS, NEGOTIATED, RawConnection, init_message, open_session, post

from testkit.mcp_http import EchoService, McpHttpThread, echo_http_process
from toolrelay.httpserver import ConnectionLimits

CAP = 64 * 1024


@pytest.fixture
def service() -> EchoService:
    """The server's service: what its calls did, to wait on."""
    return EchoService()


@pytest.fixture
def server(service: EchoService) -> Iterator[tuple[McpHttpThread, str]]:
    running = McpHttpThread(service, max_message_bytes=CAP)
    url = running.start()
    try:
        yield running, url
    finally:
        running.stop()


def _alive(url: str) -> None:
    with httpx2.Client(timeout=10) as client:
        open_session(client, url)


def _session_headers(session: str) -> dict[str, str]:
    return {**BASE_HEADERS, "mcp-session-id": session, "mcp-protocol-version": NEGOTIATED}


def test_keep_alive_carries_a_whole_session_on_one_connection(server: tuple[McpHttpThread, str]) -> None:
    with RawConnection(server[1]) as raw:
        status, headers, _ = raw.request("POST", BASE_HEADERS, json.dumps(init_message()).encode())
        assert status == 200
        session = _session_headers(headers["mcp-session-id"])
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
        assert raw.request("POST", session, note)[0] == 202
        status, _, body = raw.request("POST", session, b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
        assert status == 200 and [t["name"] for t in json.loads(body)["result"]["tools"]] == [
            "echo", "slow", "roots"]
        status, _, _ = raw.request("DELETE", {"mcp-session-id": headers["mcp-session-id"]})
        assert status == 200


def test_malformed_http_gets_400_and_a_closed_connection(server: tuple[McpHttpThread, str]) -> None:
    with RawConnection(server[1]) as raw:
        raw.send_raw(b"THIS IS NOT HTTP\r\n\r\n")
        reply = b""
        while chunk := raw.sock.recv(65536):  # until the server closes the connection
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 400 Bad Request\r\n")
        assert reply.endswith(b"\r\n\r\nbad request: illegal request line\n")
    _alive(server[1])


def test_oversized_headers_get_431(server: tuple[McpHttpThread, str]) -> None:
    with RawConnection(server[1]) as raw:
        raw.send_raw(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n")
        assert raw.read_until(b"\r\n").startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
    _alive(server[1])


def test_expect_100_continue(server: tuple[McpHttpThread, str]) -> None:
    with RawConnection(server[1]) as raw:
        body = json.dumps(init_message()).encode()
        raw.send_head("POST", {**BASE_HEADERS, "expect": "100-continue"}, content_length=len(body))
        assert raw.read_until(b"\r\n\r\n").startswith(b"HTTP/1.1 100 Continue\r\n")
        raw.send_raw(body)
        status, headers, _ = raw.read_response()
        assert status == 200 and headers["mcp-session-id"]


def test_expect_100_continue_above_the_cap_is_refused_first(server: tuple[McpHttpThread, str]) -> None:
    with RawConnection(server[1]) as raw:
        raw.send_head("POST", {**BASE_HEADERS, "expect": "100-continue"}, content_length=CAP * 100)
        status, headers, body = raw.read_response()
        assert status == 413 and headers["connection"] == "close"
        message = json.loads(body)["error"]["message"]
        assert message == f"Payload Too Large: a message may have at most {CAP} bytes"


@pytest.mark.parametrize("depth", [600, 5000])
def test_deeply_nested_json_gets_400_parse_error(server: tuple[McpHttpThread, str], depth: int) -> None:
    url = server[1]
    with httpx2.Client(timeout=10) as client:
        session = open_session(client, url)
        deep = ('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":'
                + "[" * depth + "]" * depth + "}}}").encode()
        reply = post(client, url, deep, session=session)
        assert reply.status_code == 400 and reply.headers["content-type"] == "application/json"
        assert reply.json() == {"jsonrpc": "2.0", "id": 5, "error": {
            "code": -32700, "message": "Parse error: JSON nested deeper than 512 levels"}}
        echo = {"jsonrpc": "2.0", "id": 6, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "still here"}}}
        assert post(client, url, echo, session=session).json()["result"]["content"][0]["text"] == "still here"


def test_the_endpoint_closes_a_silent_connection_at_its_idle_timeout() -> None:
    running = McpHttpThread(limits=ConnectionLimits(idle_timeout=0.5))
    url = running.start()
    try:
        with RawConnection(url) as raw:
            assert raw.request("POST", BASE_HEADERS, json.dumps(init_message()).encode())[0] == 200
            started = time.monotonic()
            assert raw.closed_by_server()
            assert time.monotonic() - started < 8
    finally:
        running.stop()


def test_client_leaving_mid_body_harms_nobody(server: tuple[McpHttpThread, str]) -> None:
    with RawConnection(server[1]) as raw:
        raw.send_head("POST", BASE_HEADERS, content_length=1000)
        raw.send_raw(b'{"jsonrpc":')
    _alive(server[1])


def test_client_leaving_mid_call_harms_nobody(
    server: tuple[McpHttpThread, str], service: EchoService
) -> None:
    url = server[1]
    with httpx2.Client(timeout=10) as client:
        session = open_session(client, url)
        call = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "slow", "arguments": {"seconds": 0.3}}}).encode()
        with RawConnection(url) as raw:
            raw.send_head("POST", _session_headers(session), content_length=len(call))
            raw.send_raw(call)
        service.calls.wait_for("finished", "slow")  # its answer has nowhere to go
        echo = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "still here"}}}
        assert post(client, url, echo, session=session).json()["result"]["content"][0]["text"] == "still here"


def test_client_leaving_mid_sse_stream_harms_nobody(
    server: tuple[McpHttpThread, str], service: EchoService
) -> None:
    url = server[1]
    with httpx2.Client(timeout=10) as client:
        session = open_session(client, url, capabilities={"roots": {}})
        call = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "roots", "arguments": {}}}).encode()
        with RawConnection(url) as raw:
            raw.send_head("POST", _session_headers(session), content_length=len(call))
            raw.send_raw(call)
            first = raw.read_until(b"\n\n").decode()  # the head (CRLF lines), then the first event
        assert "content-type: text/event-stream" in first and '"method":"roots/list"' in first
        roots_id = json.loads(re.search(r"data: (\{.*\})", first).group(1))["id"]  # type: ignore[union-attr]
        answer = {"jsonrpc": "2.0", "id": roots_id, "result": {"roots": [{"uri": "file:///x"}]}}
        assert post(client, url, answer, session=session).status_code == 202
        service.calls.wait_for("finished", "roots")  # its response finds no open stream
        again = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "roots", "arguments": {}}}
        reply = post(client, url, again, session=session)
        assert reply.json()["result"]["structuredContent"] == {"roots": ["file:///x"], "error": None}


def test_shutdown_closes_connections_and_ends_calls_in_flight() -> None:
    service = EchoService()
    running = McpHttpThread(service)
    url = running.start()
    idle = RawConnection(url)  # closed at the end: a leak would show in gc.collect()
    assert idle.request("POST", BASE_HEADERS, json.dumps(init_message()).encode())[0] == 200
    outcome: list[BaseException | httpx2.Response] = []

    def slow_call() -> None:
        with httpx2.Client(timeout=20) as client:
            session = open_session(client, url)
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "slow", "arguments": {"seconds": 60}}}
            try:
                outcome.append(post(client, url, call, session=session))
            except httpx2.HTTPError as exc:
                outcome.append(exc)

    worker = threading.Thread(target=slow_call)
    worker.start()
    service.calls.wait_for("started", "slow")
    started = time.monotonic()
    running.stop()
    assert time.monotonic() - started < 3
    worker.join(10)
    assert isinstance(outcome[0], httpx2.RemoteProtocolError)  # the connection closed, no answer
    service.calls.wait_for("cancelled", "slow", timeout=0)  # the tool stopped with the server
    assert idle.closed_by_server()
    idle.close()
    gc.collect()  # an unclosed transport would warn here, and warnings are errors
    with pytest.raises(httpx2.ConnectError):
        httpx2.post(url, content=b"{}", headers=BASE_HEADERS, timeout=2)


def _peak_rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))  # type: ignore[union-attr]


def test_huge_body_does_not_grow_server_memory() -> None:
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc to read the server's peak memory")
    body_size = 48 * 1024 * 1024
    with echo_http_process("--max-bytes", str(CAP)) as (url, proc), httpx2.Client(timeout=30) as client:
        session = open_session(client, url)  # warm up every code path first
        before = _peak_rss_kib(proc.pid)

        def chunks() -> Iterator[bytes]:
            block = b" " * (256 * 1024)
            for _ in range(body_size // len(block)):
                yield block

        for content in (chunks(), b" " * body_size):  # chunked, then with a Content-Length
            reply = client.post(url, content=content, headers={**BASE_HEADERS, "mcp-session-id": session})
            assert reply.status_code == 413
        growth_kib = _peak_rss_kib(proc.pid) - before
        assert growth_kib < 8 * 1024, f"peak memory grew by {growth_kib} KiB for a {body_size} byte body"
        ping = post(client, url, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, session=session)
        assert ping.json()["result"] == {}
