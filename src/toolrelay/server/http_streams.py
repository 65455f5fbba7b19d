"""One session's SSE streams and the events they carried, kept so that a client can resume.

Every message the server sends over SSE is an event with an id ``S-N``: S numbers the
stream within its session (0 is the standalone GET stream; 1, 2, ... carry the answers
to requests), N the event within the session (increasing across all its streams, so an
id is unique in the session and says which stream it belongs to, as the spec asks).
A stream outlives the HTTP connections that carry it: when a connection ends before the
stream does (the server closed it early, the network broke it), what the session sends
meanwhile is stored, and a client that reconnects with ``Last-Event-ID`` gets the events
of that stream after that id, then the rest as it comes (SEP-1699).

The ``EventStore`` keeps a session's recent events within ``StreamOptions`` limits
(events, bytes, seconds); a stream whose events after a given id are no longer all kept
cannot be resumed from it. Sans-IO apart from an ``asyncio.Event`` per stream, which
wakes the connection writing it.
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
from dataclasses import dataclass
from typing import Final

from ..protocol.jsonrpc import RequestId

__all__ = ["STANDALONE", "EventStore", "SseStream", "StoredEvent", "StreamOptions", "parse_event_id"]

STANDALONE: Final = 0
"""The number of a session's standalone stream (the GET stream for messages that belong
to no request)."""

_EVENT_ID: Final = re.compile(r"([0-9]{1,18})-([0-9]{1,18})")


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamOptions:
    """How the endpoint's SSE streams behave: what is kept for resumption, and polling.

    The defaults are in docs/files-server.md."""

    events_kept: int = 1000
    """Events a session keeps for resumption; beyond it the oldest go first."""
    bytes_kept: int = 16 * 1024 * 1024
    """Bytes of messages a session keeps (its newest event is kept whatever its size)."""
    seconds_kept: float = 300.0
    """How long an event is kept after it was sent."""
    retry_ms: int = 1000
    """The ``retry:`` of priming events: how long a client waits before reconnecting."""
    hold: float | None = None
    """Seconds a connection carrying a request's stream stays open without the answer;
    then the server closes it and the client resumes with GET (polling). None: the
    connection stays open until the answer. Only for sessions at 2025-11-25 or later,
    whose clients know to resume."""
    abandon_after: float | None = None
    """Seconds a request whose connection the client closed before its answer waits for
    the client to resume its stream; then the request is cancelled, as a
    ``notifications/cancelled`` would. None: never (the spec's default: a disconnection is
    not a cancellation; ``toolrelay proxy`` sets it, so an upstream call nobody will read
    the answer of is given up)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredEvent:
    """One event of a session, as it was (or would have been) sent."""

    number: int
    stream: int
    data: bytes | None
    """The JSON-RPC message; None for a priming event (an id and empty data)."""
    at: float
    """When it was stored (the event loop's clock)."""
    final: bool = False
    """It is the response that ends its stream."""

    @property
    def event_id(self) -> str:
        return f"{self.stream}-{self.number}"

    @property
    def size(self) -> int:
        return len(self.data) if self.data is not None else 0


def parse_event_id(text: str) -> tuple[int, int] | None:
    """``"3-17"`` → (stream 3, event 17); None for anything that is not an id we make."""
    found = _EVENT_ID.fullmatch(text.strip())
    return (int(found.group(1)), int(found.group(2))) if found else None


class SseStream:
    """One SSE stream of a session: a request's answer, or the standalone stream."""

    def __init__(self, number: int, request_id: RequestId | None, *, opened_after: int) -> None:
        self.number = number
        self.request_id = request_id
        """The request it answers; None for the standalone stream."""
        self.opened_after = opened_after
        """The session's last event number when it opened: its events are all above it."""
        self.last_number = opened_after
        """The number of its newest event."""
        self.done = False
        """Its last event is stored (the response; none for a cancelled request)."""
        self.sent = opened_after
        """The newest of its events written to some connection."""
        self.holder: object | None = None
        """The connection writing it now (a newer one takes it over)."""
        self._changed = asyncio.Event()

    def wake(self) -> None:
        """Tell the connection writing it that something changed."""
        self._changed.set()

    def settle(self) -> None:
        """Forget past wake-ups: called before looking at what changed."""
        self._changed.clear()

    async def changed(self, timeout: float | None) -> bool:
        """Until the next ``wake`` (True), or ``timeout`` seconds (False)."""
        try:
            async with asyncio.timeout(timeout):
                await self._changed.wait()
        except TimeoutError:
            return False
        return True


class EventStore:
    """A session's recent events, oldest first, within the ``StreamOptions`` limits."""

    def __init__(self, options: StreamOptions) -> None:
        self._options = options
        self._events: deque[StoredEvent] = deque()
        self._bytes = 0
        self.last_number = 0
        self._per_stream: dict[int, int] = {}
        self._dropped: dict[int, int] = {}
        """Per stream, the number of its newest event no longer kept."""

    def add(self, stream: int, data: bytes | None, now: float, *, final: bool = False) -> StoredEvent:
        self.last_number += 1
        event = StoredEvent(number=self.last_number, stream=stream, data=data, at=now, final=final)
        self._events.append(event)
        self._bytes += event.size
        self._per_stream[stream] = self._per_stream.get(stream, 0) + 1
        self.trim(now)
        return event

    def after(self, stream: int, number: int, now: float) -> list[StoredEvent] | None:
        """The kept events of ``stream`` after event ``number``; None if some are gone."""
        self.trim(now)
        if self._dropped.get(stream, 0) > number:
            return None
        return [event for event in self._events if event.stream == stream and event.number > number]

    def holds(self, stream: int) -> bool:
        """Whether any event of ``stream`` is still kept."""
        return stream in self._per_stream

    def discard(self, stream: int) -> None:
        """Drop every event of ``stream`` (its answer went out whole, as JSON)."""
        if self.holds(stream):
            kept = deque(event for event in self._events if event.stream != stream)
            for event in self._events:
                if event.stream == stream:
                    self._forget(event)
            self._events = kept

    def forget(self, stream: int) -> None:
        """The session forgot ``stream``: drop what is left of its record."""
        self.discard(stream)
        self._dropped.pop(stream, None)

    def trim(self, now: float) -> None:
        """Drop what is past the limits: too old, too many, too large."""
        options, events = self._options, self._events
        while events and (
            now - events[0].at > options.seconds_kept
            or (len(events) > 1 and (len(events) > options.events_kept or self._bytes > options.bytes_kept))
        ):
            self._forget(events.popleft())

    def _forget(self, event: StoredEvent) -> None:
        self._bytes -= event.size
        left = self._per_stream[event.stream] - 1
        if left:
            self._per_stream[event.stream] = left
        else:
            del self._per_stream[event.stream]
        self._dropped[event.stream] = max(self._dropped.get(event.stream, 0), event.number)
