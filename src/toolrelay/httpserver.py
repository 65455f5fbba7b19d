"""toolrelay's one HTTP/1.1 server: asyncio streams for I/O, h11 for the protocol (sans-IO).

Every HTTP endpoint toolrelay serves runs on it: the file server's Streamable HTTP
endpoint (``server/http.py``) and the offline stand-in model (``offline/``). It is a
bottom-layer module: it imports only ``errors`` and ``loopback``, never a package above.

It does what one endpoint needs and no more: every request goes to one handler;
request bodies are read with a size cap enforced while reading (a body above the cap is
drained and dropped, never buffered); responses are sent whole (Content-Length) or
streamed (chunked, for SSE); connections are kept alive between requests; a client that
vanishes mid-request ends only its own connection (the handler's next write raises a
``ConnectionError``); cancelling ``HttpServer.serve`` closes the listener and every
connection it accepted. ``ServerThread`` runs a server on its own event loop in a
background thread, for callers that are synchronous or must not share their loop.

A client costs what ``ConnectionLimits`` allows and no more: a request head must arrive
whole within ``header_timeout`` however slowly it trickles (slowloris), a connection
silent for ``idle_timeout`` between requests or inside a body is closed, and at most
``max_connections`` are served at once (``httpaccept`` refuses the next with 503, and
survives running out of file descriptors).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final

import h11

from .httpaccept import Listener

__all__ = ["ConnectionLimits", "Handler", "HttpRequest", "HttpResponder", "HttpServer", "ServerThread"]

log = logging.getLogger("toolrelay.httpserver")

_READ_CHUNK: Final = 64 * 1024
_MAX_HEAD_BYTES: Final = 16 * 1024  # request line + headers
# An oversized body is read and dropped (so the client sees our 413 instead of a reset
# while it is still writing) up to this many bytes; past it the connection is closed.
_DRAIN_LIMIT: Final = 64 * 1024 * 1024

_KNOWN_STATUSES: Final = frozenset(status.value for status in HTTPStatus)

Headers = Sequence[tuple[str, str]]


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionLimits:
    """What one client may cost the server (the defaults are in docs/files-server.md)."""

    header_timeout: float = 30.0
    """Seconds for a request head to arrive whole: from the connection's start, or from the
    first byte of a later request on it."""
    idle_timeout: float = 60.0
    """Seconds a connection may stay silent between requests (then it is closed quietly)
    or inside a request body (then it gets 408)."""
    max_connections: int = 256
    """Connections served at once; past them a new one gets 503 and is closed."""


class _TimedOut(Exception):
    """Internal: the client was too slow; the 408 body says how."""


class _ClientGone(ConnectionError):
    """Internal: the client closed the connection before the response was complete.

    A ``ConnectionError``, so a handler that streams can stop on it; the server ends the
    connection quietly when it escapes the handler."""


@dataclass(slots=True, kw_only=True)
class HttpRequest:
    """One request as the handler sees it: head decoded, body capped."""

    method: str
    path: str
    """The request target without its query string."""
    query: str = ""
    """The query string (after ``?``), as sent."""
    headers: list[tuple[str, str]]
    """Names lower-case, values as sent, in order."""
    body: bytes
    """The body; empty when it exceeded the cap."""
    body_too_large: bool = False

    def header(self, name: str) -> str | None:
        """The value of header ``name`` (repeats joined with ", "), or None when absent."""
        values = [value for key, value in self.headers if key == name]
        return ", ".join(values) if values else None


Handler = Callable[[HttpRequest, "HttpResponder"], Awaitable[None]]


class HttpResponder:
    """Writes the one response to one request: whole with ``send``, or streamed.

    Each method raises ``ConnectionError`` when the client has gone."""

    def __init__(
        self, conn: h11.Connection, writer: asyncio.StreamWriter, *, close_after: bool, head_only: bool,
        reader: asyncio.StreamReader | None = None,
    ) -> None:
        self._conn = conn
        self._writer = writer
        self._reader = reader
        self._close_after = close_after
        self._head_only = head_only  # the answer to HEAD: headers as for GET, never a body
        self.extra_headers: list[tuple[str, str]] = []
        """Headers added to whatever response is sent (e.g. CORS)."""
        self.started = False
        self.finished = False

    async def send(self, status: int, headers: Headers = (), body: bytes = b"") -> None:
        """A complete response with a Content-Length, written in one piece (one segment on
        the wire for a small one: the client wakes once)."""
        # 204 and 304 carry no body, and so no Content-Length either (RFC 9110).
        sized = [] if status in (204, 304) else [("content-length", str(len(body)))]
        data = self._head(status, [*headers, *sized])
        if body and not self._head_only:
            data += self._conn.send(h11.Data(data=body))
        data += self._conn.send(h11.EndOfMessage())
        await _write(self._writer, data)
        self.finished = True

    async def start(self, status: int, headers: Headers) -> None:
        """Send the status line and headers; without Content-Length the body is chunked."""
        await _write(self._writer, self._head(status, headers))

    def _head(self, status: int, headers: Headers) -> bytes:
        all_headers = [*headers, *self.extra_headers]
        if self._close_after:
            all_headers.append(("connection", "close"))
        encoded = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in all_headers]
        self.started = True
        reason = HTTPStatus(status).phrase.encode() if status in _KNOWN_STATUSES else b""
        return self._conn.send(h11.Response(status_code=status, headers=encoded, reason=reason)) or b""

    async def write(self, data: bytes) -> None:
        """Send part of the body."""
        await self._emit(h11.Data(data=data))

    async def end(self) -> None:
        """Finish the response."""
        await self._emit(h11.EndOfMessage())
        self.finished = True

    async def _emit(self, event: Any) -> None:
        await _write(self._writer, self._conn.send(event))

    async def client_left(self) -> None:
        """Return once the client has closed the connection (for a long answer, which is
        written only when there is something to write: a client that leaves meanwhile is
        noticed here). What it sends meanwhile is kept for the next request."""
        if self._reader is None:
            await asyncio.Event().wait()  # nothing to watch: never
            return
        with contextlib.suppress(OSError):
            while data := await self._reader.read(_READ_CHUNK):
                self._conn.receive_data(data)


async def _write(writer: asyncio.StreamWriter, data: bytes | None) -> None:
    if writer.is_closing():
        raise _ClientGone("the client closed the connection")
    try:
        if data:
            writer.write(data)
        await writer.drain()
    except OSError as exc:  # reset, broken pipe
        raise _ClientGone(str(exc)) from None


class _Connection:
    """One client connection: requests one after another (keep-alive)."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, handler: Handler, max_body: int,
        limits: ConnectionLimits,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._handler = handler
        self._max_body = max_body
        self._limits = limits
        self._conn = h11.Connection(h11.SERVER, max_incomplete_event_size=_MAX_HEAD_BYTES)

    async def run(self) -> None:
        # The first request's head is timed from the connection's start (a client that
        # connects and says nothing holds a descriptor too); later ones from their first byte.
        head_deadline: float | None = asyncio.get_running_loop().time() + self._limits.header_timeout
        try:
            while await self._serve_one(head_deadline):
                self._conn.start_next_cycle()
                head_deadline = None
        except h11.RemoteProtocolError as exc:
            await self._reject_malformed(exc)
        except _TimedOut as exc:
            await self._answer_timeout(str(exc))
        except OSError:  # includes _ClientGone: the client left; nothing to answer
            pass
        finally:
            self._writer.close()
            with contextlib.suppress(OSError):
                await self._writer.wait_closed()

    async def _serve_one(self, head_deadline: float | None) -> bool:
        """Serve one request; True when the connection can carry another."""
        head = await self._read_head(head_deadline)
        if not isinstance(head, h11.Request):
            return False  # the client closed an idle connection, or left it silent
        request = await self._read_request(head)
        responder = HttpResponder(
            self._conn, self._writer, close_after=self._conn.their_state is not h11.DONE,
            head_only=request.method == "HEAD", reader=self._reader,
        )
        try:
            await self._handler(request, responder)
        except _ClientGone:
            return False
        except Exception:  # a handler bug costs this request, never the server
            log.exception("HTTP handler failed on %s %s", request.method, request.path)
            if responder.started:
                return False
            await responder.send(500, [("content-type", "text/plain")], b"internal server error\n")
        if not responder.finished:
            return False
        return self._conn.our_state is h11.DONE and self._conn.their_state is h11.DONE

    async def _read_head(self, deadline: float | None) -> Any:
        """The next request's head event; None when the connection stayed silent for the
        idle timeout between requests (closed quietly: a 408 could pass for an answer)."""
        loop = asyncio.get_running_loop()
        while (event := self._conn.next_event()) is h11.NEED_DATA:
            if deadline is None and not self._conn.trailing_data[0]:
                try:  # between requests, nothing of the next one yet
                    data = await self._receive(loop.time() + self._limits.idle_timeout)
                except TimeoutError:
                    return None
            else:
                try:
                    data = await self._receive(deadline or loop.time() + self._limits.header_timeout)
                except TimeoutError:
                    within = f"{self._limits.header_timeout:g} s"
                    raise _TimedOut(f"the request head was not complete within {within}") from None
            if deadline is None:  # the head has begun: it has header_timeout to end
                deadline = loop.time() + self._limits.header_timeout
            self._conn.receive_data(data)
        return event

    async def _next_body_event(self) -> Any:
        while (event := self._conn.next_event()) is h11.NEED_DATA:
            try:
                data = await self._receive(asyncio.get_running_loop().time() + self._limits.idle_timeout)
            except TimeoutError:
                idle = f"{self._limits.idle_timeout:g} s"
                raise _TimedOut(f"no part of the request body arrived for {idle}") from None
            self._conn.receive_data(data)
        return event

    async def _receive(self, deadline: float) -> bytes:
        async with asyncio.timeout_at(deadline):
            return await self._reader.read(_READ_CHUNK)

    async def _answer_timeout(self, reason: str) -> None:
        log.debug("closing a slow connection: %s", reason)
        body = f"request timeout: {reason}\n".encode()
        head = ("HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain\r\nconnection: close\r\n"
                f"content-length: {len(body)}\r\n\r\n")
        with contextlib.suppress(OSError):  # written by hand: h11 answers only a request it has read
            await _write(self._writer, head.encode() + body)

    async def _read_request(self, head: h11.Request) -> HttpRequest:
        path, _, query = head.target.decode("latin-1").partition("?")
        request = HttpRequest(
            method=head.method.decode("latin-1"),
            path=path,
            query=query,
            headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in head.headers],
            body=b"",
        )
        declared = _content_length(request)
        if declared is not None and declared > self._max_body:
            request.body_too_large = True
            if declared > _DRAIN_LIMIT or self._conn.client_is_waiting_for_100_continue:
                return request  # answer now, without the body; the connection closes after
        elif self._conn.client_is_waiting_for_100_continue:
            go_on = h11.InformationalResponse(status_code=100, headers=[], reason=b"Continue")
            await _write(self._writer, self._conn.send(go_on))
        await self._read_body(request)
        return request

    async def _read_body(self, request: HttpRequest) -> None:
        """Read the body into ``request``; above the cap keep counting, but keep nothing."""
        body = bytearray()
        size = 0
        while size <= _DRAIN_LIMIT:
            event = await self._next_body_event()
            if isinstance(event, h11.EndOfMessage):
                break
            if not isinstance(event, h11.Data):
                raise _ClientGone("the client closed the connection while sending the body")
            size += len(event.data)
            if size > self._max_body:
                request.body_too_large = True
                body = bytearray()
            elif not request.body_too_large:
                body += event.data
        request.body = bytes(body)

    async def _reject_malformed(self, exc: h11.RemoteProtocolError) -> None:
        if self._conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return
        responder = HttpResponder(self._conn, self._writer, close_after=True, head_only=False)
        reason = str(exc).split(":", 1)[0]  # h11 appends the offending bytes; do not echo them
        with contextlib.suppress(OSError, h11.LocalProtocolError):
            await responder.send(
                exc.error_status_hint, [("content-type", "text/plain")], f"bad request: {reason}\n".encode()
            )


