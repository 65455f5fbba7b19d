"""Serve a ToolService over stdio: newline-delimited JSON-RPC on stdin/stdout.

stdout carries only protocol messages; logs go to stderr. The session ends when stdin
closes (the client's shutdown signal in the MCP lifecycle).
"""

from __future__ import annotations

import asyncio
import os
import sys

from ..errors import TransportError
from ..protocol import jsonrpc
from ..protocol.framing import DEFAULT_MAX_MESSAGE_BYTES, LineFramer
from ..protocol.jsonrpc import JSONObject
from .app import ServerSession, ToolService

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
    service: ToolService, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
) -> None:
    """Run one session on this process's stdin/stdout until stdin closes."""
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

    session = ServerSession(service, send)
    done: asyncio.Future[None] = loop.create_future()
    framer = LineFramer(max_message_bytes)
    transport, _ = await loop.connect_read_pipe(
        lambda: _StdinProtocol(session, framer, done), os.fdopen(sys.stdin.fileno(), "rb", 0, closefd=False)
    )
    try:
        await done
    finally:
        transport.close()
        session.close(TransportError("stdin closed"))
