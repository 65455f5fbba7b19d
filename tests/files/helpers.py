"""Helpers for the file server tests: a raw stdio driver and the file trees they read.

``RawClient`` drives ``toolrelay files`` as a real subprocess with the project's own
framing (``LineFramer``) and JSON-RPC codec: no SDK in between, so tests see the exact
wire messages. It answers the server's ``roots/list`` requests from ``roots`` when it
declares the roots capability.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testkit.processes import kill_tree, spawn
from toolrelay.protocol import jsonrpc
from toolrelay.protocol.framing import LineFramer
from toolrelay.protocol.jsonrpc import ErrorResponse, Message, Request, Response

SECRET = "TOOLRELAY-SECRET-MARKER-7f3a"
DENIED = "Access denied - path outside allowed directories"
FILES_CMD = [sys.executable, "-m", "toolrelay", "files"]


class RawClient:
    """One ``toolrelay files`` process (or ``command``, another stdio server), driven line by line."""

    def __init__(
        self,
        *args: str,
        roots: list[str] | None = None,
        env: dict[str, str] | None = None,
        version: str = "2025-06-18",
        command: list[str] | None = None,
    ) -> None:
        self.roots = roots
        self.roots_requests = 0
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        self.proc = spawn(
            [*(command or FILES_CMD), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, env={**os.environ, **(env or {})},
        )
        self._framer = LineFramer(64 * 1024 * 1024)
        self._queue: list[Message] = []
        self._ids = itertools.count(1)
        self.init = self.request("initialize", {
            "protocolVersion": version,
            "capabilities": {"roots": {"listChanged": True}} if roots is not None else {},
            "clientInfo": {"name": "raw-test", "version": "1"},
        })
        self.notify("notifications/initialized")

    # -- wire -------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        # ASCII-escaped JSON, so a test can send what jsonrpc.encode refuses (lone surrogates)
        self.proc.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.send(jsonrpc.notification(method, params))

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 20) -> Response:
        """Send a request; its Response (AssertionError on a JSON-RPC error)."""
        answer = self.exchange(method, params, timeout)
        assert isinstance(answer, Response), answer
        return answer

    def exchange(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = 20
    ) -> Response | ErrorResponse:
        mcp_id = next(self._ids)
        self.send(jsonrpc.request(mcp_id, method, params))
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(deadline)
            if isinstance(message, (Response, ErrorResponse)) and message.id == mcp_id:
                return message
            if isinstance(message, Request):
                self._answer(message)

    def _answer(self, request: Request) -> None:
        if request.method == "roots/list" and self.roots is not None:
            self.roots_requests += 1
            self.send(jsonrpc.response(request.id, {"roots": [{"uri": uri} for uri in self.roots]}))
        else:
            self.send(jsonrpc.error_response(request.id, -32601, f"Method not found: {request.method}"))

    def _next(self, deadline: float) -> Message:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while not self._queue:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError(f"no answer from the server; stderr: {self.stderr()}")
            data = os.read(fd, 1 << 20)
            if not data:
                raise EOFError(f"server closed stdout; stderr: {self.stderr()}")
            for line in self._framer.feed(data):
                assert isinstance(line, bytes), "oversized line from the server"
                self._queue.append(jsonrpc.decode(line))
        return self._queue.pop(0)

    # -- tools ------------------------------------------------------------------------

    def call(self, name: str, arguments: dict[str, Any] | None = None, timeout: float = 20) -> dict[str, Any]:
        """The CallToolResult of a tools/call."""
        params: dict[str, Any] = {"name": name, "arguments": arguments if arguments is not None else {}}
        return self.request("tools/call", params, timeout).result

    def text(self, name: str, arguments: dict[str, Any], timeout: float = 20) -> str:
        """The text of a successful call (AssertionError on isError)."""
        result = self.call(name, arguments, timeout)
        assert not result.get("isError"), result
        return str(result["content"][0]["text"])

    def error(self, name: str, arguments: dict[str, Any]) -> str:
        """The message of a failed call (AssertionError unless isError)."""
        result = self.call(name, arguments)
        assert result.get("isError") is True, result
        assert "structuredContent" not in result
        return str(result["content"][0]["text"])

    def set_roots(self, roots: list[str]) -> None:
        self.roots = roots
        self.notify("notifications/roots/list_changed")

    # -- end --------------------------------------------------------------------------

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def close(self) -> int:
        """Close stdin (the MCP shutdown), wait; the exit code."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            kill_tree(self.proc)
            code = self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._stderr.close()
        return code

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def status_kb(pid: int) -> dict[str, int]:
    """VmRSS / VmHWM of a live process, in kB (Linux /proc)."""
    found: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0])
    return found


def bytes_read(pid: int) -> int:
    """Bytes the process has read with read()/pread() so far (/proc/PID/io rchar)."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/PID/io")


@dataclass(frozen=True, slots=True)
class Tree:
    """The attack tree: one allowed root and, beside it, outside places holding SECRET."""

    base: Path
    root: Path
    outside: Path
    home: Path


def build_tree(base: Path) -> Tree:
    """An allowed root full of traps; every outside file holds SECRET."""
    root, outside, home = base / "root", base / "outside", base / "home"
    secret_folders = (outside, home, base / "root-evil", base / "root'", base / "root ")
    for folder in (root / "sub" / "deeper", *secret_folders):
        folder.mkdir(parents=True)
    for folder in secret_folders:
        (folder / "secret.txt").write_text(f"{SECRET}\n")
    (root / "notes.txt").write_text("one\ntwo\nthree\n")
    (root / "sub" / "inner.txt").write_text("inner\n")
    links = {
        "link_out": outside / "secret.txt",
        "link_chain1": root / "link_chain2",
        "link_chain2": root / "sub" / "link_chain3",
        "link_dir_out": outside,
        "loop_a": root / "loop_b",
        "loop_b": root / "loop_a",
        "dangling_out": outside / "missing.txt",
        "zero": Path("/dev/zero"),
        "link_in": root / "notes.txt",
        "link_dir_in": root / "sub" / "deeper",
    }
    (root / "sub" / "link_chain3").symlink_to(outside / "secret.txt")
    for name, target in links.items():
        (root / name).symlink_to(target)
    os.mkfifo(root / "fifo")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(root / "sock"))
    return Tree(base=base, root=root, outside=outside, home=home)
