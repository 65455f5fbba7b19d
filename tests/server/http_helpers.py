"""Helpers for the HTTP server tests: a server on its own thread, a subprocess server,
and a few raw Streamable HTTP calls made with httpx2 (no MCP SDK in between)."""

from __future__ import annotations

import asyncio
import fcntl
import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import h11
import httpx2
import pytest
from echo_service import EchoService

from toolrelay.server.http import serve_http

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CONFORMANCE_PACKAGE = "@modelcontextprotocol/conformance@0.1.16"
NODE22_PACKAGE = "node@22"  # the suite needs Node >= 22; npm ships it as a package
ACCEPT_BOTH = "application/json, text/event-stream"
BASE_HEADERS = {"accept": ACCEPT_BOTH, "content-type": "application/json"}
NEGOTIATED = "2025-06-18"


class ServerThread:
    """``serve_http`` on its own event loop in a background thread."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._ready: Future[str] = Future()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.error: BaseException | None = None

    def start(self) -> str:
        self._thread.start()
        return self._ready.result(timeout=10)

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported by stop()
            self.error = exc
            if not self._ready.done():
                self._ready.set_exception(exc)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.ensure_future(
            serve_http(EchoService(), on_ready=self._ready.set_result, **self._options)
        )
        with suppress(asyncio.CancelledError):
            await self._task

    def stop(self, timeout: float = 10.0) -> None:
        """Cancel the server and wait for it; raise whatever it raised."""
        if self._loop is not None and self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the server did not stop after cancellation"
        if self.error is not None:
            raise self.error


@contextmanager
def running_server(**options: Any) -> Iterator[str]:
    server = ServerThread(**options)
    url = server.start()
    try:
        yield url
    finally:
        server.stop()


@contextmanager
def server_process(*args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``echo_http_server.py`` as a subprocess; yields (url, process); stops it with SIGTERM."""
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "echo_http_server.py"), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), f"no URL from the server: {proc.stderr.read()}"
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(10)
        proc.stdout.close()
        assert proc.stderr is not None
        proc.stderr.close()


