"""Internal: one keep-alive HTTP/1.1 connection of the lean model client (``http.py``).

``Connection`` is the socket side (an asyncio protocol) and its framing state (``_http11``):
it writes one request and reads its answer's head, then its body whole (``body``) or piece
by piece as it arrives (``chunk``). What goes wrong is raised as an ``_http_failures``
kind; a connection closed before a single byte of answer raises ``NothingReceived``, which
the pool resends once on a new connection when the closed one was reused (``http.py``).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Final, cast

from ._http11 import AnswerParser
from ._http_failures import (
    CLOSED_WITHOUT_ANSWER,
    AnswerRejected,
    ConnectionClosed,
    NotHttp,
    socket_reason,
)
from .encoding import size_text

__all__ = ["KEEPALIVE_EXPIRY", "Connection", "NothingReceived"]

KEEPALIVE_EXPIRY: Final = 30.0
"""Seconds an idle connection is kept; older ones may have been dropped silently (NAT)."""
_INBOX_LIMIT: Final = 256 * 1024  # bytes received and not yet parsed before reading pauses
_CLOSE_WAIT: Final = 1.0
_READ_SIZE: Final = 64 * 1024
"""Bytes read from the socket at most at once, into the thread's one read buffer."""
_READS = threading.local()
"""The thread's read buffer: every connection of its event loop reads into it and copies
what came out at once (asyncio reads and hands over in one step), where ``recv`` would
allocate (and the C library map and unmap) 256 KiB for every read."""


class NothingReceived(ConnectionClosed):
    """Closed or reset before a single byte of answer: on a reused connection, resent once."""



def _read_buffer() -> memoryview:
    view: memoryview | None = getattr(_READS, "view", None)
    if view is None:
        view = _READS.view = memoryview(bytearray(_READ_SIZE))
    return view


