"""The accepting side of ``httpserver``: a listening socket and the loop that accepts on it.

Written by hand rather than left to ``asyncio.start_server`` for the two moments an
exposed server meets: more connections than it will serve, and no file descriptor left
to accept one. Past the cap a new connection gets a complete ``503`` and is closed; the
client reads why. When ``accept`` itself fails for want of descriptors (EMFILE, ENFILE,
ENOBUFS, ENOMEM), the loop waits until one of its connections closes (or a second
passes) and tries again; asyncio's own loop logged a traceback for every pending
connection, again and again (30,000 in 10 s). Both are reported by a ``QuietLog``: one
warning, then at most one every ``LOG_INTERVAL`` seconds saying how often it recurred.

A bottom-layer module: it imports only ``errors`` and ``loopback``.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import socket
import time
from collections.abc import Callable
from typing import Final

from .errors import TransportError
from .loopback import url_host

__all__ = ["LOG_INTERVAL", "Listener", "QuietLog"]

log = logging.getLogger("toolrelay.httpserver")

LOG_INTERVAL: Final = 10.0
"""Seconds between two warnings about the same recurring trouble."""
_BACKLOG: Final = 128
_RETRY_AFTER: Final = 1.0  # seconds before accept is tried again when nothing closed meanwhile
_LINGER: Final = 2.0  # seconds a refused client has to read the 503 and hang up
_MAX_LINGERING: Final = 64  # refusals waiting for their client at once; past it they are closed at once
_OUT_OF_DESCRIPTORS: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
# A client that left before it was accepted, or a firewall's veto: that connection only.
_ONE_CONNECTION: Final = frozenset({errno.ECONNABORTED, errno.EPROTO, errno.EPERM, errno.EAGAIN})


class QuietLog:
    """Warnings about one recurring trouble: the first at once, then at most one per interval."""

    def __init__(self, interval: float = LOG_INTERVAL) -> None:
        self._interval = interval
        self._next = 0.0
        self._unsaid = 0

    def warn(self, text: str) -> None:
        now = time.monotonic()
        if now < self._next:
            self._unsaid += 1
            return
        again = f" (and {self._unsaid} more time(s) since the last message)" if self._unsaid else ""
        log.warning("%s%s", text, again)
        self._unsaid = 0
        self._next = now + self._interval


def _refusal(max_connections: int) -> bytes:
    body = f"too many open connections ({max_connections}); try again later\n".encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nretry-after: 1\r\n"
        f"connection: close\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


class Listener:
    """A listening socket, and ``accept_forever`` serving it until cancelled."""

    def __init__(self, sock: socket.socket, *, max_connections: int) -> None:
        self._sock = sock
        self._max = max_connections
        self._refusal = _refusal(max_connections)
        self._room = asyncio.Event()
        self._lingering: set[asyncio.Task[None]] = set()
        self._refusing = QuietLog()
        self._failing = QuietLog()

    @classmethod
    async def open(cls, host: str, port: int, *, max_connections: int) -> Listener:
        """Listen on ``host:port`` (0: any free port); ``TransportError`` when it cannot."""
        loop = asyncio.get_running_loop()
        try:
            family, kind, proto, _, address = (
                await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
            )[0]
            sock = socket.socket(family, kind, proto)
        except OSError as exc:
            raise _cannot_listen(host, port, exc) from None
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # as asyncio does: IPv6 only, IPv4 is another address
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(_BACKLOG)
            sock.setblocking(False)
        except OSError as exc:
            sock.close()
            raise _cannot_listen(host, port, exc) from None
        return cls(sock, max_connections=max_connections)

    @property
    def port(self) -> int:
        return int(self._sock.getsockname()[1])

    def connection_ended(self) -> None:
        """A connection closed: a descriptor is free, and the count below the cap."""
        self._room.set()

    async def accept_forever(
        self, serve: Callable[[socket.socket], None], open_now: Callable[[], int]
    ) -> None:
        """Hand each accepted socket to ``serve`` (which owns it from then on) while fewer
        than the cap are open; refuse the others. Returns only by cancellation."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                sock, _ = await loop.sock_accept(self._sock)
            except OSError as exc:
                if exc.errno not in _ONE_CONNECTION:
                    await self._wait_for_room(exc, open_now())
                continue
            if open_now() >= self._max:
                self._refuse(sock)
            else:
                serve(sock)

    async def _wait_for_room(self, exc: OSError, open_now: int) -> None:
        reason = (os.strerror(exc.errno) if exc.errno else str(exc)).lower()
        if exc.errno in _OUT_OF_DESCRIPTORS:
            self._failing.warn(f"cannot accept connections: {reason} ({open_now} open); "
                               "trying again as connections close")
        else:
            self._failing.warn(f"cannot accept a connection: {reason}; trying again")
        self._room.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_RETRY_AFTER):
                await self._room.wait()

    def _refuse(self, sock: socket.socket) -> None:
        self._refusing.warn(f"refusing connections: {self._max} are open, the most this server "
                            "serves at once (each new one gets 503 until some close)")
        if len(self._lingering) >= _MAX_LINGERING:
            with contextlib.suppress(OSError):
                sock.send(self._refusal)
            sock.close()
            return
        task = asyncio.ensure_future(self._linger(sock))
        self._lingering.add(task)
        task.add_done_callback(self._lingering.discard)

    async def _linger(self, sock: socket.socket) -> None:
        """Answer 503, then read what the client sends until it hangs up (or ``_LINGER``):
        closing with its request unread would reset the connection, and a reset can
        destroy the 503 before the client reads it."""
        loop = asyncio.get_running_loop()
        try:
            await loop.sock_sendall(sock, self._refusal)
            sock.shutdown(socket.SHUT_WR)
            async with asyncio.timeout(_LINGER):
                while await loop.sock_recv(sock, 65536):
                    pass
        except (OSError, TimeoutError):
            pass
        finally:
            sock.close()

    async def close(self) -> None:
        """Stop listening and end the refusals still lingering."""
        self._sock.close()
        lingering = list(self._lingering)
        for task in lingering:
            task.cancel()
        await asyncio.gather(*lingering, return_exceptions=True)


def _cannot_listen(host: str, port: int, exc: OSError) -> TransportError:
    reason = (os.strerror(exc.errno) if exc.errno else str(exc)).lower()  # asyncio's text repeats the address
    hint = " (choose another port, or 0 for any free one)" if exc.errno == errno.EADDRINUSE else ""
    return TransportError(f"cannot listen on {url_host(host)}:{port}: {reason}{hint}")
