"""A real stdio server subprocess (``echo_stdio_server.py``, 4 KiB line cap) fed bad input:
every malformed message gets the right JSON-RPC error, the server keeps answering, its
memory stays flat under a huge line, and it exits 0 when stdin closes."""

from __future__ import annotations

import json
import re
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.processes import kill_tree, spawn
from testkit.servers import ECHO_STDIO_SERVER

CAP = 4096


class StdioServer:
    """The subprocess, one JSON line in, one JSON line out."""

    def __init__(self) -> None:
        self.proc = spawn(
            [sys.executable, str(ECHO_STDIO_SERVER), "--max-bytes", str(CAP)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )

    def send(self, line: bytes | dict[str, Any]) -> None:
        data = json.dumps(line).encode() + b"\n" if isinstance(line, dict) else line
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def receive(self, timeout: float = 10) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, "no answer from the server"
        line = self.proc.stdout.readline()
        assert line.endswith(b"\n"), f"server output is not a line: {line!r}"
        message: dict[str, Any] = json.loads(line)
        return message

    def ask(self, line: bytes | dict[str, Any]) -> dict[str, Any]:
        self.send(line)
        return self.receive()

    def finish(self) -> tuple[int, str]:
        """Close stdin; the exit code and stderr."""
        assert self.proc.stdin is not None and self.proc.stderr is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        code = self.proc.wait(10)
        stderr = self.proc.stderr.read().decode()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code, stderr


def _error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _request(msg_id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}


@pytest.fixture
def server() -> Iterator[StdioServer]:
    running = StdioServer()
    try:
        yield running
        if running.proc.poll() is None:
            code, stderr = running.finish()
            assert code == 0, stderr
            assert "Traceback" not in stderr, stderr
    finally:
        kill_tree(running.proc)


def test_requests_before_initialize(server: StdioServer) -> None:
    assert server.ask(_request(1, "tools/list")) == _error(
        1, -32600, "Invalid Request: the session is not initialized; send initialize first")
    # ping is always allowed
    assert server.ask(_request(2, "ping")) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert server.ask(_request(3, "initialize")) == _error(
        3, -32602, 'Invalid params: initialize needs "protocolVersion"')
    assert server.ask(_request(4, "initialize", {"protocolVersion": 2025})) == _error(
        4, -32602, 'Invalid params: "protocolVersion" must be a string')
    answer = server.ask(_request(5, "initialize", {**INIT, "protocolVersion": "1999-01-01"}))
    assert answer["result"]["protocolVersion"] == "2025-11-25"  # not ours to speak: we offer our latest


def test_bad_messages_get_their_errors_and_the_server_goes_on(server: StdioServer) -> None:
    assert server.ask(_request(0, "initialize", INIT))["result"]["serverInfo"]["name"] == "echo-test"
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    parse = server.ask(b'{"jsonrpc": "2.0", "id": 1, "method": \n')
    assert parse["id"] is None and parse["error"]["code"] == -32700
    assert parse["error"]["message"].startswith("Parse error: ")
    assert server.ask(b"[1, 2]\n") == _error(
        None, -32600, "Invalid Request: batch arrays are not supported (removed in MCP 2025-06-18)")
    assert server.ask(b'"just a string"\n') == _error(
        None, -32600, "Invalid Request: a message must be a JSON object")
    assert server.ask(b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}\n')["error"]["code"] == -32700
    assert server.ask(_request(None, "ping")) == _error(
        None, -32600, 'Invalid Request: "id" must be a string or an integer (not null)')
    assert server.ask(_request(True, "ping"))["error"]["code"] == -32600
    assert server.ask(_request(2, "no/such/method")) == _error(2, -32601, "Method not found: no/such/method")
    assert server.ask(_request(3, "tools/call", [1])) == _error(
        3, -32602, 'Invalid params: "params" must be an object')
    assert server.ask(_request(4, "tools/call", {"arguments": {}})) == _error(
        4, -32602, 'Invalid params: "name" must be a string')
    assert server.ask(_request(5, "tools/call", {"name": "echo", "arguments": "x"})) == _error(
        5, -32602, 'Invalid params: "arguments" must be an object')
    assert server.ask(_request(6, "tools/call", {"name": "nope"})) == _error(6, -32602, "Unknown tool: nope")

    # Notifications are never answered, even odd ones (sent while a call is in flight, so
    # the table of running handlers is looked at); the next line answered is the ping.
    server.send(_request(8, "tools/call", {"name": "slow", "arguments": {"seconds": 0.5}}))
    server.send({"jsonrpc": "2.0", "method": "notifications/unknown"})
    server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}})
    server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {"a": 1}}})
    server.send(b"\n   \n")
    assert server.ask(b'{"jsonrpc":"2.0","id":"s","method":"ping"}\r\n') == {
        "jsonrpc": "2.0", "id": "s", "result": {}}
    assert server.receive()["result"]["content"] == [{"type": "text", "text": "slept 0.5 s"}]
    echo = server.ask(_request(7, "tools/call", {"name": "echo", "arguments": {"text": "ok"}}))
    assert echo["result"]["content"] == [{"type": "text", "text": "ok"}]
    code, stderr = server.finish()
    assert code == 0 and "Traceback" not in stderr, stderr


def _peak_rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))  # type: ignore[union-attr]


def test_oversized_line_is_refused_without_memory_growth(server: StdioServer) -> None:
    assert "result" in server.ask(_request(0, "initialize", INIT))
    before = _peak_rss_kib(server.proc.pid) if Path("/proc").exists() else 0
    text = "x" * (32 * 1024 * 1024)
    huge = json.dumps(_request(77, "tools/call", {"name": "echo", "arguments": {"text": text}}))
    answer = server.ask(huge.encode() + b"\n")
    assert answer == _error(
        77, -32600, f"Invalid Request: message of {len(huge)} bytes exceeds the size limit")
    if before:
        growth_kib = _peak_rss_kib(server.proc.pid) - before
        assert growth_kib < 8 * 1024, f"peak memory grew by {growth_kib} KiB for a 32 MiB line"
    # An id placed last (Node SDK style) is found too; an unreadable one gets null.
    tail_style = '{"jsonrpc":"2.0","method":"ping","params":{"pad":"' + "y" * CAP + '"},"id":"late"}'
    assert server.ask(tail_style.encode() + b"\n")["id"] == "late"
    assert server.ask(b"z" * (CAP + 1) + b"\n")["id"] is None
    assert server.ask(_request(78, "ping")) == {"jsonrpc": "2.0", "id": 78, "result": {}}


def test_exits_0_when_stdin_closes_mid_call(server: StdioServer) -> None:
    assert "result" in server.ask(_request(0, "initialize", INIT))
    server.send(_request(1, "tools/call", {"name": "slow", "arguments": {"seconds": 30}}))
    code, stderr = server.finish()
    assert code == 0
    assert "Traceback" not in stderr and "Task was destroyed" not in stderr, stderr
