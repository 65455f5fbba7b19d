"""Serve a ToolService over stdio: newline-delimited JSON-RPC on stdin/stdout, in the
era the client's first request chooses (``ServerSession``: the handshake, or 2026-07-28).

stdout carries only protocol messages; logs go to stderr. The session ends when stdin
closes (the client's shutdown signal in the MCP lifecycle).
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading
from collections.abc import Callable

from ..errors import TransportError
from ..protocol import jsonrpc
from ..protocol.framing import DEFAULT_MAX_MESSAGE_BYTES, LineFramer
from ..protocol.jsonrpc import JSONObject
from .app import ServerSession, ToolService
from .stateless import ModernServer

__all__ = ["serve_stdio"]


class _StdinProtocol(asyncio.Protocol):
    def __init__(self, session: ServerSession, framer: LineFramer, done: asyncio.Future[None]):
        self._session = session
        self._framer = framer
        self._done = done

    def data_received(self, data: bytes) -> None:
        for line in self._framer.feed(data):
            self._session.receive_line(line)

    def eof_received(self) -> bool | None:
        if not self._done.done():
            self._done.set_result(None)
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._done.done():
            self._done.set_result(None)


async def serve_stdio(
    service: ToolService, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    on_session: Callable[[ServerSession], None] | None = None,
) -> None:
    """Run one session on this process's stdin/stdout until stdin closes (``on_session``
    is given the session once it exists: a proxy notifies its client through it)."""
    loop = asyncio.get_running_loop()
    out_fd = sys.stdout.fileno()
    os.set_blocking(out_fd, True)

    def send(message: JSONObject) -> None:
        data = jsonrpc.encode(message) + b"\n"
        try:
            view = memoryview(data)
            while view:
                written = os.write(out_fd, view)
                view = view[written:]
        except (BrokenPipeError, OSError) as exc:
            raise TransportError(f"stdout closed: {exc}") from None

    session = ServerSession(service, send, modern=ModernServer(service))
    if on_session is not None:
        on_session(session)
    done: asyncio.Future[None] = loop.create_future()
    protocol = _StdinProtocol(session, LineFramer(max_message_bytes), done)
    in_fd = sys.stdin.fileno()
    if _is_pipe_or_socket(in_fd):
        transport, _ = await loop.connect_read_pipe(
            lambda: protocol, os.fdopen(in_fd, "rb", 0, closefd=False)
        )
        stop = transport.close
    else:
        stop = _read_in_thread(loop, in_fd, protocol)
    try:
        await done
    finally:
        stop()
        session.close(TransportError("stdin closed"))


def _is_pipe_or_socket(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _read_in_thread(
    loop: asyncio.AbstractEventLoop, fd: int, protocol: _StdinProtocol
) -> Callable[[], None]:
    """Read a file, a terminal or /dev/null as stdin: the event loop cannot watch those
    (epoll never reports a regular file or /dev/null ready), so a thread reads blocking."""

    def pump() -> None:
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            if not data:
                loop.call_soon_threadsafe(protocol.eof_received)
                return
            loop.call_soon_threadsafe(protocol.data_received, data)

    threading.Thread(target=pump, name="toolrelay-stdin", daemon=True).start()
    return lambda: None  # the daemon thread ends with the process (or at EOF)
