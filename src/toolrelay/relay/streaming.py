"""One turn's calls, started as early as the run allows: the streamed turn.

While a streamed response arrives, the model client hands each update to
``TurnCalls.on_update`` (inside its read loop: nothing here blocks, work is scheduled).
A ``function_call`` item is read the moment its ``output_item.done`` arrives and, when
the early policy allows its tool, started at once; the rest start when the response is
complete (``finish``). Outputs still go back in the calls' order, one per call, and each
is rendered only once the whole response is known (a later item may reuse its call_id,
and the refusal of that duplicate belongs in its output). A response that ends any other
way stops every call it started (``stop``): the running ones are cancelled (their server
is sent ``notifications/cancelled``), every started call's outcome is kept, and nothing
is fed back. Consent is asked inside the call's own task, so a prompt never holds up the
stream. A started call is checked against the whole response: one the final response
names as another call under the same call_id (``contradiction``), or drops
(``drop_notices``), is the endpoint contradicting itself, and its early result is never
fed back as another call's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal

from ..errors import ModelStreamInconsistent
from ..protocol import stream
from ..protocol.responses import FUNCTION_CALL, MESSAGE
from .run_events import CallFinished, CallStarted, ReasoningDelta, RunListener, TextDelta, TextDone
from .stages.arguments import clip
from .stages.context import Stopped, StopReason
from .stages.parse import FunctionCall, message_text, read_call
from .stages.result import CallOutcome, status_words

__all__ = ["EARLY_POLICIES", "CallRunner", "EarlyPolicy", "TurnCalls"]

EarlyPolicy = Literal["all", "read-only", "none"]
EARLY_POLICIES: Final[tuple[EarlyPolicy, ...]] = ("all", "read-only", "none")
"""``all``: every call starts as its item closes; ``read-only`` (default): only calls of
tools annotated ``readOnlyHint: true``; ``none``: every call waits for the whole response."""

CallRunner = Callable[[FunctionCall, StopReason, Stopped], Awaitable[CallOutcome]]
"""Runs one call to its outcome (the catalog's dispatch, with the run's approver and limits)."""
Render = Callable[[CallOutcome, list[CallOutcome]], dict[str, Any]]
"""An outcome (and the refusals of duplicates of its call_id) → its function_call_output."""


class TurnCalls:
    """Every call of one model response: when each starts, and their outputs in order."""

    def __init__(
        self,
        group: asyncio.TaskGroup,
        *,
        turn: int,
        run_call: CallRunner,
        render: Render,
        starts_early: Callable[[FunctionCall], bool],
        stop_reason: StopReason,
        concurrency: int,
        listener: RunListener | None = None,
    ) -> None:
        self._group = group
        self._turn = turn
        self._run_call = run_call
        self._render = render
        self._starts_early = starts_early
        self._run_stop_reason = stop_reason
        self._gate = asyncio.Semaphore(max(1, concurrency))
        self._listener = listener
        self._tasks: dict[str, asyncio.Task[dict[str, Any] | None]] = {}
        self._calls: dict[str, FunctionCall] = {}
        """Each started call as it was when it started (its stream item, if early)."""
        self._outcomes: dict[str, CallOutcome] = {}
        self._settled = asyncio.Event()
        self._refused: list[CallOutcome] = []
        self._answered: set[str] = set()
        """call_ids of the finished response: only these get an output."""
        self._order: list[str] = []
        """call_ids in the response's order (then any the response does not hold)."""
        self._why_stopped: str | None = None
        self._written: set[object] = set()
        """Message items (by id, else output index) whose text came as deltas."""

    @property
    def started(self) -> list[str]:
        """call_ids started so far, in the order they started."""
        return list(self._tasks)

    # -- while the response streams --------------------------------------------------------

    def on_update(self, update: stream.Update) -> None:
        """The model client's callback, once per update, inside its read loop."""
        if isinstance(update, stream.TextDelta):
            self._written.add(update.item_id or update.output_index)
            if self._listener is not None:
                self._listener(TextDelta(turn=self._turn, text=update.delta, item_id=update.item_id))
        elif isinstance(update, stream.ReasoningDelta):
            if self._listener is not None:
                self._listener(ReasoningDelta(turn=self._turn, text=update.delta, summary=update.summary,
                                              item_id=update.item_id))
        elif isinstance(update, stream.ItemDone):
            self._item_done(update.output_index, update.item)

    def _item_done(self, index: int, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == MESSAGE:
            text = message_text(item)
            if text is not None and (_item_id(item) or index) not in self._written:
                # some servers send a message whole, with no deltas: it is still shown once
                self._tell(TextDelta(turn=self._turn, text=text, item_id=_item_id(item)))
            if text is not None:
                self._tell(TextDone(turn=self._turn, text=text, item_id=_item_id(item)))
            return
        if kind != FUNCTION_CALL:
            return
        call = read_call(item, index)
        if isinstance(call, FunctionCall) and call.call_id not in self._tasks and self._starts_early(call):
            self._start(call, early=True)

    def whole_messages(self, output: list[dict[str, Any]]) -> None:
        """A turn that was not streamed: each message's text, as one delta."""
        if self._listener is None:  # nobody to tell: no events built
            return
        for item in output:
            text = message_text(item) if isinstance(item, dict) and item.get("type") == MESSAGE else None
            if text is not None:
                self._tell(TextDelta(turn=self._turn, text=text, item_id=_item_id(item)))
                self._tell(TextDone(turn=self._turn, text=text, item_id=_item_id(item)))

    # -- once the response is known ----------------------------------------------------------

    async def finish(self, calls: list[FunctionCall], refused: list[CallOutcome]) -> list[dict[str, Any]]:
        """Start the calls still waiting; every call's output, in the calls' order."""
        self._answered = {call.call_id for call in calls}
        self._refused = refused
        tasks = [self._tasks.get(call.call_id) or self._start(call, early=False) for call in calls]
        self._settled.set()
        strays = [call_id for call_id in self._tasks if call_id not in self._answered]
        self._order = [call.call_id for call in calls] + strays
        # started from a stream item the response does not hold: run out, not answered
        await asyncio.gather(*(self._tasks[call_id] for call_id in strays))
        return [item for item in await asyncio.gather(*tasks) if item is not None]

    def contradiction(self, calls: list[FunctionCall]) -> ModelStreamInconsistent | None:
        """The stream fault, when the final response's ``calls`` give a started call's
        call_id another name or other arguments (each such call named), else None."""
        found = []
        for final in calls:
            started = self._calls.get(final.call_id)
            if started is not None and (started.alias, started.arguments_text) != (
                    final.alias, final.arguments_text):
                found.append((started, final))
        return _contradiction(self._turn, found) if found else None

    def drop_notices(self, calls: list[FunctionCall]) -> list[str]:
        """What a user is told of each started call whose call_id the final response
        does not hold."""
        held = {call.call_id for call in calls}
        return [_dropped(self._turn, self._outcomes[call_id]) for call_id in self._calls
                if call_id not in held and call_id in self._outcomes]

    def outcomes(self) -> list[CallOutcome]:
        """The outcome of every call that started: in the response's order once it is
        known, else in the order they started."""
        order = self._order or list(self._tasks)
        return [self._outcomes[call_id] for call_id in order if call_id in self._outcomes]

    async def stop(self, why: str) -> list[CallOutcome]:
        """The response will not be answered: cancel the calls still running (each outcome
        says ``why``); the outcome of every call that started."""
        self._why_stopped = why
        if not self._tasks:  # nothing started (a turn that answers): no turn of the loop to wait
            return []
        # one turn of the event loop first: a call whose answer has already arrived ends
        # with it, so only calls still waiting on their server are cancelled
        await asyncio.sleep(0)
        running = [task for task in self._tasks.values() if not task.done()]
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running)
        return self.outcomes()

    # -- one call ---------------------------------------------------------------------------

    def _start(self, call: FunctionCall, *, early: bool) -> asyncio.Task[dict[str, Any] | None]:
        task = self._group.create_task(self._call(call, early))
        self._tasks[call.call_id] = task
        self._calls[call.call_id] = call
        return task

    async def _call(self, call: FunctionCall, early: bool) -> dict[str, Any] | None:
        async with self._gate:
            if self._listener is not None:
                self._listener(CallStarted(turn=self._turn, call_id=call.call_id, alias=call.alias,
                                           arguments=call.arguments_text, early=early))
            outcome = await self._run_call(call, self._stop_reason, self._keep)
        self._keep(outcome)
        # rendered once the response is whole: a later item may reuse this call_id
        await self._settled.wait()
        if call.call_id not in self._answered:
            return None
        return self._render(outcome, [r for r in self._refused if r.call_id == call.call_id])

    def _keep(self, outcome: CallOutcome) -> None:
        if outcome.call_id is not None:
            self._outcomes[outcome.call_id] = outcome
        if self._listener is not None:
            self._listener(CallFinished(turn=self._turn, outcome=outcome))

    def _stop_reason(self) -> str:
        return self._why_stopped or self._run_stop_reason()

    def _tell(self, event: Any) -> None:
        if self._listener is not None:
            self._listener(event)


def _item_id(item: dict[str, Any]) -> str | None:
    value = item.get("id")
    return value if isinstance(value, str) else None


def _contradiction(turn: int, found: list[tuple[FunctionCall, FunctionCall]]) -> ModelStreamInconsistent:
    """The stream fault of a final response that names started calls as other calls."""
    said = "; ".join(
        f"{started.call_id} started as {_shown(started)} when its item closed, but the final response "
        f"(response.completed) says {final.call_id} is {_shown(final)}; {_shown(final)} was not run"
        for started, final in found
    )
    message = (f"the model endpoint's streamed answer to turn {turn} contradicts itself: {said}; "
               "no output was fed back (the early result belongs to the call that ran, not to this one)")
    return ModelStreamInconsistent(message, call_id=found[0][0].call_id)


def _dropped(turn: int, outcome: CallOutcome) -> str:
    ended = status_words(outcome.status, outcome.refused_by)
    return (f"the model endpoint's final response to turn {turn} drops {outcome.call_id} "
            f"({outcome.alias} {clip(outcome.arguments_text or '', 200)}), which had started when its item "
            f"closed: it ended {ended}, and its output is not fed back")


def _shown(call: FunctionCall) -> str:
    return f"{call.alias} {clip(call.arguments_text, 200)}"
