"""Serve a ToolService over MCP Streamable HTTP (revision 2025-06-18) at ``/mcp``.

POST carries one JSON-RPC message. A request's answer is ``application/json`` when the
response is the first message the session produces for it, or a ``text/event-stream``
when the server must first ask the client something (``roots/list`` during a tool
call): the stream carries that request, then the response, then closes; the client
answers the server's request with a POST of its own (202). A notification or response
POST gets 202. ``initialize`` opens a session (``Mcp-Session-Id``); DELETE ends it; GET
is 405, as this server keeps no standalone server-to-client stream; OPTIONS answers a
CORS preflight. Every request first passes the Host/Origin/token checks of ``http_rules``.
"""

from __future__ import annotations

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
from ..protocol.jsonrpc import DecodeError, JSONObject, Message, Request
from .app import ToolService
from .http_rules import (
    AccessPolicy,
    Refusal,
    check_origin,
    check_post_headers,
    check_protocol_version,
    check_token,
    cors_headers,
    preflight_headers,
)
from .http_session import HttpSession, PostStream, is_final

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "MCP_PATH", "McpEndpoint", "endpoint_url", "serve_http"]

log = logging.getLogger("toolrelay.server.http")

MCP_PATH: Final = "/mcp"
MAX_SESSIONS: Final = 1000  # beyond this the least recently used idle session is ended
_JSON: Final = ("content-type", "application/json")
_SSE_HEADERS: Final = (("content-type", "text/event-stream"), ("cache-control", "no-cache"))


class McpEndpoint:
    """The HTTP handler: checks, sessions, and the JSON-or-SSE answer of each POST."""

    def __init__(self, service: ToolService, policy: AccessPolicy, max_message_bytes: int) -> None:
        self._service = service
        self._policy = policy
        self._max_message_bytes = max_message_bytes
        self._sessions: OrderedDict[str, HttpSession] = OrderedDict()

    async def handle(self, request: HttpRequest, responder: HttpResponder) -> None:
        try:
            check_origin(request, self._policy)
            responder.extra_headers = cors_headers(request)
            check_token(request, self._policy)
            if request.path != MCP_PATH:
                raise Refusal(404, f"Not Found: the MCP endpoint is {MCP_PATH}")
            if request.method == "OPTIONS":
                await responder.send(204, preflight_headers())
            elif request.method == "POST":
                await self._post(request, responder)
            elif request.method == "DELETE":
                self._delete(request)
                await responder.send(200)
            else:
                raise Refusal(
                    405,
                    f"Method Not Allowed: {request.method} {MCP_PATH}; this server has no standalone "
                    "SSE stream (use POST for messages, DELETE to end a session)",
                    headers=[("allow", "OPTIONS, POST, DELETE")],
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
        session = HttpSession(self._service)
        stream = session.open_stream(message.id)
        session.deliver(message, stream)
        answer = await stream.next()  # initialize is answered at once, never streamed
        session.close_stream(stream)
        headers = [_JSON]
        if answer is not None and "result" in answer:
            self._add_session(session)
            headers.append(("mcp-session-id", session.session_id))
        body = jsonrpc.encode(answer) if answer is not None else b""
        await responder.send(200, headers, body)

    async def _answer(self, session: HttpSession, message: Request, responder: HttpResponder) -> None:
        stream = session.open_stream(message.id)
        try:
            session.deliver(message, stream)
            first = await stream.next()
            if first is None:  # cancelled by the client: no response (lifecycle spec)
                await responder.send(204)
            elif is_final(first):
                await responder.send(200, [_JSON], jsonrpc.encode(first))
            else:
                await _stream_events(first, stream, responder)
        finally:
            session.close_stream(stream)

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


async def _stream_events(first: JSONObject, stream: PostStream, responder: HttpResponder) -> None:
    """Answer as SSE: server requests and notifications, then the response, then close."""
    await responder.start(200, _SSE_HEADERS)
    message: JSONObject | None = first
    while message is not None:
        await responder.write(b"event: message\ndata: " + jsonrpc.encode(message) + b"\n\n")
        if is_final(message):
            break
        message = await stream.next()
    await responder.end()


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
) -> None:
    """Serve ``service`` on ``http://HOST:PORT/mcp`` until cancelled.

    ``port`` 0 picks a free port; ``on_ready`` receives the endpoint URL once listening.
    With ``token``, every request needs ``Authorization: Bearer <token>``. ``limits``:
    the header deadline, idle timeout and connection cap (``ConnectionLimits()`` unless given).
    """
    if token is not None and not token.strip():
        raise UsageError("the HTTP bearer token must not be empty")
    if not is_loopback(host):
        log.warning(
            "serving MCP over HTTP on %s, which other machines can reach%s", host,
            "" if token else "; no bearer token is set, so anyone who can connect may call the tools",
        )
    endpoint = McpEndpoint(service, AccessPolicy.build(host, token, allowed_origins), max_message_bytes)
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
