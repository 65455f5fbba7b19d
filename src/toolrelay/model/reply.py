"""The model seam: what the loop and sampling call (``ModelClient``) and what every model
adapter gives back (``ModelReply``).

An adapter speaks one API (its *dialect*, today only ``responses``: ``client.py``'s
``ResponsesClient``). It is given the loop's request body, posts it in its dialect, records
each model event with that dialect, and returns a ``ModelReply`` naming it. Nothing above
reads the reply's body itself: ``relay.stages.dialects.reader_for(reply.dialect)`` turns it into
the loop's values (``relay.stages.parse.ModelTurn``: output items, calls, answer text, usage), and
verify and view read a transcript's model events by the same reader, picked by the events'
``dialect``. While a streamed answer arrives, the adapter hands ``on_update`` the stream's
updates (``protocol.stream.Update``: text deltas, items as they close).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..protocol.stream import Assembled, Update

__all__ = ["ModelClient", "ModelReply", "OnUpdate"]

OnUpdate = Callable[[Update], None]
"""Told each update of a streamed answer, inside the adapter's read loop (must not block)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelReply:
    """One answer of a model endpoint, as received, in the dialect it names."""

    dialect: str
    """The API the body is written in (``protocol.responses.DIALECT``): which reader reads it."""
    body: dict[str, Any]
    """The answer (for a streamed one, what its stream made)."""
    streamed: bool = False
    """The answer was a stream of server-sent events."""
    stream_events: int = 0
    """How many events the stream had (0 when not streamed)."""
    status: int = 200
    elapsed: float = 0.0
    """Seconds of the successful attempt, from sending to the last byte of the answer."""
    raw: bytes = b""
    """The answer's exact bytes."""
    request_raw: bytes = b""
    """The exact bytes that were posted."""
    attempts: int = 1
    assembled: Assembled | None = None
    """What the stream said, assembled (when ``streamed``): the built answer, where the
    terminal event's differs from it, the stream's problems."""


class ModelClient(Protocol):
    """What the loop and sampling need of a model adapter: one request body in, one typed
    reply out (or a ``ModelError``). ``turn`` is recorded with each model event (0 for a
    server's sampling request); ``on_update`` gets each update of a streamed answer."""

    async def create(
        self, body: dict[str, Any], *, turn: int, on_update: OnUpdate | None = None
    ) -> ModelReply: ...
