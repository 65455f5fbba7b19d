"""Serve a ToolService over MCP Streamable HTTP (revisions 2025-06-18 and 2025-11-25) at ``/mcp``.

POST carries one JSON-RPC message. A request's answer is ``application/json`` when the
response is the first message the session produces for it, or a ``text/event-stream``
when the server must first ask the client something (``roots/list`` during a tool
call); in sessions at 2025-11-25 or later a ``tools/call`` is always answered as a
stream, which begins with a priming event so that the client can resume it. The client
answers the server's requests with POSTs of its own (202), as it does notifications.
GET opens the standalone stream (what the server sends outside any request) or, with
``Last-Event-ID``, resumes the stream that event belongs to (``http_sse``,
``http_streams``). ``initialize`` opens a session (``Mcp-Session-Id``); DELETE ends it;
OPTIONS answers a CORS preflight. Every request first passes the Host/Origin/token
checks of ``http_rules``. A request of the 2026-07-28 revision (by its
``MCP-Protocol-Version`` header) takes the session-less single exchange of
``http_modern`` instead, after the same checks.
"""

from __future__ import annotations

import itertools
import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Final

from ..errors import UsageError
from ..httpserver import ConnectionLimits, HttpRequest, HttpResponder, HttpServer
from ..loopback import is_loopback, url_host
from ..protocol import jsonrpc
from ..protocol import mcp as m
from ..protocol.framing import DEFAULT_MAX_MESSAGE_BYTES
from ..protocol.jsonrpc import DecodeError, Message, Request
from ..protocol.peer import Tracer
from .app import ToolService
from .http_rules import (
    AccessPolicy,
    Refusal,
    check_get_headers,
    check_origin,
    check_post_headers,
    check_protocol_version,
    check_token,
    cors_headers,
    preflight_headers,
)
from .http_session import HttpSession
from .http_sse import carry, while_connected
from .http_stateless import answer_modern, is_modern, refuse_modern_stream
from .http_streams import SseStream, StoredEvent, StreamOptions
from .stateless import ModernServer

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES", "MCP_PATH", "McpEndpoint", "StreamOptions", "endpoint_url", "serve_http",
]

log = logging.getLogger("toolrelay.server.http")

MCP_PATH: Final = "/mcp"
MAX_SESSIONS: Final = 1000  # beyond this the least recently used idle session is ended
_JSON: Final = ("content-type", "application/json")


