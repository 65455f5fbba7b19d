"""One MCP session over Streamable HTTP: routing the session's messages to open POSTs.

A ``ServerSession`` only knows ``send(message)``. Over HTTP each message must go out on
the right POST: a response on the POST of the request with that id; a request or
notification the server starts (``roots/list`` while handling a tool call) on the POST
being handled when it was sent. That POST is found through a context variable set
while the session receives the client's message; the peer runs async handlers as tasks,
which copy the context, so it follows the handler across awaits.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from contextvars import ContextVar
from typing import Final

from ..errors import TransportError
from ..protocol import jsonrpc
from ..protocol import mcp as m
from ..protocol.jsonrpc import JSONObject, Message, Notification, RequestId
from .app import ServerSession, ToolService
from .http_rules import Refusal

__all__ = ["SESSION_ENDED", "HttpSession", "PostStream", "is_final"]

log = logging.getLogger("toolrelay.server.http")

# JSON-RPC's implementation-defined server-error range: the request's session ended.
SESSION_ENDED: Final = -32000

_CURRENT: ContextVar[PostStream | None] = ContextVar("toolrelay_http_post", default=None)


def is_final(message: JSONObject) -> bool:
    """Whether ``message`` is a response (it ends the POST that carries it)."""
    return "result" in message or "error" in message


class PostStream:
    """The messages bound for one POST that awaits its response; ``None`` ends it silently."""

    def __init__(self, request_id: RequestId) -> None:
        self.request_id = request_id
        self.open = True
        self._queue: asyncio.Queue[JSONObject | None] = asyncio.Queue()

    def put(self, message: JSONObject | None) -> None:
        if self.open:
            self._queue.put_nowait(message)

    async def next(self) -> JSONObject | None:
        return await self._queue.get()


class HttpSession:
    """A ``ServerSession`` with an id, and the POST streams awaiting its answers."""

    def __init__(self, service: ToolService) -> None:
        self.session_id = secrets.token_urlsafe(24)  # visible ASCII only (spec: 0x21-0x7E)
        self.session = ServerSession(service, self._route)
        self._streams: dict[RequestId, PostStream] = {}

    @property
    def protocol_version(self) -> str | None:
        return self.session.protocol_version

    @property
    def busy(self) -> bool:
        return bool(self._streams)

    def open_stream(self, request_id: RequestId) -> PostStream:
        """A stream for a request POST; 400 if that id is still in progress."""
        if request_id in self._streams:
            raise Refusal(
                400,
                f"Bad Request: request id {jsonrpc.id_text(request_id)} is already in progress "
                "in this session",
                request_id=request_id,
            )
        stream = PostStream(request_id)
        self._streams[request_id] = stream
        return stream

    def close_stream(self, stream: PostStream) -> None:
        stream.open = False
        if self._streams.get(stream.request_id) is stream:
            del self._streams[stream.request_id]

    def deliver(self, message: Message, stream: PostStream | None = None) -> None:
        """Hand a client message to the session, with ``stream`` as the current POST."""
        token = _CURRENT.set(stream)
        try:
            self.session.peer.receive(message)
        finally:
            _CURRENT.reset(token)
        if isinstance(message, Notification) and message.method == m.CANCELLED:
            self._end_cancelled(message)

    def _end_cancelled(self, note: Notification) -> None:
        # The peer cancelled the handler, which therefore sends no response (spec):
        # end the request's POST without one. A response already queued still goes first.
        request_id = (note.params or {}).get("requestId")
        stream = self._streams.get(request_id) if isinstance(request_id, (int, str)) else None
        if stream is not None:
            stream.put(None)

    def _route(self, message: JSONObject) -> None:
        if is_final(message):
            mcp_id = message.get("id")
            stream = self._streams.get(mcp_id) if mcp_id is not None else _CURRENT.get()
        else:
            stream = _CURRENT.get()
        if stream is None or not stream.open:
            # No POST is waiting (the client left, or there is no request context);
            # this server offers no standalone GET stream to carry it instead.
            log.debug("no open HTTP stream for %s; dropped", message.get("method") or "a response")
            return
        stream.put(message)

    def close(self, reason: str) -> None:
        """End the session: pending server requests fail, open POSTs get an error."""
        self.session.close(TransportError(reason))
        for stream in list(self._streams.values()):
            stream.put(jsonrpc.error_response(stream.request_id, SESSION_ENDED, f"Session ended: {reason}"))
