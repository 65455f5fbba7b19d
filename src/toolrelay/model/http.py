"""A lean HTTP/1.1 client for the model endpoint: an asyncio protocol for I/O, h11 for HTTP.

The model client posts one JSON body and reads one JSON answer per turn; a general HTTP
stack (httpx2 → httpcore2 → anyio → h11) spent ~0.9 ms of CPU per POST on loopback, about
two thirds of the relay loop's own cost (bench/README.md). This client does only what that
POST needs, with h11 (already a dependency) doing the parsing:

- keep-alive connections pooled per (scheme, host, port): an idle one is reused, a new one
  is opened when all are busy, at most ``max_idle`` wait per origin, idle ones older than
  ``KEEPALIVE_EXPIRY`` are dropped; ``aclose`` closes every one;
- the request is written in one piece with a ``Content-Length``; answers may be sized,
  chunked or close-delimited; ``Connection: close`` from the server is honoured;
- https with ``ssl.create_default_context()`` (the system CA store; ``SSL_CERT_FILE`` and
  ``SSL_CERT_DIR`` as the ssl module reads them), SNI and ALPN ``http/1.1``;
- a connect timeout and one timeout for each exchange (write the request, read the whole
  answer); an answer above ``max_answer_bytes`` is refused, never buffered; no
  ``Accept-Encoding`` is sent, and a gzip or deflate answer sent anyway is decoded.

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
``errors.py``'s ``ModelError`` classes. Proxies are not spoken here: ``transport.py``
sends proxied requests with httpx2.
"""

from __future__ import annotations

import asyncio
import ssl
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, cast
from urllib.parse import urlsplit

import h11

from ..loopback import url_host
from ._http_failures import (
    CLOSED_WITHOUT_ANSWER,
    AnswerRejected,
    ConnectFailed,
    ConnectionClosed,
    ConnectTimeout,
    NotHttp,
    ReadTimeout,
    RequestRejected,
    socket_reason,
)

__all__ = [
    "MAX_ANSWER_BYTES",
    "HttpAnswer",
    "HttpClient",
    "Target",
    "decode_content",
    "size_text",
]

MAX_ANSWER_BYTES: Final = 64 * 1024 * 1024
MAX_IDLE_PER_ORIGIN: Final = 4
KEEPALIVE_EXPIRY: Final = 30.0
"""Seconds an idle connection is kept; older ones may have been dropped silently (NAT)."""
_INBOX_LIMIT: Final = 256 * 1024  # bytes received and not yet parsed before reading pauses
_CLOSE_WAIT: Final = 1.0
_HAPPY_EYEBALLS_DELAY: Final = 0.25  # RFC 8305: try the next address if one hangs (broken IPv6)

Origin = tuple[str, str, int]


class _NothingReceived(ConnectionClosed):
    """Closed or reset before a single byte of answer: on a reused connection, resent once."""


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


# -- one connection ---------------------------------------------------------------------------


