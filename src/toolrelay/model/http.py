"""A lean HTTP/1.1 client for the model endpoint: an asyncio protocol for I/O, its own
framing for HTTP (``_http11``).

The model client posts one JSON body and reads one JSON answer per turn; a general HTTP
stack (httpx2 → httpcore2 → anyio → h11) spent ~0.9 ms of CPU per POST on loopback, about
two thirds of the relay loop's own cost, and h11 alone, once the stack was gone, was the
largest single part of a turn (bench/README.md). This client does only what that POST needs:

- keep-alive connections pooled per (scheme, host, port): an idle one is reused, a new one
  is opened when all are busy, at most ``max_idle`` wait per origin, idle ones older than
  ``KEEPALIVE_EXPIRY`` are dropped; ``aclose`` closes every one;
- the request is written in one piece with a ``Content-Length``; answers may be sized,
  chunked or close-delimited; ``Connection: close`` from the server is honoured;
- https with ``ssl.create_default_context()`` (the system CA store; ``SSL_CERT_FILE`` and
  ``SSL_CERT_DIR`` as the ssl module reads them), SNI and ALPN ``http/1.1``;
- a connect timeout and one timeout for each exchange (write the request, read the whole
  answer); an answer above ``max_answer_bytes`` is refused, never buffered; no
  ``Accept-Encoding`` is sent, and a gzip or deflate answer sent anyway is decoded;
- a streamed answer (server-sent events) is handed over once its head has arrived
  (``open``), and its body read as it arrives (``OpenAnswer.chunks``), each read within
  the timeout of the one before, so a long stream lives as long as it keeps talking.

One retry happens here: a request written to a *reused* keep-alive connection that ends
(EOF or reset) before a single byte of answer arrives is sent once more on a new
connection. That is the race every keep-alive client meets (RFC 9112 §9.3.1): the server
closed the idle connection at its keep-alive timeout while the request was on its way, so
it never read it. A connection the server closed, or spoke on, while it sat idle is never
reused in the first place; the retry covers the close that crosses the request on the
wire. Resending is safe for this POST: had the server read it after all, the only effect
of creating a response twice is its cost, and the model client retries a reset
connection with backoff anyway. Any other failure is raised as one of the internal
``_http_failures`` kinds, with its reason in words; the model client turns them into
``errors.py``'s ``ModelError`` classes. Proxies are not spoken here: ``http_choice.py``
sends proxied requests with httpx2.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from ..loopback import url_host
from ._connection import Connection, NothingReceived
from ._http11 import RequestHead
from ._http_failures import (
    ConnectFailed,
    ConnectTimeout,
    ReadTimeout,
    socket_reason,
)
from .encoding import StreamDecoder, decode_content, size_text

_NothingReceived = NothingReceived  # the name the tests and the retry below use

__all__ = [
    "MAX_ANSWER_BYTES",
    "HttpAnswer",
    "HttpClient",
    "OpenAnswer",
    "Target",
    "decode_content",
    "size_text",
]

MAX_ANSWER_BYTES: Final = 64 * 1024 * 1024
MAX_IDLE_PER_ORIGIN: Final = 32
"""Idle keep-alive connections kept per origin: a batch's -j tasks reuse theirs (with 4,
a -j 32 batch reconnected for ~40% of its requests)."""
_HAPPY_EYEBALLS_DELAY: Final = 0.25  # RFC 8305: try the next address if one hangs (broken IPv6)

Origin = tuple[str, str, int]


# -- values -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """Where requests go, parsed once: the origin and the request target."""

    url: str
    scheme: str
    host: str
    port: int
    path: str
    """Path and query, as sent in the request line."""
    host_header: str

    @classmethod
    def parse(cls, url: str) -> Target:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http:// or https:// URL: {url!r}")
        host = parts.hostname
        shown = url_host(host)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        host_header = shown if parts.port is None else f"{shown}:{parts.port}"
        return cls(url=url, scheme=parts.scheme, host=host, port=port, path=path, host_header=host_header)

    @property
    def origin(self) -> Origin:
        return (self.scheme, self.host, self.port)


@dataclass(slots=True, kw_only=True)
class HttpAnswer:
    """One answer, complete."""

    status: int
    headers: dict[str, str]
    """Names lower-case; a repeated header's values joined with ", "."""
    body: bytes
    """De-chunked and decoded: the bytes of the answer's content."""


