"""Reading Streamable HTTP event streams, client side, and where each one stands (SEP-1699).

An event stream (the answer to one POST, or a GET) hands each message event to the inbox
as it arrives and keeps its ``StreamPosition``: the id of the last event seen and the
server's last ``retry:``. When a stream ends before what it was opened for (the server
closed the connection early so that the client polls, or the network broke it), the
transport resumes it from that position: it waits ``retry`` milliseconds, then sends a
GET with ``Last-Event-ID``, and the server replays what followed that event. Without an
event id there is nothing to resume from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import httpx2

from ..protocol.jsonrpc import RequestId
from .transport import Inbox

__all__ = ["BROKEN", "DEFAULT_RETRY_MS", "FRUITLESS_RESUMES", "StreamPosition", "read_events"]

DEFAULT_RETRY_MS: Final = 1000
"""How long to wait before reconnecting when the server named no ``retry`` (the SDKs' default)."""
MIN_RETRY_MS: Final = 100
"""A server asking for less gets this: a loop of reconnections must not spin."""
FRUITLESS_RESUMES: Final = 3
"""Reconnections in a row that bring no new event before the stream is given up."""
BROKEN: Final = (httpx2.NetworkError, httpx2.RemoteProtocolError)
"""What reading a stream raises when its connection breaks (reset, cut mid-chunk)."""


@dataclass(slots=True)
class StreamPosition:
    """Where one event stream stands: what a reconnection resumes from."""

    event_id: str | None = None
    """The id of the last event that had one (a priming event counts)."""
    retry_ms: int | None = None
    """The server's last ``retry:`` for this stream."""

    @property
    def resumable(self) -> bool:
        return self.event_id is not None

    def delay(self) -> float:
        """Seconds to wait before reconnecting, as the server asked."""
        asked = DEFAULT_RETRY_MS if self.retry_ms is None else self.retry_ms
        return max(asked, MIN_RETRY_MS) / 1000


async def read_events(
    response: httpx2.Response, inbox: Inbox, position: StreamPosition, *, until: RequestId | None,
    max_event_size: int,
) -> None:
    """Hand each message event of ``response`` to ``inbox`` (as carried for request
    ``until``) and note the stream's position; return when the stream ends, or once
    request ``until`` has its answer.

    Raises ``httpx2.SSEError`` for an event above ``max_event_size`` bytes, and one of
    ``BROKEN`` when the connection breaks."""
    async for event in httpx2.EventSource(response, max_event_size=max_event_size):
        if event.id:
            position.event_id = event.id
        if event.retry is not None and event.retry >= 0:
            position.retry_ms = event.retry
        if event.event == "message" and event.data:  # empty data: a priming event
            inbox.received(event.data.encode(), carrier=until)  # a request's stream carries its own
        if until is not None and not inbox.awaiting(until):
            return  # answered; the server ends the stream now anyway