class _Connection(asyncio.Protocol):
    """One open connection: the socket side (an asyncio protocol) and its h11 state.

    The bytes that arrive wait in ``_inbox`` until the exchange feeds them to h11; bytes
    that arrive while no exchange runs (a 408 before the server closes, garbage) make the
    connection unusable, so the next request never reads them as its answer."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._transport: asyncio.Transport | None = None
        self._http = h11.Connection(h11.CLIENT)
        self._inbox: list[bytes] = []
        self._inbox_size = 0
        self._waiter: asyncio.Future[None] | None = None
        self._ended = loop.create_future()
        self._eof = False
        self._lost: BaseException | None = None
        self._spoke_while_idle = False
        self._busy = False
        self._received = 0
        self.served = 0
        """Exchanges completed on this connection (> 0: a reused keep-alive connection)."""
        self.idle_since = 0.0

    # -- asyncio protocol callbacks --

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)

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

    # -- the exchange --

    def reusable(self, now: float) -> bool:
        """Idle, recent, and the server neither closed it nor spoke while it waited."""
        return not (self._eof or self._spoke_while_idle or now - self.idle_since >= KEEPALIVE_EXPIRY)

    async def exchange(self, request: h11.Request, content: bytes, cap: int) -> HttpAnswer:
        """Send ``request`` with ``content``; the answer, its body not yet decoded."""
        self._busy, self._received = True, 0
        http = self._http
        head = http.send(request)
        self._write(head + http.send(h11.Data(data=content)) + http.send(h11.EndOfMessage()))
        try:
            response = await self._response_head()
            headers = _header_dict(response.headers)
            body = await self._body(headers, cap)
        except h11.RemoteProtocolError as exc:
            if self._eof:
                raise ConnectionClosed(CLOSED_WITHOUT_ANSWER) from exc
            raise NotHttp(f"the answer is not valid HTTP/1.1 ({exc})") from exc
        return HttpAnswer(status=response.status_code, headers=headers, body=body)

    def next_cycle(self) -> bool:
        """After a complete exchange: ready for another one (keep-alive), or must close."""
        self._busy = False
        http = self._http
        if http.our_state is not h11.DONE or http.their_state is not h11.DONE or self._eof:
            return False
        if self._inbox or http.trailing_data[0]:  # more than the answer came: never trust it
            return False
        http.start_next_cycle()
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
            return _NothingReceived(reason)
        return ConnectionClosed(reason)

    async def _response_head(self) -> Any:
        while True:
            event = await self._next_event()
            if type(event) is h11.Response:
                return event
            if type(event) is not h11.InformationalResponse:  # 1xx answers precede the real one
                raise NotHttp(f"the answer is not valid HTTP/1.1 (unexpected {event!r})")

    async def _body(self, headers: dict[str, str], cap: int) -> bytes:
        announced = headers.get("content-length", "")
        if announced.isdigit() and int(announced) > cap:
            raise AnswerRejected(f"the answer is larger than {size_text(cap)} (Content-Length: {announced})")
        chunks: list[bytes] = []
        size = 0
        while True:
            event = await self._next_event()
            if type(event) is h11.Data:
                size += len(event.data)
                if size > cap:
                    raise AnswerRejected(f"the answer is larger than {size_text(cap)}")
                chunks.append(event.data)
            elif type(event) is h11.EndOfMessage:
                return b"".join(chunks)
            else:
                raise ConnectionClosed(CLOSED_WITHOUT_ANSWER)

    async def _next_event(self) -> Any:
        while True:
            event = self._http.next_event()
            if event is not h11.NEED_DATA:
                return event
            self._http.receive_data(await self._read())

    async def _read(self) -> bytes:
        """The bytes received so far; b"" at the end; waits when there are none yet."""
        while not self._inbox:
            if self._lost is not None or (self._eof and self._received == 0):  # reset, TLS failure, EOF
                raise self._closed_error() from self._lost
            if self._eof:
                return b""  # the end of a close-delimited answer (or h11 finds it incomplete)
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
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


def _header_dict(fields: Sequence[tuple[bytes, bytes]]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for raw_name, raw_value in fields:
        name, value = raw_name.decode("ascii"), raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


def size_text(count: int) -> str:
    """``64 MiB``, or an exact byte count."""
    mib = 1024 * 1024
    return f"{count // mib} MiB" if count % mib == 0 else f"{count} bytes"


# -- content encoding -------------------------------------------------------------------------


def decode_content(body: bytes, encoding: str | None, cap: int) -> bytes:
    """``body`` with its ``Content-Encoding`` (gzip, deflate; applied in order) undone.

    toolrelay asks for no encoding; some servers compress anyway. The decoded size is
    capped too (a small gzip body can expand a thousandfold)."""
    if not encoding:
        return body
    for coding in reversed([c.strip().lower() for c in encoding.split(",")]):
        if coding in ("gzip", "x-gzip", "deflate"):
            body = _inflate(body, coding, cap)
        elif coding not in ("identity", ""):
            raise AnswerRejected(f"the answer is encoded with {coding!r}, which toolrelay does not decode")
    return body


def _inflate(body: bytes, coding: str, cap: int) -> bytes:
    # gzip or zlib wrapper detected from the header (47); "deflate" is sometimes sent raw (-15)
    for wbits in (47,) if coding != "deflate" else (47, -zlib.MAX_WBITS):
        inflater = zlib.decompressobj(wbits)
        try:
            data = inflater.decompress(body, cap + 1)
        except zlib.error:
            continue
        if len(data) > cap:
            raise AnswerRejected(f"the answer is larger than {size_text(cap)} once decompressed")
        return data
    raise AnswerRejected(f"the answer says it is {coding}-encoded but does not decompress")


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
        self._idle: dict[Origin, list[_Connection]] = {}
        self._busy: set[_Connection] = set()
        self._closed = False

    async def post(self, target: Target, headers: Sequence[tuple[str, str]], content: bytes) -> HttpAnswer:
        """POST ``content`` to ``target`` with ``headers`` (Host and Content-Length are added)."""
        fields = [("Host", target.host_header), *headers, ("Content-Length", str(len(content)))]
        try:
            request = h11.Request(method="POST", target=target.path, headers=fields)
        except h11.LocalProtocolError:  # h11's message quotes the header value: maybe a secret
            raise RequestRejected("a request header has a name or value HTTP/1.1 forbids") from None
        connection = self._take_idle(target.origin)
        if connection is not None:
            try:
                return await self._exchange(connection, target, request, content)
            except _NothingReceived:
                if self._closed:
                    raise
                # the server closed it as the request went out: resend once (module docstring)
        connection = await self._connect(target)
        return await self._exchange(connection, target, request, content)

    async def aclose(self) -> None:
        """Close every connection (idle ones politely, busy ones at once)."""
        self._closed = True
        idle = [connection for pool in self._idle.values() for connection in pool]
        self._idle.clear()
        for connection in self._busy:
            connection.abort()
        await asyncio.gather(*(connection.close() for connection in idle))

    async def __aenter__(self) -> HttpClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _take_idle(self, origin: Origin) -> _Connection | None:
        pool = self._idle.get(origin)
        now = asyncio.get_running_loop().time()
        while pool:
            connection = pool.pop()
            if connection.reusable(now):
                return connection
            connection.abort()
        return None

    async def _exchange(
        self, connection: _Connection, target: Target, request: h11.Request, content: bytes
    ) -> HttpAnswer:
        self._busy.add(connection)
        complete = False
        try:
            try:
                async with asyncio.timeout(self.timeout):
                    answer = await connection.exchange(request, content, self.max_answer_bytes)
            except TimeoutError as exc:
                raise ReadTimeout(self.timeout) from exc
            complete = True
        finally:
            self._busy.discard(connection)
            await self._release(target.origin, connection, complete=complete)
        encoding = answer.headers.get("content-encoding")
        answer.body = decode_content(answer.body, encoding, self.max_answer_bytes)
        return answer

    async def _release(self, origin: Origin, connection: _Connection, *, complete: bool) -> None:
        if not complete:  # failed or cancelled mid-exchange: its state is unknown
            connection.abort()
            return
        pool = self._idle.setdefault(origin, [])
        if connection.next_cycle() and not self._closed and len(pool) < self._max_idle:
            connection.idle_since = asyncio.get_running_loop().time()
            pool.append(connection)
        else:  # the server wants it closed (Connection: close, close-delimited), or enough wait
            await connection.close()

    async def _connect(self, target: Target) -> _Connection:
        tls = self._tls_context() if target.scheme == "https" else None
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.connect_timeout):
                _, connection = await loop.create_connection(
                    lambda: _Connection(loop), target.host, target.port, ssl=tls,
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
