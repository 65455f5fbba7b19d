"""A loopback server that writes exact bytes: for the answers no HTTP server would write.

``RawServer`` runs in the test's own event loop (``asyncio.start_server`` on 127.0.0.1);
each test gives it a handler that reads requests and writes answers byte for byte, so
every case (chunked, close-delimited, a reset mid-answer, a stale keep-alive connection,
TLS) is exactly what the test says. It counts accepted connections and closes every one
on exit. For ordinary answers, ``testkit.fake_http`` is shorter.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import struct
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RawServer", "Received", "answer", "read_request", "reset"]


@dataclass
class Received:
    """One request as it arrived."""

    head: bytes
    """Request line and header lines, CRLF-separated, without the blank line."""
    body: bytes

    @property
    def request_line(self) -> str:
        return self.head.split(b"\r\n", 1)[0].decode()

    @property
    def headers(self) -> dict[str, str]:
        lines = self.head.decode("latin-1").split("\r\n")[1:]
        return {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}


async def read_request(reader: asyncio.StreamReader) -> Received | None:
    """The next request on a connection, or None when the client closed it."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    received = Received(head[:-4], b"")
    received.body = await reader.readexactly(int(received.headers.get("content-length", "0")))
    return received


def answer(body: bytes, *headers: str, status: str = "200 OK") -> bytes:
    """A sized answer: status line, Content-Length, ``headers`` ("Name: value"), body."""
    lines = [f"HTTP/1.1 {status}", "Content-Type: application/json", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP reset (SO_LINGER 0) instead of a FIN."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, "RawServer"], Awaitable[None]]


@dataclass
class RawServer:
    """A loopback server running ``handler`` on every connection; ``async with`` it."""

    handler: Handler
    tls: ssl.SSLContext | None = None
    accepts: int = 0
    requests: list[Received] = field(default_factory=list)
    client_closes: int = 0
    """Connections on which the client closed first (the server read EOF)."""
    alpn_seen: list[str | None] = field(default_factory=list)
    """The ALPN protocol of each TLS connection."""
    port: int = 0
    _closed: asyncio.Event = field(default_factory=asyncio.Event)
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    _server: asyncio.Server | None = None

    async def __aenter__(self) -> RawServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    def base_url(self, scheme: str = "http", host: str = "127.0.0.1") -> str:
        return f"{scheme}://{host}:{self.port}/v1"

    async def next_request(self, reader: asyncio.StreamReader) -> Received | None:
        """Read and record the next request; None (and counted) when the client closed."""
        received = await read_request(reader)
        if received is None:
            self.client_closes += 1
            self._closed.set()
        else:
            self.requests.append(received)
        return received

    async def client_closed(self, count: int, seconds: float = 5.0) -> None:
        """Wait until the client has closed ``count`` connections (the server read EOF)."""
        async with asyncio.timeout(seconds):
            while self.client_closes < count:
                self._closed.clear()
                await self._closed.wait()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepts += 1
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        tls = writer.get_extra_info("ssl_object")
        if tls is not None:
            self.alpn_seen.append(tls.selected_alpn_protocol())
        try:
            await self.handler(reader, writer, self)
        except (ConnectionError, ssl.SSLError):
            pass
        except asyncio.CancelledError:  # __aexit__ ends the handlers; end quietly (a cancelled
            pass  # handler task makes Python 3.11's start_server log a spurious error)
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
