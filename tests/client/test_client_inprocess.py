"""The in-process transport: a Python ToolService as a server, no process, same contract."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from client_helpers import Recorder, open_connection, run

from toolrelay.client.config import ServerConfig
from toolrelay.client.connection import Connection
from toolrelay.errors import ConfigError, MessageTooLarge, RequestTimeout, TransportError
from toolrelay.events import EventStream, McpMessage
from toolrelay.inprocess_servers import in_process_server
from toolrelay.server.app import CallContext, UnknownTool


class Tools:
    """echo, huge (a result of N bytes) and hang (until cancelled, which it records)."""

    name = "test-tools"
    version = "1"
    instructions = "In-process test tools."
    uses_client_roots = True  # so the server asks for roots before its first call, as the file server does

    def __init__(self) -> None:
        self.cancelled: list[str] = []

    def tools(self) -> list[dict[str, Any]]:
        return [{"name": name, "inputSchema": {"type": "object"}} for name in ("echo", "huge", "hang")]

    def call(self, name: str, arguments: dict[str, Any], context: CallContext) -> Any:
        if name == "echo":
            return {"content": [{"type": "text", "text": arguments["text"]}]}
        if name == "huge":
            return {"content": [{"type": "text", "text": "y" * arguments["bytes"]}]}
        if name == "hang":
            return self._hang()
        raise UnknownTool(name)

    async def _hang(self) -> dict[str, Any]:
        try:
            await asyncio.get_running_loop().create_future()
        except asyncio.CancelledError:
            self.cancelled.append("hang")
            raise
        raise AssertionError("unreachable")


def test_handshake_list_and_call_are_recorded_with_ids(tmp_path: Path) -> None:
    recorder = Recorder()

    async def scenario() -> None:
        config = in_process_server(Tools(), name="t", roots=(str(tmp_path),))
        async with open_connection(config, tmp_path, recorder, protocol_version="2025-11-25") as conn:  # 2025
            assert (conn.number, conn.protocol_version, conn.alive) == (1, "2025-11-25", True)
            assert conn.server_info == {"name": "test-tools", "version": "1"}
            assert conn.instructions == "In-process test tools."
            assert [tool["name"] for tool in await conn.list_tools()] == ["echo", "huge", "hang"]
            exchange = await conn.call_tool("echo", {"text": "héllo"}, call_id="call_A")
            assert exchange.result == {"content": [{"type": "text", "text": "héllo"}]}
            assert (conn.pid, conn.log_path, conn.stderr_tail()) == (None, None, "")

    run(scenario())
    messages = [e for e in recorder.seen if isinstance(e, McpMessage)]
    assert [(m.role, m.method) for m in messages] == [
        ("mcp_request", "initialize"), ("mcp_response", "initialize"),
        ("mcp_notification", "notifications/initialized"),
        ("mcp_request", "tools/list"), ("mcp_response", "tools/list"),
        ("mcp_request", "tools/call"),
        ("mcp_server_request", "roots/list"), ("mcp_reply", None),  # the server asks, during the call
        ("mcp_response", "tools/call"),
    ]
    call, answer = messages[-4], messages[-1]
    assert call.call_id == answer.call_id == "call_A"
    assert call.mcp_id == answer.mcp_id == 3
    asked, replied = messages[-3:-1]
    assert asked.call_id == replied.call_id == "call_A"  # recorded as part of that call
    assert replied.message["result"]["roots"][0]["uri"] == tmp_path.resolve().as_uri()
    starting, exited = recorder.of("server_starting")[0], recorder.of("server_exited")[0]
    assert (starting.transport, starting.target) == ("inprocess", "in-process")
    assert (exited.expected, exited.returncode, exited.stderr_tail) == (True, None, "")


def test_oversized_answer_fails_only_its_request(tmp_path: Path) -> None:
    recorder = Recorder()
    config = in_process_server(Tools(), name="t", max_message_bytes=64 * 1024)

    async def scenario() -> tuple[Exception, str]:
        async with open_connection(config, tmp_path, recorder) as conn:
            with pytest.raises(MessageTooLarge) as caught:
                await conn.call_tool("huge", {"bytes": 100_000})
            after = (await conn.call_tool("echo", {"text": "still here"})).raise_for_error()
            return caught.value, after["content"][0]["text"]

    error, after = run(scenario())
    assert str(error).startswith("response to tools/call request 3 is ")
    assert str(error).endswith(" bytes, above the 64 KiB limit")
    assert after == "still here"
    assert recorder.of("mcp_invalid")[0].reason == str(error)


def test_timeout_cancels_the_call_inside_the_server(tmp_path: Path) -> None:
    tools = Tools()
    config = in_process_server(tools, name="t", call_timeout=0.2)

    async def scenario() -> tuple[Exception, str]:
        async with open_connection(config, tmp_path) as conn:
            with pytest.raises(RequestTimeout) as caught:
                await conn.call_tool("hang", {})
            after = (await conn.call_tool("echo", {"text": "alive"})).raise_for_error()  # after the cancel
            return caught.value, after["content"][0]["text"]

    error, after = run(scenario())
    assert str(error) == "tools/call request 3 got no answer within 0.2 s (a cancellation was sent)"
    assert (after, tools.cancelled) == ("alive", ["hang"])


def test_close_fails_pending_calls_and_a_new_start_is_connection_two(tmp_path: Path) -> None:
    tools = Tools()
    recorder = Recorder()

    async def scenario() -> tuple[str, int, str]:
        config = in_process_server(tools, name="t", offer_roots=False)  # the call starts at once
        async with open_connection(config, tmp_path, recorder) as conn:
            pending = asyncio.ensure_future(conn.call_tool("hang", {}))
            await conn.ping()  # the hang request has reached the server
            await conn.close()
            with pytest.raises(TransportError) as caught:
                await pending
            await conn.start()
            echoed = (await conn.call_tool("echo", {"text": "again"})).raise_for_error()
            return str(caught.value), conn.number, echoed["content"][0]["text"]

    error, number, echoed = run(scenario())
    assert (error, number, echoed) == ("connection to server t was closed", 2, "again")
    assert tools.cancelled == ["hang"]  # closing the session cancelled the server's work
    assert [e.connection for e in recorder.of("server_ready")] == [1, 2]


def test_a_config_without_a_peer_factory_is_refused() -> None:
    with pytest.raises(ConfigError) as caught:
        Connection(ServerConfig(name="t", transport="inprocess"), EventStream())
    assert str(caught.value) == "server 't': an in-process server needs a peer_factory"