class OpenAnswer:
    """An answer whose head has arrived (``HttpClient.open``); its body still to read."""

    def __init__(
        self, connection: Connection, status: int, headers: dict[str, str], client: HttpClient
    ) -> None:
        self.status = status
        self.headers = headers
        """Names lower-case; a repeated header's values joined with ", "."""
        self.complete = False
        """The body was read to its end (the connection may carry another request)."""
        self._connection = connection
        self._timeout = client.timeout
        self._cap = client.max_answer_bytes

    async def read(self) -> bytes:
        """The whole body, decoded, within the timeout; above the cap it is refused."""
        try:
            async with asyncio.timeout(self._timeout):
                body = await self._connection.body(self.headers, self._cap)
        except TimeoutError as exc:
            raise ReadTimeout(self._timeout) from exc
        self.complete = True
        return decode_content(body, self.headers.get("content-encoding"), self._cap)

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body, decoded, as it arrives: each piece within the timeout of the one before
        (a stalled answer ends with ``ReadTimeout``; a long but live one does not). The
        total is not capped here: the reader counts what it keeps."""
        decoder = StreamDecoder(self.headers.get("content-encoding"), cap=2**62)
        while True:
            try:
                async with asyncio.timeout(self._timeout):
                    data = await self._connection.chunk()
            except TimeoutError as exc:
                raise ReadTimeout(self._timeout) from exc
            if data is None:
                self.complete = True
                return
            decoded = decoder.feed(data)
            if decoded:
                yield decoded


# -- the pool ---------------------------------------------------------------------------------


class HttpClient:
    """POSTs over keep-alive HTTP/1.1 connections, pooled per (scheme, host, port)."""

    def __init__(
        self,
        *,
        timeout: float,
        connect_timeout: float,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        max_idle: int = MAX_IDLE_PER_ORIGIN,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_answer_bytes = max_answer_bytes
        self._max_idle = max_idle
        self._tls = tls
        self._idle: dict[Origin, list[Connection]] = {}
        self._busy: set[Connection] = set()
        self._closed = False
        self._heads: dict[tuple[str, str, tuple[tuple[str, str], ...]], RequestHead] = {}
        """Each (target, headers)'s request head, validated and encoded once."""
        # One timer for every post's deadline, armed for the earliest: a timeout per request
        # (asyncio.timeout: a timer made, then cancelled) cost more than the HTTP framing.
        self._watchdog: asyncio.TimerHandle | None = None
        self._watchdog_at = 0.0

    async def post(self, target: Target, headers: Sequence[tuple[str, str]], content: bytes) -> HttpAnswer:
        """POST ``content`` to ``target`` with ``headers`` (Host and Content-Length are added);
        the whole answer, within the timeout."""
        request = self._request(target, headers, content)
        connection = self._take_idle(target.origin)
        if connection is not None:
            try:
                return await self._exchange(connection, target, request)
            except _NothingReceived:
                if self._closed:
                    raise
                # the server closed it as the request went out: resend once (module docstring)
        connection = await self._connect(target)
        return await self._exchange(connection, target, request)

    @contextlib.asynccontextmanager
    async def open(
        self, target: Target, headers: Sequence[tuple[str, str]], content: bytes
    ) -> AsyncIterator[OpenAnswer]:
        """POST as ``post`` does, but hand over the answer once its head has arrived (within
        the timeout): its body is read whole (``read``) or as it arrives (``chunks``). A body
        not read to its end when the block exits closes the connection."""
        request = self._request(target, headers, content)
        connection = self._take_idle(target.origin)
        status: tuple[int, dict[str, str]] | None = None
        if connection is not None:
            try:
                status = await self._head(connection, request)
            except _NothingReceived:
                if self._closed:
                    raise
        if status is None:
            connection = await self._connect(target)
            status = await self._head(connection, request)
        assert connection is not None
        answer = OpenAnswer(connection, status[0], status[1], self)
        try:
            yield answer
        finally:
            self._busy.discard(connection)
            await self._release(target.origin, connection, complete=answer.complete)

    async def aclose(self) -> None:
        """Close every connection (idle ones politely, busy ones at once)."""
        self._closed = True
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        idle = [connection for pool in self._idle.values() for connection in pool]
        self._idle.clear()
        for connection in self._busy:
            connection.abort()
        await asyncio.gather(*(connection.close() for connection in idle))

    async def __aenter__(self) -> HttpClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _request(self, target: Target, headers: Sequence[tuple[str, str]], content: bytes) -> bytes:
        """The request's bytes: its head (built once per target and headers) and ``content``;
        a header HTTP/1.1 forbids raises ``RequestRejected`` (nothing is sent)."""
        key = (target.path, target.host_header, tuple(headers))
        head = self._heads.get(key)
        if head is None:
            head = self._heads[key] = RequestHead(target.path, target.host_header, headers)
        return head.request(content)

    def _take_idle(self, origin: Origin) -> Connection | None:
        pool = self._idle.get(origin)
        now = asyncio.get_running_loop().time()
        while pool:
            connection = pool.pop()
            if connection.reusable(now):
                return connection
            connection.abort()
        return None

    async def _exchange(self, connection: Connection, target: Target, request: bytes) -> HttpAnswer:
        self._busy.add(connection)
        self._watch(connection)
        complete = False
        try:
            try:
                status, headers = await connection.start(request)
                body = await connection.body(headers, self.max_answer_bytes)
            except TimeoutError as exc:  # the deadline passed (``expire``)
                raise ReadTimeout(self.timeout) from exc
            complete = True
        finally:
            connection.deadline = None
            self._busy.discard(connection)
            await self._release(target.origin, connection, complete=complete)
        body = decode_content(body, headers.get("content-encoding"), self.max_answer_bytes)
        return HttpAnswer(status=status, headers=headers, body=body)

    def _watch(self, connection: Connection) -> None:
        """Give the exchange its deadline; the timer is re-armed only for an earlier one."""
        loop = asyncio.get_running_loop()
        connection.deadline = deadline = loop.time() + self.timeout
        if self._watchdog is None or deadline < self._watchdog_at:
            if self._watchdog is not None:
                self._watchdog.cancel()
            self._watchdog, self._watchdog_at = loop.call_at(deadline, self._check_deadlines, loop), deadline

    def _check_deadlines(self, loop: asyncio.AbstractEventLoop) -> None:
        """Expire the exchanges whose deadline passed; wait for the next earliest one."""
        self._watchdog = None
        now = loop.time()
        later = []
        for connection in self._busy:
            if connection.deadline is None:
                continue
            if connection.deadline <= now:
                connection.expire()
            else:
                later.append(connection.deadline)
        if later and not self._closed:
            when = min(later)
            self._watchdog, self._watchdog_at = loop.call_at(when, self._check_deadlines, loop), when

    async def _head(self, connection: Connection, request: bytes) -> tuple[int, dict[str, str]]:
        """Send the request; the answer's status and headers (the connection stays busy)."""
        self._busy.add(connection)
        try:
            async with asyncio.timeout(self.timeout):
                return await connection.start(request)
        except BaseException as exc:
            self._busy.discard(connection)
            connection.abort()
            if isinstance(exc, TimeoutError):
                raise ReadTimeout(self.timeout) from exc
            raise

    async def _release(self, origin: Origin, connection: Connection, *, complete: bool) -> None:
        if not complete:  # failed or cancelled mid-exchange: its state is unknown
            connection.abort()
            return
        pool = self._idle.setdefault(origin, [])
        if connection.next_cycle() and not self._closed and len(pool) < self._max_idle:
            connection.idle_since = asyncio.get_running_loop().time()
            pool.append(connection)
        else:  # the server wants it closed (Connection: close, close-delimited), or enough wait
            await connection.close()

    async def _connect(self, target: Target) -> Connection:
        tls = self._tls_context() if target.scheme == "https" else None
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.connect_timeout):
                _, connection = await loop.create_connection(
                    lambda: Connection(loop), target.host, target.port, ssl=tls,
                    server_hostname=target.host if tls else None, happy_eyeballs_delay=_HAPPY_EYEBALLS_DELAY,
                )
        except TimeoutError as exc:
            raise ConnectTimeout() from exc
        except OSError as exc:  # refused, DNS (gaierror), TLS (SSLError), unreachable
            raise ConnectFailed(socket_reason(exc) or str(exc) or type(exc).__name__) from exc
        return connection

    def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = ssl.create_default_context()  # verifies against the system CA store
            self._tls.set_alpn_protocols(["http/1.1"])
        return self._tls
