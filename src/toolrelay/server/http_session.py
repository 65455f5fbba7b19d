"""One MCP session over Streamable HTTP: routing the session's messages to its SSE streams.

A ``ServerSession`` only knows ``send(message)``. Over HTTP each message goes on a
stream (``http_streams``): a response on the stream of the request with that id; a
request the server starts (``roots/list`` while handling a tool call) on the stream of
the client's request it is made for (the peer's tag of the request: ``app``), or, when
that request has been answered or there is none, on the standalone stream that a
client's GET carries; a cancellation of such a request goes where the request went.

Every message is stored as an event of its stream (``EventStore``), so that whichever
connection carries the stream, now or after the client reconnects, writes it.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import Final, TypeGuard

from ..errors import TransportError
from ..protocol import jsonrpc
from ..protocol import mcp as m
from ..protocol.jsonrpc import ErrorResponse, JSONObject, Message, Notification, RequestId, Response
from ..protocol.peer import Tracer
from .app import ServerSession, ToolService
from .http_rules import Refusal
from .http_streams import STANDALONE, EventStore, SseStream, StoredEvent, StreamOptions, parse_event_id

__all__ = ["PRIMING_SINCE", "SESSION_ENDED", "HttpSession", "is_final"]

log = logging.getLogger("toolrelay.server.http")

# JSON-RPC's implementation-defined server-error range: the request's session ended.
SESSION_ENDED: Final = -32000
PRIMING_SINCE: Final = "2025-11-25"
"""The first revision whose clients expect priming events (SEP-1699); older sessions get
events with ids but no priming event, and are never closed early."""

def is_final(message: JSONObject) -> bool:
    """Whether ``message`` is a response (it ends the stream that carries it)."""
    return "result" in message or "error" in message


class HttpSession:
    """A ``ServerSession`` with an id, its SSE streams and the events they carried."""

    def __init__(self, service: ToolService, options: StreamOptions | None = None) -> None:
        self.session_id = secrets.token_urlsafe(24)  # visible ASCII only (spec: 0x21-0x7E)
        self.options = options or StreamOptions()
        self.wire = _TagOfSent()
        self.session = ServerSession(service, self._route, tracer=self.wire)
        self.events = EventStore(self.options)
        self.standalone = SseStream(STANDALONE, None, opened_after=0)
        self._streams: dict[int, SseStream] = {STANDALONE: self.standalone}
        self._requests: dict[RequestId, SseStream] = {}
        self._asked: dict[RequestId, SseStream] = {}
        """Our requests to the client still unanswered, by id: the stream each went on."""
        self._next_stream = STANDALONE + 1

    @property
    def protocol_version(self) -> str | None:
        return self.session.protocol_version

    @property
    def primes(self) -> bool:
        """Whether its SSE streams begin with a priming event (and may be closed early)."""
        version = self.protocol_version
        return version is not None and version >= PRIMING_SINCE

    @property
    def busy(self) -> bool:
        """Whether a request is still in progress."""
        return bool(self._requests)

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    # -- streams --------------------------------------------------------------------------

    def open_stream(self, request_id: RequestId) -> SseStream:
        """A stream for a request's answer; 400 if that id is still in progress."""
        if request_id in self._requests:
            raise Refusal(
                400,
                f"Bad Request: request id {jsonrpc.id_text(request_id)} is already in progress "
                "in this session",
                request_id=request_id,
            )
        stream = SseStream(self._next_stream, request_id, opened_after=self.events.last_number)
        self._next_stream += 1
        self._streams[stream.number] = stream
        self._requests[request_id] = stream
        return stream

    def prime(self, stream: SseStream) -> StoredEvent:
        """Store a priming event (an id, no data) on ``stream``."""
        return self._store(stream, None)

    def resume_point(self, last_event_id: str) -> tuple[SseStream, int] | None:
        """The stream and position a ``Last-Event-ID`` names, if this session can resume
        from it (an id of its own, whose later events are all still kept)."""
        parsed = parse_event_id(last_event_id)
        if parsed is None:
            return None
        stream = self._streams.get(parsed[0])
        number = parsed[1]
        if stream is None or not stream.opened_after < number <= stream.last_number:
            return None
        if self.events.after(stream.number, number, self.now()) is None:
            return None
        return stream, number

    def answered_whole(self, stream: SseStream) -> None:
        """The stream's one message went out as a JSON body: nothing to resume."""
        self.events.discard(stream.number)
        self._forget_finished()

    # -- messages -------------------------------------------------------------------------

    def deliver(self, message: Message) -> None:
        """Hand a client message to the session (a request's stream is open already)."""
        self.session.peer.receive(message)
        if isinstance(message, (Response, ErrorResponse)) and message.id is not None:
            self._asked.pop(message.id, None)
        if isinstance(message, Notification) and message.method == m.CANCELLED:
            self._end_cancelled(message)

    def dropped(self, stream: SseStream) -> None:
        """The client closed the connection carrying ``stream`` before its answer: with
        ``abandon_after`` set, unless it resumes the stream by then, the request is
        cancelled, its handler stopped as by ``notifications/cancelled``."""
        wait = self.options.abandon_after
        if stream.request_id is None or stream.done or wait is None:
            return
        asyncio.get_running_loop().call_later(wait, self._abandon, stream)

    def _abandon(self, stream: SseStream) -> None:
        if stream.done or stream.holder is not None or stream.request_id is None:
            return  # answered meanwhile, or resumed
        log.debug("the client left request %s mid-answer; cancelled", jsonrpc.id_text(stream.request_id))
        if self.session.peer.cancel_handling(stream.request_id):
            self._finish(stream)

    def _end_cancelled(self, note: Notification) -> None:
        # The peer cancelled the handler, which therefore sends no response (spec): end
        # the request's stream without one. What is already stored still goes first.
        request_id = (note.params or {}).get("requestId")
        stream = self._requests.get(request_id) if isinstance(request_id, (int, str)) else None
        if stream is not None:
            self._finish(stream)

    def _route(self, message: JSONObject) -> None:
        stream: SseStream | None
        if is_final(message):
            mcp_id = message.get("id")
            stream = self._requests.get(mcp_id) if _is_id(mcp_id) else None
        else:
            stream = self._during(message)
        if stream is None or stream.done:
            log.debug("no open HTTP stream for %s; dropped", message.get("method") or "a response")
            return
        final = is_final(message)
        self._store(stream, jsonrpc.encode(message), final=final)
        if final:
            self._finish(stream)

    def _during(self, message: JSONObject) -> SseStream:
        """The stream of the client's request a request (or its cancellation) of ours is
        made for; the standalone stream when there is none or it has been answered."""
        mcp_id = message.get("id")
        if message.get("method") == m.CANCELLED:
            asked = (message.get("params") or {}).get("requestId")
            stream = self._asked.pop(asked, None) if _is_id(asked) else None
        elif _is_id(mcp_id):
            during = self.session.peer.pending_tag(mcp_id)
            stream = self._requests.get(during) if _is_id(during) else None
        else:  # a notification sent for a request (progress, a log message) goes on its stream
            during = self.wire.tag
            stream = self._requests.get(during) if _is_id(during) else None
        if stream is None or stream.done:
            stream = self.standalone
        if _is_id(mcp_id):
            self._asked[mcp_id] = stream
        return stream

    def _store(self, stream: SseStream, data: bytes | None, *, final: bool = False) -> StoredEvent:
        event = self.events.add(stream.number, data, self.now(), final=final)
        stream.last_number = event.number
        stream.wake()
        self._forget_finished()
        return event

    def _finish(self, stream: SseStream) -> None:
        stream.done = True
        if stream.request_id is not None and self._requests.get(stream.request_id) is stream:
            del self._requests[stream.request_id]
        stream.wake()
        self._forget_finished()

    def _forget_finished(self) -> None:
        """Streams that ended and of which no event is kept can no longer be resumed."""
        gone = [n for n, s in self._streams.items() if s.done and not self.events.holds(n)]
        for number in gone:
            del self._streams[number]
            self.events.forget(number)

    def close(self, reason: str) -> None:
        """End the session: pending server requests fail, requests in progress get an
        error, every stream ends."""
        self.session.close(TransportError(reason))
        for stream in list(self._requests.values()):
            assert stream.request_id is not None
            error = jsonrpc.error_response(stream.request_id, SESSION_ENDED, f"Session ended: {reason}")
            self._store(stream, jsonrpc.encode(error), final=True)
            self._finish(stream)
        self._finish(self.standalone)


class _TagOfSent:
    """The session peer's tracer: remembers the tag of the message being sent (a peer tells
    its tracer just before it sends), so that a notification sent for a request goes on
    that request's stream; tells ``outer`` (a proxy's record of the host leg) everything."""

    def __init__(self) -> None:
        self.tag: object = None
        self.outer: Tracer | None = None

    def sent(self, message: JSONObject, tag: object, delivered: bool = True) -> None:
        self.tag = tag
        if self.outer is not None:
            self.outer.sent(message, tag, delivered)

    def received(self, message: Message, tag: object, elapsed: float | None) -> None:
        if self.outer is not None:
            self.outer.received(message, tag, elapsed)


def _is_id(value: object) -> TypeGuard[RequestId]:
    return isinstance(value, (int, str)) and not isinstance(value, bool)