def _content_length(request: HttpRequest) -> int | None:
    value = request.header("content-length")
    return int(value) if value is not None and value.isdigit() else None


class HttpServer:
    """Accepts connections and serves each on its own task until ``serve`` is cancelled."""

    def __init__(
        self, handler: Handler, *, max_body_bytes: int, limits: ConnectionLimits = ConnectionLimits()
    ) -> None:
        self._handler = handler
        self._max_body = max_body_bytes
        self._limits = limits
        self._listener: Listener | None = None
        # the socket too: shutdown closes it even if its task never got to start
        self._connections: dict[asyncio.Task[None], socket.socket] = {}

    async def serve(self, host: str, port: int, on_listening: Callable[[int], None]) -> None:
        """Listen on ``host:port`` (0: any free port, passed to ``on_listening``) until cancelled."""
        listener = await Listener.open(host, port, max_connections=self._limits.max_connections)
        self._listener = listener
        try:
            on_listening(listener.port)
            await listener.accept_forever(self._accept, self._connections.__len__)
        finally:
            await listener.close()
            await self._close_connections()

    def _accept(self, sock: socket.socket) -> None:
        task = asyncio.ensure_future(self._serve_socket(sock))
        self._connections[task] = sock
        task.add_done_callback(self._forget)

    async def _serve_socket(self, sock: socket.socket) -> None:
        try:
            reader, writer = await asyncio.open_connection(sock=sock)
        except BaseException:
            sock.close()
            raise
        await _Connection(reader, writer, self._handler, self._max_body, self._limits).run()

    def _forget(self, task: asyncio.Task[None]) -> None:
        self._connections.pop(task, None)
        if self._listener is not None:
            self._listener.connection_ended()
        if not task.cancelled() and task.exception() is not None:
            log.error("HTTP connection failed", exc_info=task.exception())

    async def _close_connections(self) -> None:
        tasks = list(self._connections.items())
        for task, _ in tasks:
            task.cancel()
        await asyncio.gather(*(task for task, _ in tasks), return_exceptions=True)
        for _, sock in tasks:
            sock.close()  # a no-op unless its task was cancelled before it began