class Connection(asyncio.BufferedProtocol):
    """One open connection: the socket side (an asyncio protocol) and its framing state.

    The bytes that arrive wait in ``_inbox`` until the exchange parses them; bytes
    that arrive while no exchange runs (a 408 before the server closes, garbage) make the
    connection unusable, so the next request never reads them as its answer."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._transport: asyncio.Transport | None = None
        self._answer = AnswerParser()
        self._inbox: list[bytes] = []
        self._inbox_size = 0
        self._waiter: asyncio.Future[None] | None = None
        self._ended = loop.create_future()
        self._eof = False
        self._lost: BaseException | None = None
        self._spoke_while_idle = False
        self._busy = False
        self._body_ended = False
        self._received = 0
        self.served = 0
        """Exchanges completed on this connection (> 0: a reused keep-alive connection)."""
        self.idle_since = 0.0
        self.deadline: float | None = None
        """Loop time by which the exchange must end (``HttpClient``'s one timer checks it)."""
        self._expired = False

    # -- asyncio protocol callbacks --

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)

    def get_buffer(self, sizehint: int) -> memoryview:
        return _read_buffer()

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(bytes(_read_buffer()[:nbytes]))

    def data_received(self, data: bytes) -> None:
        if not self._busy:
            self._spoke_while_idle = True
        self._inbox.append(data)
        self._inbox_size += len(data)
        if self._inbox_size > _INBOX_LIMIT and self._transport is not None:
            self._transport.pause_reading()  # the exchange has not caught up: let TCP push back
        self._wake()

    def eof_received(self) -> bool:
        self._eof = True
        self._wake()
        return False  # nothing more to say either: close

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        self._lost = exc
        if not self._ended.done():
            self._ended.set_result(None)
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def expire(self) -> None:
        """The exchange's deadline passed: its wait (now or next) raises ``TimeoutError``."""
        self._expired = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(TimeoutError())

    # -- the exchange --

    def reusable(self, now: float) -> bool:
        """Idle, recent, and the server neither closed it nor spoke while it waited."""
        return not (self._eof or self._spoke_while_idle or now - self.idle_since >= KEEPALIVE_EXPIRY)

    async def start(self, request: bytes) -> tuple[int, dict[str, str]]:
        """Send ``request`` (head and body, ``_http11.RequestHead``); the answer's status and
        headers (names lower-case)."""
        self._busy, self._received, self._body_ended, self._expired = True, 0, False, False
        self._write(request)
        answer = self._answer
        while True:
            head = answer.head()
            if head is None:
                data = await self._read()
                if not data:  # the end, mid-head
                    raise ConnectionClosed(CLOSED_WITHOUT_ANSWER)
                answer.feed(data)
            elif head.status >= 200:
                self._body_ended = answer.ended
                return head.status, head.headers
            elif head.status == 101:  # toolrelay never asks to switch protocols
                raise NotHttp("the answer is not valid HTTP/1.1 (an unasked 101 Switching Protocols)")

    async def body(self, headers: dict[str, str], cap: int) -> bytes:
        """The rest of the answer, whole (not yet decoded); above ``cap`` it is refused."""
        announced = headers.get("content-length", "")
        if announced.isdigit() and int(announced) > cap:
            raise AnswerRejected(f"the answer is larger than {size_text(cap)} (Content-Length: {announced})")
        chunks: list[bytes] = []
        size = 0
        while (data := await self.chunk()) is not None:
            size += len(data)
            if size > cap:
                raise AnswerRejected(f"the answer is larger than {size_text(cap)}")
            chunks.append(data)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def chunk(self) -> bytes | None:
        """The answer's body bytes that have arrived, waiting for some when none have (not
        decoded); None at its end. Everything already received comes at once: a stream of
        many small HTTP chunks costs one wake-up per read, not one per chunk."""
        answer = self._answer
        while not self._body_ended:
            if self._inbox:
                answer.feed(self._take_inbox())
            data = answer.body()
            self._body_ended = answer.ended
            if data:
                return data
            if self._body_ended:
                return None
            more = await self._read()
            if not more:  # the end of the connection: the end of a close-delimited body, or too soon
                data = answer.end_of_input()
                self._body_ended = True
                return data or None
            answer.feed(more)
        return None

    def next_cycle(self) -> bool:
        """After a complete exchange: ready for another one (keep-alive), or must close."""
        self._busy = False
        answer = self._answer
        if not (self._body_ended and answer.keep_alive) or self._eof:
            return False
        if self._inbox or answer.pending:  # more than the answer came: never trust it
            return False
        answer.next_answer()
        self.served += 1
        return True

    def _write(self, data: bytes) -> None:
        if self._eof or self._transport is None:  # closed as the request went out
            raise self._closed_error() from self._lost
        self._transport.write(data)  # a failed send ends the connection: _read raises

    def _closed_error(self) -> ConnectionClosed:
        # A reset or a TLS failure says more than "closed"; a plain close says nothing more.
        reason = (socket_reason(self._lost) if self._lost else None) or CLOSED_WITHOUT_ANSWER
        if self._received == 0:
            return NothingReceived(reason)
        return ConnectionClosed(reason)

    async def _read(self) -> bytes:
        """The bytes received so far; b"" at the end; waits when there are none yet."""
        while not self._inbox:
            if self._lost is not None or (self._eof and self._received == 0):  # reset, TLS failure, EOF
                raise self._closed_error() from self._lost
            if self._eof:
                return b""  # the end of a close-delimited answer (or the parser finds it incomplete)
            if self._expired:
                raise TimeoutError()
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._take_inbox()

    def _take_inbox(self) -> bytes:
        """The bytes received and not yet parsed (there are some)."""
        data = b"".join(self._inbox) if len(self._inbox) > 1 else self._inbox[0]
        self._inbox.clear()
        self._inbox_size = 0
        if self._transport is not None and not self._eof:
            self._transport.resume_reading()
        self._received += len(data)
        return data

    def abort(self) -> None:
        """Drop the connection at once (its state is unknown: a failed or cancelled exchange)."""
        if self._transport is not None:
            self._transport.abort()

    async def close(self) -> None:
        """Close politely (TLS close_notify), but never wait long for the server."""
        if self._transport is None:
            return
        self._transport.close()
        try:
            async with asyncio.timeout(_CLOSE_WAIT):
                await asyncio.shield(self._ended)
        except TimeoutError:
            self.abort()

