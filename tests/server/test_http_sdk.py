"""The official MCP Python SDK (mcp 2.3.0) client drives our Streamable HTTP server, which
runs as a real subprocess (``echo_http_server.py``): handshake, tools, the roots flow over
SSE, errors, a timed-out call, session end, and a clean exit on SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx2
import mcp_types as t
import pytest
from http_helpers import post
from mcp import ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client

from testkit.mcp_http import echo_http_process

ROOTS = [t.Root(uri="file:///srv/project", name="project"), t.Root(uri="file:///tmp/scratch")]


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, subprocess.Popen[str]]]:
    with echo_http_process() as running:
        yield running


class Recorder:
    """An httpx2 client whose responses are noted: method, status, content type, session id."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int, str, str | None]] = []

    async def note(self, response: httpx2.Response) -> None:
        self.seen.append((response.request.method, response.status_code,
                          response.headers.get("content-type", ""), response.headers.get("mcp-session-id")))

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=60), event_hooks={"response": [self.note]})


async def _list_roots(context: Any) -> t.ListRootsResult:
    return t.ListRootsResult(roots=ROOTS)


async def _session_run(url: str, recorder: Recorder) -> dict[str, Any]:
    found: dict[str, Any] = {}
    async with (
        recorder.client() as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, list_roots_callback=_list_roots) as session,
    ):
        init = await session.initialize()
        found["version"] = init.protocol_version
        found["server"] = (init.server_info.name, init.server_info.version, init.instructions)
        found["tools"] = [tool.name for tool in (await session.list_tools()).tools]
        echo = await session.call_tool("echo", {"text": "über ☃"})
        found["echo"] = (echo.content[0].text, echo.is_error)  # type: ignore[union-attr]
        roots = await session.call_tool("roots", {})
        found["roots"] = roots.structured_content
        bad = await session.call_tool("echo", {})
        found["tool_error"] = (bad.content[0].text, bad.is_error)  # type: ignore[union-attr]
        with pytest.raises(MCPError) as unknown:
            await session.call_tool("no_such_tool", {})
        found["unknown"] = (unknown.value.error.code, unknown.value.error.message)
    return found


def test_sdk_client_full_session(served: tuple[str, subprocess.Popen[str]]) -> None:
    url = served[0]
    recorder = Recorder()
    found = asyncio.run(_session_run(url, recorder))
    assert found["version"] == "2025-11-25"  # what the SDK asks for, and we speak it
    assert found["server"] == ("echo-test", "1.2.3", "A test service.")
    assert found["tools"] == ["echo", "slow", "roots"]
    assert found["echo"] == ("über ☃", False)
    assert found["roots"] == {"roots": ["file:///srv/project", "file:///tmp/scratch"], "error": None}
    assert found["tool_error"] == ('echo needs "text" (a string)', True)
    assert found["unknown"] == (-32602, "Unknown tool: no_such_tool")

    posts = [(status, ctype) for method, status, ctype, _ in recorder.seen if method == "POST"]
    # at 2025-11-25 every tools/call is answered as a resumable stream; tools/list as JSON
    assert posts.count((200, "text/event-stream")) == 4
    assert posts.count((202, "")) == 2  # notifications/initialized and the roots/list answer
    gets = [(status, ctype) for method, status, ctype, _ in recorder.seen if method == "GET"]
    assert gets == [(200, "text/event-stream")]  # the SDK's standalone stream
    session_id = next(sid for method, _, _, sid in recorder.seen if sid)
    deletes = [status for method, status, _, _ in recorder.seen if method == "DELETE"]
    assert deletes == [200]  # the SDK ended its session on exit
    with httpx2.Client(timeout=10) as client:
        after = post(client, url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, session=session_id)
    assert after.status_code == 404


async def _timeout_then_echo(url: str) -> tuple[str, str]:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        with pytest.raises(MCPError) as timed_out:
            await session.call_tool("slow", {"seconds": 30}, read_timeout_seconds=0.5)
        echo = await session.call_tool("echo", {"text": "after the timeout"})
        return timed_out.value.error.message, echo.content[0].text  # type: ignore[union-attr]


def test_sdk_timeout_cancels_and_the_session_goes_on(served: tuple[str, subprocess.Popen[str]]) -> None:
    message, text = asyncio.run(_timeout_then_echo(served[0]))
    assert "Timed out" in message or "timed out" in message
    assert text == "after the timeout"


async def _concurrent_calls(url: str) -> list[str]:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        results = await asyncio.gather(
            session.call_tool("slow", {"seconds": 0.3}),
            *(session.call_tool("echo", {"text": f"n{i}"}) for i in range(5)),
        )
        return [r.content[0].text for r in results]  # type: ignore[union-attr]


def test_sdk_concurrent_calls_are_paired_by_id(served: tuple[str, subprocess.Popen[str]]) -> None:
    assert asyncio.run(_concurrent_calls(served[0])) == ["slept 0.3 s", "n0", "n1", "n2", "n3", "n4"]


def test_sigterm_exits_cleanly() -> None:
    with echo_http_process() as (url, proc):
        with httpx2.Client(timeout=10) as client:
            init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}}}
            assert post(client, url, init).status_code == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        assert proc.stderr is not None
        stderr = proc.stderr.read()
    assert "Traceback" not in stderr and "Error" not in stderr and "never retrieved" not in stderr, stderr