class ServerThread:
    """An ``HttpServer`` on its own event loop in a daemon thread (started once).

    ``start`` returns once the server listens (or raises why it cannot), ``stop`` cancels
    the serving task, which closes the listener and every connection, and joins the
    thread. Its loop is independent of the caller's: sync callers can use it, and an
    async caller that blocks its own loop (a test using urllib) is still answered."""

    def __init__(
        self, handler: Handler, *, max_body_bytes: int, name: str,
        limits: ConnectionLimits = ConnectionLimits(),
    ) -> None:
        self._server = HttpServer(handler, max_body_bytes=max_body_bytes, limits=limits)
        self._name = name
        self._thread: threading.Thread | None = None
        self._listening = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Future[None] | None = None
        self._failure: Exception | None = None
        self.port = 0

    def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` (0: any free port); the port it listens on."""
        self._thread = threading.Thread(target=self._run, args=(host, port), name=self._name, daemon=True)
        self._thread.start()
        self._listening.wait()
        if self._failure is not None:
            self._thread.join()
            self._thread = None
            raise self._failure
        return self.port

    def stop(self) -> None:
        """Close the listener and every connection; return when the thread has ended."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        if self._loop is not None and self._task is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended (the server failed)
                self._loop.call_soon_threadsafe(self._task.cancel)
        thread.join()

    def _run(self, host: str, port: int) -> None:
        try:
            asyncio.run(self._serve(host, port))
        except asyncio.CancelledError:
            pass  # stop() cancelled the serving task: the normal end
        except Exception as exc:  # it cannot listen: start() raises this in the caller's thread
            if self._listening.is_set():  # it failed while serving: a bug, never silent
                log.exception("HTTP server %s failed", self._name)
            self._failure = exc
        finally:
            self._listening.set()

    async def _serve(self, host: str, port: int) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        await self._server.serve(host, port, self._listened)

    def _listened(self, port: int) -> None:
        self.port = port
        self._listening.set()