class McpEndpoint:
    """The HTTP handler: checks, sessions, the JSON-or-SSE answer of each POST, and the
    streams a GET opens or resumes."""

    def __init__(
        self, service: ToolService, policy: AccessPolicy, max_message_bytes: int,
        streams: StreamOptions | None = None, on_session: Callable[[HttpSession], None] | None = None,
        modern_tracer: Tracer | None = None,
    ) -> None:
        self._service = service
        self._on_session = on_session
        """Given each new session (a proxy records its host leg through ``HttpSession.wire``)."""
        self._modern_tracer = modern_tracer
        """Sees each 2026-07-28 exchange (its request and answer), which has no session: each
        message is tagged with its exchange's number (one per POST, 1, 2, ...)."""
        self._exchanges = itertools.count(1)
        self._policy = policy
        self._max_message_bytes = max_message_bytes
        self._streams = streams or StreamOptions()
        self._sessions: OrderedDict[str, HttpSession] = OrderedDict()
        self._modern = ModernServer(service)

    async def handle(self, request: HttpRequest, responder: HttpResponder) -> None:
        try:
            check_origin(request, self._policy)
            responder.extra_headers = cors_headers(request)
            check_token(request, self._policy)
            if request.path != MCP_PATH:
                raise Refusal(404, f"Not Found: the MCP endpoint is {MCP_PATH}")
            if request.method == "OPTIONS":
                await responder.send(204, preflight_headers())
            elif request.method in ("GET", "DELETE") and is_modern(request):
                raise refuse_modern_stream(request)
            elif request.method == "POST":
                await self._post(request, responder)
            elif request.method == "GET":
                await self._get(request, responder)
            elif request.method == "DELETE":
                self._delete(request)
                await responder.send(200)
            else:
                raise Refusal(
                    405,
                    f"Method Not Allowed: {request.method} {MCP_PATH} (use POST for messages, GET for "
                    "the server's stream, DELETE to end a session)",
                    headers=[("allow", "OPTIONS, GET, POST, DELETE")],
                )
        except Refusal as refusal:
            # Access refusals matter to whoever runs the server; the rest are the client's business.
            level = logging.WARNING if refusal.status in (401, 403) else logging.DEBUG
            log.log(level, "refused %s %s: %d %s", request.method, request.path, refusal.status,
                    refusal.message)
            body = jsonrpc.encode(jsonrpc.error_response(refusal.request_id, refusal.code, refusal.message))
            await responder.send(refusal.status, [_JSON, *refusal.headers], body)

    def close(self) -> None:
        """End every session (server shutdown)."""
        while self._sessions:
            _, session = self._sessions.popitem()
            session.close("the server is shutting down")

    # -- POST ---------------------------------------------------------------------------

    async def _post(self, request: HttpRequest, responder: HttpResponder) -> None:
        if request.body_too_large:
            raise Refusal(
                413, f"Payload Too Large: a message may have at most {self._max_message_bytes} bytes"
            )
        check_post_headers(request)
        message = _decode(request.body)
        if is_modern(request):
            await answer_modern(self._modern, request, message, responder, self._modern_tracer,
                                next(self._exchanges))
            return
        if isinstance(message, Request) and message.method == m.INITIALIZE:
            await self._initialize(request, message, responder)
            return
        session = self._session_of(request)
        if isinstance(message, Request):
            await self._answer(session, message, responder)
        else:
            session.deliver(message)
            await responder.send(202)

    async def _initialize(self, request: HttpRequest, message: Request, responder: HttpResponder) -> None:
        if request.header("mcp-session-id") is not None:
            raise Refusal(
                400,
                "Bad Request: initialize starts a new session; send it without an Mcp-Session-Id header",
                request_id=message.id,
            )
        session = HttpSession(self._service, self._streams)
        if self._on_session is not None:
            self._on_session(session)
        stream = session.open_stream(message.id)
        session.deliver(message)
        answer = await _first_message(session, stream)  # initialize is answered at once, never streamed
        session.answered_whole(stream)
        headers = [_JSON]
        if session.protocol_version is not None:  # initialize succeeded
            self._add_session(session)
            headers.append(("mcp-session-id", session.session_id))
        body = answer.data if answer is not None and answer.data is not None else b""
        await responder.send(200, headers, body)

    async def _answer(self, session: HttpSession, message: Request, responder: HttpResponder) -> None:
        stream = session.open_stream(message.id)
        if session.primes and message.method == m.CALL_TOOL:  # resumable from the start
            session.prime(stream)
            session.deliver(message)
            await carry(session, stream, responder, after=stream.opened_after, prime=False)
            return
        session.deliver(message)
        first = await _first_message_while_there(session, stream, responder)
        if first is _LEFT:
            session.dropped(stream)
            return
        if first is None:  # cancelled by the client: no response (lifecycle spec)
            await responder.send(204)
        elif first.final:
            session.answered_whole(stream)
            await responder.send(200, [_JSON], first.data or b"")
        else:
            await carry(session, stream, responder, after=stream.opened_after, prime=True)

    # -- GET ------------------------------------------------------------------------------

    async def _get(self, request: HttpRequest, responder: HttpResponder) -> None:
        """The standalone stream, or with Last-Event-ID the stream that event is of."""
        check_get_headers(request)
        session = self._session_of(request)
        last_event_id = request.header("last-event-id")
        if last_event_id is None:  # a fresh start: what no connection has carried yet
            await carry(session, session.standalone, responder, after=session.standalone.sent, prime=True)
            return
        point = session.resume_point(last_event_id)
        if point is None:
            options = self._streams
            raise Refusal(
                400,
                f"Bad Request: cannot resume after Last-Event-ID {last_event_id.strip()[:40]!r}: it is not "
                "an event of this session, or what followed it is no longer kept (this server keeps "
                f"{options.events_kept} events for {options.seconds_kept:g} s per session)",
            )
        stream, after = point
        await carry(session, stream, responder, after=after, prime=True)

    # -- sessions -----------------------------------------------------------------------

    def _session_of(self, request: HttpRequest) -> HttpSession:
        session_id = request.header("mcp-session-id")
        if session_id is None:
            raise Refusal(
                400, "Bad Request: missing Mcp-Session-Id header; send initialize first to start a session"
            )
        session = self._sessions.get(session_id)
        if session is None:
            raise Refusal(
                404,
                "Not Found: this MCP session does not exist or has ended; start a new one with initialize",
            )
        check_protocol_version(request.header("mcp-protocol-version"))
        self._sessions.move_to_end(session_id)
        return session

    def _add_session(self, session: HttpSession) -> None:
        if len(self._sessions) >= MAX_SESSIONS:
            idle = next((sid for sid, s in self._sessions.items() if not s.busy), None)
            if idle is not None:
                self._sessions.pop(idle).close("too many sessions; the least recently used one was ended")
        self._sessions[session.session_id] = session

    def _delete(self, request: HttpRequest) -> None:
        session = self._session_of(request)
        del self._sessions[session.session_id]
        session.close("the client ended the session (DELETE)")


