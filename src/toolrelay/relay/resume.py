"""Where a run recorded in a transcript goes on: the context rebuilt, the recorded results kept.

A run that was stopped (a kill, Ctrl-C, a lost worker) is continued by ``Relay.run(task,
resume=point)``: the next model request is built from the recorded context
(``conversation``: in replay mode the recorded input and outputs, in chain mode the
recorded ``previous_response_id``), and when the last recorded response asked for calls,
that turn is finished instead of asked again (``recorded``): a call whose output is
recorded keeps it, a call whose outcome is recorded (its output not yet rendered) has its
output rendered from it, and only the others are run. Which calls may run again at all
(a call sent without a recorded answer) is the caller's decision, made before: read-only
tools are retried, any other is ``uncertain`` and the run is not continued.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .stages.parse import FunctionCall, ModelTurn
from .stages.request import Conversation
from .stages.result import CallOutcome
from .streaming import TurnCalls

__all__ = ["ResumePoint"]


@dataclass(slots=True, kw_only=True)
class ResumePoint:
    """The state of a recorded run at the point it goes on from."""

    conversation: Conversation
    """The context the next request is built from (with ``recorded`` already added, its
    compaction item, if any, not yet applied: the run's context mode decides)."""
    turn: int
    """The turn the run goes on at: ``recorded``'s, else the one asked (again)."""
    recorded: ModelTurn | None = None
    """The last recorded response, when it asked for calls: its turn is finished, not asked again."""
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    """call_id → its recorded ``function_call_output`` (calls of ``recorded``)."""
    outcomes: dict[str, CallOutcome] = field(default_factory=dict)
    """call_id → its recorded outcome, whose output is still to be rendered."""
    unrecorded: set[str] = field(default_factory=set)
    """call_ids in ``outcomes`` whose outcome was not recorded, only the server's answer (the
    run stopped in between): the outcome read from the answer is recorded now."""
    earlier: list[CallOutcome] = field(default_factory=list)
    """The outcomes of the turns before (the run's result lists them)."""
    response_ids: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    """The token usage the recorded responses already add up to (``relay.stages.usage``)."""
    note: str = ""
    """What the run keeps and does again, in words (the ``run_resumed`` record says it)."""
    compaction_recorded: bool = False
    """Whether the transcript already holds the ``compaction`` record of ``recorded``'s turn
    (the run stopped after it): the resumed run, which applies ``recorded``'s compaction item
    in replay mode (``Conversation.compact``), writes the record only when it does not."""

    def still_to_run(self) -> list[FunctionCall]:
        """The calls of ``recorded`` that have neither an output nor an outcome recorded."""
        if self.recorded is None:
            return []
        known = self.outputs.keys() | self.outcomes.keys()
        return [call for call in self.recorded.calls if call.call_id not in known]

    async def finish(
        self, calls: TurnCalls, render: Callable[[CallOutcome, list[CallOutcome]], dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], list[CallOutcome]]:
        """Run the calls still to run on ``calls``; every call's output in the response's
        order (recorded, rendered from its recorded outcome, or new) and the outcomes."""
        assert self.recorded is not None
        to_run = self.still_to_run()
        ran = dict(zip((call.call_id for call in to_run), await calls.finish(to_run, []), strict=True))
        outcomes = {**self.outcomes, **{o.call_id: o for o in calls.outcomes() if o.call_id is not None}}
        outputs = []
        for call in self.recorded.calls:
            item = self.outputs.get(call.call_id) or ran.get(call.call_id)
            outputs.append(item if item is not None else render(outcomes[call.call_id], []))
        return outputs, [outcomes[c.call_id] for c in self.recorded.calls if c.call_id in outcomes]
