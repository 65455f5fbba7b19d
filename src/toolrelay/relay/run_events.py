"""What a run tells its caller while it runs: ``async for event in relay.stream(task)``.

The answer text as the model writes it, reasoning summaries, each call as it starts and
finishes, each turn and the run as they end. These are for programs and people watching
a run (the CLI prints them); the transcript records the wire and the steps instead
(``events.py``), so nothing here is written twice. A turn the endpoint did not stream
still gives each message's text, as one delta. The last event is always ``RunFinished``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from .stages.result import CallOutcome
from .stages.run_result import RunResult

__all__ = [
    "CallFinished",
    "CallStarted",
    "ReasoningDelta",
    "RunEvent",
    "RunFinished",
    "RunListener",
    "TextDelta",
    "TextDone",
    "TurnFinished",
    "for_task",
    "iterate_run",
    "stream_run",
    "tell_both",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    """A piece of the answer text, as it arrived."""

    kind: ClassVar[str] = "text_delta"
    turn: int
    text: str
    item_id: str | None = None
    """The message item it belongs to."""
    task_id: str | None = None
    """The batch task it belongs to (None outside a batch)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDone:
    """A message item closed: its whole text (what its deltas added up to)."""

    kind: ClassVar[str] = "text_done"
    turn: int
    text: str
    item_id: str | None = None
    task_id: str | None = None
    """The batch task it belongs to (None outside a batch)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningDelta:
    """A piece of the model's reasoning: a summary (``summary``), or raw reasoning text
    from endpoints that send it (gpt-oss on vLLM)."""

    kind: ClassVar[str] = "reasoning_delta"
    turn: int
    text: str
    summary: bool = True
    item_id: str | None = None
    task_id: str | None = None
    """The batch task it belongs to (None outside a batch)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CallStarted:
    """A function call was handed to its server's route (parse → ... → tools/call)."""

    kind: ClassVar[str] = "call_started"
    turn: int
    call_id: str
    alias: str
    arguments: str
    """The model's arguments text, exactly."""
    early: bool = False
    """Started as its item closed, while the model was still writing the response."""
    task_id: str | None = None
    """The batch task it belongs to (None outside a batch)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CallFinished:
    """A call ended: ``outcome`` says how (ok, tool error, cancelled, ...)."""

    kind: ClassVar[str] = "call_finished"
    turn: int
    outcome: CallOutcome
    task_id: str | None = None
    """The batch task it belongs to (None outside a batch)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnFinished:
    """A model response and the calls it asked for are done."""

    kind: ClassVar[str] = "turn_finished"
    turn: int
    status: str
    """The response's status (completed, incomplete, failed, ...)."""
    response_id: str | None = None
    streamed: bool = False
    calls: list[CallOutcome] = field(default_factory=list)
    task_id: str | None = None
    """The batch task it belongs to (None outside a batch)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished:
    """The run ended; ``result`` is what ``run()`` returns."""

    kind: ClassVar[str] = "run_finished"
    result: RunResult
    task_id: str | None = None
    """The batch task it belongs to (None outside a batch)."""


RunEvent = TextDelta | TextDone | ReasoningDelta | CallStarted | CallFinished | TurnFinished | RunFinished
RunListener = Callable[[RunEvent], None]
"""Called with each event, in order, on the run's event loop; it must not block."""


def for_task(task_id: str, listener: RunListener) -> RunListener:
    """``listener`` told each event of the batch task ``task_id`` with its ``task_id`` set
    (the tasks of a batch run at once: their events interleave)."""

    def tell(event: RunEvent) -> None:
        listener(replace(event, task_id=task_id))

    return tell


def tell_both(first: RunListener, second: RunListener) -> RunListener:
    """One listener telling two, in order."""

    def tell(event: RunEvent) -> None:
        first(event)
        second(event)

    return tell


async def iterate_run(start: Callable[[RunListener], Awaitable[Any]]) -> AsyncGenerator[RunEvent, None]:
    """The events of the run ``start(listener)`` runs, as an async iterator. The run's own
    exception (a ModelError, say) is raised after its ``RunFinished``; closing the iterator
    early cancels the run (``contextlib.aclosing`` closes it when the loop is left)."""
    queue: asyncio.Queue[RunEvent | None] = asyncio.Queue()
    running = asyncio.ensure_future(start(queue.put_nowait))
    running.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        while (event := await queue.get()) is not None:
            yield event
        await running
    finally:
        if not running.done():
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)


def stream_run(
    start: Callable[[RunListener], Awaitable[Any]], *, also: RunListener | None = None
) -> AsyncGenerator[RunEvent, None]:
    """``iterate_run`` of ``start`` with ``also`` (the caller's own ``on_event``) told each
    event first: the events ``run_stream`` and ``Conversation.stream`` give, the caller's
    listener still hearing them all."""

    def begin(listener: RunListener) -> Awaitable[Any]:
        return start(listener if also is None else tell_both(also, listener))

    return iterate_run(begin)