async def _first_message(session: HttpSession, stream: SseStream) -> StoredEvent | None:
    """The first message the session stores for ``stream`` (None: it ended without one)."""
    while True:
        stream.settle()
        events = session.events.after(stream.number, stream.opened_after, session.now()) or []
        first = next((event for event in events if event.data is not None), None)
        if first is not None:
            return first
        if stream.done:
            return None
        await stream.changed(None)


_LEFT: Final = StoredEvent(number=0, stream=0, data=None, at=0.0)
"""What ``_first_message_while_there`` returns when the client closed the connection first."""


async def _first_message_while_there(
    session: HttpSession, stream: SseStream, responder: HttpResponder,
) -> StoredEvent | None:
    """``_first_message``, unless the client closes the connection first (``_LEFT``)."""
    stream.settle()
    stored = session.events.after(stream.number, stream.opened_after, session.now()) or []
    ready = next((event for event in stored if event.data is not None), None)
    if ready is not None or stream.done:  # answered at once (the hot path): nothing to watch
        return ready
    there, first = await while_connected(responder, _first_message(session, stream))
    return first if there else _LEFT


def _decode(body: bytes) -> Message:
    try:
        return jsonrpc.decode(body)
    except DecodeError as exc:
        raise Refusal(400, exc.message, code=exc.code, request_id=exc.id) from None


def endpoint_url(host: str, port: int) -> str:
    """``http://HOST:PORT/mcp``, with an IPv6 address in brackets."""
    return f"http://{url_host(host)}:{port}{MCP_PATH}"


async def serve_http(
    service: ToolService,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    allowed_origins: Sequence[str] = (),
    on_ready: Callable[[str], None] | None = None,
    limits: ConnectionLimits | None = None,
    streams: StreamOptions | None = None,
    on_session: Callable[[HttpSession], None] | None = None,
    modern_tracer: Tracer | None = None,
) -> None:
    """Serve ``service`` on ``http://HOST:PORT/mcp`` until cancelled.

    ``port`` 0 picks a free port; ``on_ready`` receives the endpoint URL once listening.
    With ``token``, every request needs ``Authorization: Bearer <token>``. ``limits``:
    the header deadline, idle timeout and connection cap (``ConnectionLimits()`` unless given).
    ``streams``: what each session keeps for resumption, and how long a connection waits
    for a tool call's answer before the client must resume (``StreamOptions()`` unless given).
    ``on_session`` is given each session as it opens (before its ``initialize`` is answered);
    ``modern_tracer`` sees each 2026-07-28 exchange's request and answer.
    """
    if token is not None and not token.strip():
        raise UsageError("the HTTP bearer token must not be empty")
    if not is_loopback(host):
        log.warning(
            "serving MCP over HTTP on %s, which other machines can reach%s", host,
            "" if token else "; no bearer token is set, so anyone who can connect may call the tools",
        )
    policy = AccessPolicy.build(host, token, allowed_origins)
    endpoint = McpEndpoint(service, policy, max_message_bytes, streams, on_session, modern_tracer)
    server = HttpServer(
        endpoint.handle, max_body_bytes=max_message_bytes, limits=limits or ConnectionLimits()
    )
    # "localhost" may resolve to two addresses, each getting its own free port: bind one.
    bind = "127.0.0.1" if host == "localhost" else host.strip("[]")

    def listening(bound_port: int) -> None:
        url = endpoint_url(host.strip("[]"), bound_port)
        log.debug("serving MCP over Streamable HTTP at %s", url)  # on_ready announces it to users
        if on_ready is not None:
            on_ready(url)

    try:
        await server.serve(bind, port, listening)
    finally:
        endpoint.close()
