"""The MCP 2026-07-28 exchange over HTTP: one POST, one request, one JSON answer.

A request is of this era when its ``MCP-Protocol-Version`` header names a 2026-07-28
revision, or names none that toolrelay speaks and comes without a session (so that a
client asking for a revision we lack is told which we have, -32022, while a session's
unknown header stays the legacy path's 400). There is no session and no stream to
resume: the body is answered with ``application/json``, errors with the status the
revision gives their code (400, or 404 for an unknown method), a notification with 202;
a request whose work reports progress or log messages first (what its ``_meta`` asks
for) is answered with an SSE stream of them, the response its last event
(``http_request_stream.py``).
A client cancels a request by closing its connection: the work on it stops then. Only
``subscriptions/listen``, for a service with a ``listen_hub``, is answered with an SSE
stream that stays open until the client closes it (``listen_hub.py``).
GET and DELETE have no meaning here (405). The Host/Origin/token checks and the size
cap ran before, as for every request.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from ..errors import RpcError
from ..httpserver import HttpRequest, HttpResponder
from ..protocol import jsonrpc, request_envelope
from ..protocol.jsonrpc import INTERNAL_ERROR, JSONObject, Message, Notification, Request, RequestId
from ..protocol.listen import LISTEN
from ..protocol.peer import Tracer
from ..protocol.versions import MODERN_VERSIONS, SUPPORTED_VERSIONS
from .http_request_stream import answer_streamed, sse_event
from .http_rules import Refusal
from .http_sse import SSE_HEADERS, while_connected
from .listen_hub import ListenHub
from .request_stream import RequestStream
from .stateless import ModernServer

__all__ = ["answer_modern", "is_modern", "refuse_modern_stream"]

log = logging.getLogger("toolrelay.server.http")

_JSON: Final = ("content-type", "application/json")


def is_modern(request: HttpRequest) -> bool:
    """Whether ``request`` belongs to the 2026-07-28 single-exchange path."""
    version = request.header("mcp-protocol-version")
    if version is None or version in SUPPORTED_VERSIONS:
        return False
    return version in MODERN_VERSIONS or request.header("mcp-session-id") is None


def refuse_modern_stream(request: HttpRequest) -> Refusal:
    """GET or DELETE at a 2026-07-28 revision: no stream, no session to end (405)."""
    return Refusal(
        405,
        f"Method Not Allowed: {request.method} has no meaning in MCP 2026-07-28 "
        "(no session, no standalone stream); POST each request",
        headers=[("allow", "POST")],
    )


async def answer_modern(
    modern: ModernServer, request: HttpRequest, message: Message, responder: HttpResponder,
    tracer: Tracer | None = None, exchange: int | None = None,
) -> None:
    """Answer one decoded 2026-07-28 POST body; ``tracer`` sees the request and its answer
    (a proxy records its host leg so), as a session's peer shows its tracer, each message
    tagged with ``exchange`` (the endpoint's number of this POST: there is no session)."""
    if tracer is not None:
        tracer.received(message, exchange, None)
    if isinstance(message, Notification):
        version = request.header("mcp-protocol-version") or ""
        if version not in MODERN_VERSIONS:
            await _send_error(responder, None, request_envelope.unsupported_version(version))
            return
        await responder.send(202)  # nothing to act on: a client cancels by closing its request
        return
    if not isinstance(message, Request):
        raise Refusal(400, "Invalid Request: a 2026-07-28 POST carries one request or notification",
                      request_id=message.id)
    if message.method == LISTEN and modern.hub is not None:
        await _listen(modern.hub, request, message, responder, tracer, exchange)
        return
    notes: asyncio.Queue[JSONObject] = asyncio.Queue()  # its progress and log messages, in order
    stream = RequestStream.of(message, notes.put_nowait, exchange=exchange)
    try:
        outcome = modern.handle(message, header=request.header, stream=stream)
    except RpcError as exc:
        await _send_error(responder, message.id, exc, tracer, exchange)
        return
    except Exception as exc:  # a handler bug is the request's failure, not the server's
        log.exception("handler for %s failed", message.method)
        await _send_error(responder, message.id,
                          RpcError(INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}"), tracer,
                          exchange)
        return
    # JSON, or SSE once it reports something; the revision's cancellation is the client
    # closing its request: the work stops
    await answer_streamed(outcome, notes, responder, message.id, tracer, silent=stream.silent, tag=exchange)


async def _listen(hub: ListenHub, request: HttpRequest, message: Request, responder: HttpResponder,
                  tracer: Tracer | None, exchange: int | None) -> None:
    """A listen request: its SSE stream stays open, the acknowledgement first, then what the
    hub publishes, until the client closes it (or the server stops)."""
    try:
        request_envelope.read_envelope(LISTEN, message.params, header=request.header)
    except RpcError as exc:
        await _send_error(responder, message.id, exc, tracer, exchange)
        return
    queue: asyncio.Queue[JSONObject] = asyncio.Queue()
    number = hub.open(message, queue.put_nowait)
    try:
        await responder.start(200, SSE_HEADERS)
        await while_connected(responder, _pass_on(queue, responder, tracer, exchange))
    finally:
        hub.close(number)


async def _pass_on(queue: asyncio.Queue[JSONObject], responder: HttpResponder, tracer: Tracer | None,
                   exchange: int | None) -> None:
    while True:
        note = await queue.get()
        if tracer is not None:
            tracer.sent(note, exchange)
        await responder.write(sse_event(note))


async def _send_error(responder: HttpResponder, request_id: RequestId | None, exc: RpcError,
                      tracer: Tracer | None = None, exchange: int | None = None) -> None:
    answer = jsonrpc.error_response(request_id, exc.code, exc.rpc_message, exc.data)
    if tracer is not None:
        tracer.sent(answer, exchange)
    body = jsonrpc.encode(answer)
    await responder.send(request_envelope.http_status(exc.code), [_JSON], body)
