"""Reading a streamed answer (``text/event-stream``) as it arrives.

``StreamReader.read`` takes the answer's body piece by piece, splits it into server-sent
events (``protocol.sse``) and, for each event in order: records it (a ``ModelStreamEvent``,
the data exactly as received, with an API key the endpoint echoed replaced), feeds the
assembler (``protocol.stream``), and hands each update to the caller's ``on_update``,
synchronously, inside the read loop (the callback schedules work; it must not block).

The stream ends at the end of the body, or when the connection closes, resets or stalls
(no bytes within the timeout): a stream that ended before its terminal event is *cut*,
and ``StreamRead.cut`` says how. After the terminal event the rest of the body is read
for a moment only (some servers add ``data: [DONE]``; none needs more), so a server that
keeps the connection open cannot hold the run. Bounds: one event (``max_event_bytes``)
and the whole stream (``max_stream_bytes``); past either, ``AnswerRejected``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Final, Protocol

from ..events import EventStream, ModelStreamEvent
from ..protocol.responses import DIALECT
from ..protocol.sse import DEFAULT_MAX_EVENT_BYTES, EventTooLarge, SseParser, StreamEvent
from ..protocol.stream import Assembled, StreamAssembler, Update
from ._http_failures import AnswerRejected, ConnectionClosed, NotHttp, ReadTimeout, TransportFailure
from .encoding import size_text
from .reply import OnUpdate

__all__ = ["MAX_STREAM_BYTES", "OnUpdate", "StreamAssembling", "StreamRead", "StreamReader"]

MAX_STREAM_BYTES: Final = 256 * 1024 * 1024
"""A stream repeats its items (added, deltas, done, completed): a few times a JSON answer."""
AFTER_END_WAIT: Final = 1.0
"""Seconds the body is read on after the terminal event before the connection is dropped."""
NO_TERMINAL: Final = "the stream ended without response.completed, .incomplete or .failed"
NO_FINISH: Final = "the stream ended without a finish_reason"
"""A chat stream's ``NO_TERMINAL``: its finish chunk is what ends the answer."""
_CUTS: Final = (ConnectionClosed, ReadTimeout, NotHttp, TransportFailure)


class StreamAssembling(Protocol):
    """What assembles one dialect's stream (``protocol.stream``, ``protocol.chat_stream``)."""

    @property
    def ended(self) -> bool: ...

    def feed(self, event: StreamEvent) -> list[Update]: ...

    def finish(self) -> Assembled: ...


@dataclass(slots=True, kw_only=True)
class StreamRead:
    """One attempt's stream, read."""

    assembled: Assembled
    events: int
    """Server-sent events received."""
    raw: bytes
    """The body's bytes as received (decoded from gzip if it was sent so)."""
    cut: str | None
    """Why the stream ended before its terminal event, in a few words; None when it had one."""


class StreamReader:
    """Reads one attempt's stream; see the module docstring."""

    def __init__(
        self,
        *,
        events: EventStream,
        turn: int,
        attempt: int,
        on_update: OnUpdate | None = None,
        secret: str | None = None,
        replacement: str = "",
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        max_stream_bytes: int = MAX_STREAM_BYTES,
        assembler: StreamAssembling | None = None,
        dialect: str = DIALECT,
    ) -> None:
        self._events = events
        self._turn = turn
        self._attempt = attempt
        self._on_update = on_update
        self._secret = secret or None
        self._replacement = replacement
        self._parser = SseParser(max_event_bytes=max_event_bytes)
        self._assembler: StreamAssembling = assembler if assembler is not None else StreamAssembler()
        self._dialect = dialect
        self._max_stream_bytes = max_stream_bytes

    async def read(self, chunks: AsyncIterator[bytes]) -> StreamRead:
        """Read ``chunks`` to their end, a cut, or a moment past the terminal event."""
        raw: list[bytes] = []
        cut: str | None = None
        try:
            await self._read_chunks(chunks, raw)
        except _CUTS as failure:
            cut = _cut_reason(failure)
        except EventTooLarge as exc:
            raise AnswerRejected(f"a server-sent event is larger than {size_text(exc.cap)}") from exc
        finally:
            await _close(chunks)
        if self._assembler.ended:
            cut = None  # what came after the terminal event does not matter
        elif cut is None:
            cut = NO_TERMINAL if self._dialect == DIALECT else NO_FINISH
        return StreamRead(assembled=self._assembler.finish(), events=self._parser.events,
                          raw=b"".join(raw), cut=cut)

    async def _read_chunks(self, chunks: AsyncIterator[bytes], raw: list[bytes]) -> None:
        size = 0
        iterator = aiter(chunks)
        while True:
            try:
                if self._assembler.ended:
                    async with asyncio.timeout(AFTER_END_WAIT):
                        chunk = await anext(iterator)
                else:
                    chunk = await anext(iterator)
            except StopAsyncIteration:
                for event in self._parser.end():
                    self._take(event)
                return
            except TimeoutError:
                return  # the terminal event came; the server did not close: drop the rest
            size += len(chunk)
            if size > self._max_stream_bytes:
                cap = size_text(self._max_stream_bytes)
                raise AnswerRejected(f"the streamed answer is larger than {cap}")
            raw.append(chunk)
            for event in self._parser.feed(chunk):
                self._take(event)

    def _take(self, event: StreamEvent) -> None:
        if self._secret is not None and self._secret in event.data:  # an endpoint echoing the key
            event = StreamEvent(index=event.index, event=event.event,
                                data=event.data.replace(self._secret, self._replacement))
        if self._events.active:
            self._events.emit(ModelStreamEvent(turn=self._turn, attempt=self._attempt, index=event.index,
                                               event=event.event, data=event.data, dialect=self._dialect))
        updates = self._assembler.feed(event)
        if self._on_update is not None:
            for update in updates:
                self._on_update(update)


def _cut_reason(failure: Exception) -> str:
    if isinstance(failure, ReadTimeout):
        return f"no event for {failure.seconds:g} s"
    reason = str(getattr(failure, "reason", "") or failure)
    return "the connection closed" if reason.startswith("the server closed the connection") else reason


async def _close(chunks: AsyncIterator[bytes]) -> None:
    closing = getattr(chunks, "aclose", None)
    if closing is not None:
        await closing()


async def one_piece(data: bytes) -> AsyncIterator[bytes]:
    """A body already read whole, as the one piece of a stream (an SSE answer sent without
    its content type)."""
    yield data