@contextmanager
def files_server_process(root: Path) -> Iterator[str]:
    """``toolrelay files ROOT --http 0`` as a subprocess; yields its URL; stops it with SIGINT."""
    proc = subprocess.Popen([sys.executable, "-m", "toolrelay", "files", str(root), "--http", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None and proc.stdout is not None
    try:
        lines = []
        for line in proc.stderr:  # the URL is announced on stderr
            lines.append(line)
            if found := re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line):
                break
        else:
            pytest.fail(f"toolrelay files --http printed no URL: {''.join(lines)}")
        yield found.group(1)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(10)
        proc.stdout.close()
        proc.stderr.close()


def install_conformance_suite() -> list[str] | str:
    """The command that runs the MCP conformance suite (installed once into the cache), or
    why it cannot be had."""
    npm = shutil.which("npm")
    if npm is None:
        return "npm not found on PATH: cannot install the MCP conformance suite"
    prefix = REPO / ".toolrelay-cache" / "conformance"
    node = prefix / "node_modules" / ".bin" / "node"
    index = prefix / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    prefix.mkdir(parents=True, exist_ok=True)
    with (prefix / ".install-lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test workers install once, not at once
        if not (node.exists() and index.exists()):
            proc = subprocess.run(
                [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error",
                 CONFORMANCE_PACKAGE, NODE22_PACKAGE],
                capture_output=True, text=True, timeout=300,
            )
            if proc.returncode != 0 or not (node.exists() and index.exists()):
                why = proc.stderr.strip()[-500:]
                return f"npm install {CONFORMANCE_PACKAGE} {NODE22_PACKAGE} failed: {why}"
    return [str(node), str(index)]


def init_message(msg_id: int | str = 0, *, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0", "id": msg_id, "method": "initialize",
        "params": {"protocolVersion": NEGOTIATED, "capabilities": capabilities or {},
                   "clientInfo": {"name": "raw-test", "version": "0"}},
    }


def post(
    client: httpx2.Client, url: str, message: dict[str, Any] | bytes, *,
    session: str | None = None, headers: dict[str, str] | None = None,
) -> httpx2.Response:
    """POST one message (a dict is JSON-encoded) with the headers a good client sends."""
    all_headers = dict(BASE_HEADERS)
    if session is not None:
        all_headers["mcp-session-id"] = session
        all_headers["mcp-protocol-version"] = NEGOTIATED
    all_headers.update(headers or {})
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return client.post(url, content=body, headers=all_headers)


def open_session(client: httpx2.Client, url: str, *, capabilities: dict[str, Any] | None = None) -> str:
    """initialize + notifications/initialized; the session id."""
    reply = post(client, url, init_message(capabilities=capabilities))
    assert reply.status_code == 200, reply.text
    session = reply.headers["mcp-session-id"]
    done = post(client, url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session=session)
    assert done.status_code == 202, done.text
    return session


def rpc_error(reply: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC error object of an error reply (checks it is a JSON-RPC error body)."""
    assert reply.headers["content-type"] == "application/json"
    body = reply.json()
    assert body["jsonrpc"] == "2.0" and "result" not in body
    error: dict[str, Any] = body["error"]
    return error


def sse_messages(text: str) -> list[dict[str, Any]]:
    """The JSON messages of an SSE body (``data:`` lines of ``message`` events)."""
    messages = []
    for block in text.split("\n\n"):
        data = [line[len("data: "):] for line in block.splitlines() if line.startswith("data: ")]
        if data:
            messages.append(json.loads("\n".join(data)))
    return messages


class RawConnection:
    """One TCP connection speaking HTTP/1.1 by hand (h11 client side): for keep-alive,
    malformed requests and clients that vanish mid-request."""

    def __init__(self, url: str) -> None:
        address = httpx2.URL(url)
        self.target = address.raw_path
        self.host = f"{address.host}:{address.port}"
        self.sock = socket.create_connection((address.host, address.port), timeout=10)
        self._conn = h11.Connection(h11.CLIENT)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RawConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read_until(self, marker: bytes) -> bytes:
        """Bytes received until ``marker`` has arrived (they may come in several pieces)."""
        data = b""
        while marker not in data:
            chunk = self.sock.recv(65536)
            assert chunk, f"connection closed before {marker!r}: {data!r}"
            data += chunk
        return data

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send_head(self, method: str, headers: dict[str, str], *, content_length: int | None = None) -> None:
        all_headers = {"host": self.host, **headers}
        if content_length is not None:
            all_headers["content-length"] = str(content_length)
        event = h11.Request(method=method, target=self.target, headers=list(all_headers.items()))
        self.sock.sendall(self._conn.send(event))

    def request(
        self, method: str, headers: dict[str, str], body: bytes = b""
    ) -> tuple[int, dict[str, str], bytes]:
        """Send a whole request; read the whole response; ready for the next one."""
        if self._conn.our_state is h11.DONE and self._conn.their_state is h11.DONE:
            self._conn.start_next_cycle()
        self.send_head(method, headers, content_length=len(body))
        self.sock.sendall(self._conn.send(h11.Data(data=body)) + self._conn.send(h11.EndOfMessage()))
        return self.read_response()

    def read_response(self) -> tuple[int, dict[str, str], bytes]:
        status, headers, body = 0, {}, bytearray()
        while True:
            event = self._conn.next_event()
            if event is h11.NEED_DATA:
                self._conn.receive_data(self.sock.recv(65536))
            elif isinstance(event, h11.InformationalResponse):
                continue
            elif isinstance(event, h11.Response):
                status = event.status_code
                headers = {k.decode(): v.decode() for k, v in event.headers}
            elif isinstance(event, h11.Data):
                body += event.data
            else:
                return status, headers, bytes(body)

    def closed_by_server(self) -> bool:
        """Whether the server closed this connection (EOF within the socket timeout)."""
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True
