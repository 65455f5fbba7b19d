"""Link 7, next input, across a compaction: the one legal way for a replayed context to shrink.

A response whose output holds a ``compaction`` item (``relay/stages/compaction.py``) lets
the next request's input start at that item instead of carrying the whole context: the
items before it (request N's input and response N's output before the item) may be left
out. ``verify`` accepts such a request when

- it replays the context unchanged from a compaction item of the context on (the items
  after the item, in order), then only outputs, as a full replay would;
- every call left out had its output fed back before the compaction: the dropped items
  hold the ``function_call_output`` of each ``function_call`` among them (otherwise that
  output was never given to the model);
- nothing after the boundary refers to a call left out: an input's
  ``function_call_output`` belongs to a ``function_call`` the same input carries.

The last rule holds for every replayed request, compacted or not (without a compaction an
output without its call cannot happen honestly either); the message names the compaction
that dropped the call when one did. Each ``compaction`` record (the run's own account: the
turn, the items left out) must be what the requests show.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..events import CompactionEvent
from ..protocol.responses import FUNCTION_CALL, FUNCTION_CALL_OUTPUT
from ..relay.stages.compaction import last_compaction
from .evidence import seqs_of
from .facts import RunFacts
from .record import ModelRound, RunRecord
from .verdict import Finding

__all__ = ["Boundary", "boundary_of", "check_boundary", "check_compaction_records", "compaction_lines",
           "dangling_output", "dropped_at", "unanswered"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Boundary:
    """Where a request's input starts in the context it continues: a compaction item."""

    start: int
    """The compaction item's index in the context (request N's input + response N's output)."""
    turn: int | None
    """The turn whose response made the item (None: an older one, carried in the input)."""

    @property
    def named(self) -> str:
        return f"the compaction of turn {self.turn}" if self.turn is not None else "an earlier compaction"


def boundary_of(prefix: list[Any], items: list[Any], previous: ModelRound, carried: int) -> Boundary | None:
    """The compaction item of ``prefix`` (the context: ``carried`` input items, then
    response ``previous``'s output) that ``items`` start from and replay unchanged to the
    end of the context, the latest such; None when there is none."""
    end = len(prefix)
    while (start := last_compaction(prefix[:end])) is not None:
        if start > 0 and items[: len(prefix) - start] == prefix[start:]:
            return Boundary(start=start, turn=previous.turn if start >= carried else None)
        end = start
    return None


def check_boundary(
    current: ModelRound, previous: ModelRound, prefix: list[Any], boundary: Boundary,
    tail_problem: Callable[[list[Any]], str | None],
) -> Finding:
    """A request whose input starts at ``boundary``: its dropped calls were answered, and
    what follows the carried context is only outputs (``tail_problem``) of calls it carries."""
    where = f"request {current.turn}"
    dropped, kept = prefix[: boundary.start], len(prefix) - boundary.start
    items = _items(current)
    problem = unanswered(dropped, where, boundary) or tail_problem(items[kept:]) \
        or dangling_output(items, kept, where, boundary)
    if problem is not None:
        return _finding(False, problem, current, previous)
    said = (f"{where} starts from the item of {boundary.named}: {len(dropped)} earlier "
            f"item(s) left out (each dropped call's output was fed back before it), the {kept} item(s) "
            "from it on replayed unchanged, then the outputs")
    return _finding(True, said, current, previous)


def dangling_output(
    items: list[Any], start: int, where: str, boundary: Boundary | None, *, answering: set[Any] | None = None
) -> str | None:
    """The first ``function_call_output`` of ``items[start:]`` whose ``function_call`` is
    not in ``items``, in words; None when every output's call is carried. ``answering``:
    call_ids the outputs are known to answer (the previous response's calls, carried):
    outputs of those alone need no search of the whole input (a long run stays linear)."""
    if answering is not None and all(item.get("call_id") in answering
                                     for item in _of_type(items[start:], FUNCTION_CALL_OUTPUT)):
        return None
    called = {item.get("call_id") for item in _of_type(items, FUNCTION_CALL)}
    for index in range(start, len(items)):
        item = items[index]
        if _is(item, FUNCTION_CALL_OUTPUT) and item.get("call_id") not in called:
            dropped = f", which {boundary.named} left out" if boundary else ""
            return (f"{where} input[{index}] feeds back the output of call {item.get('call_id')}, whose "
                    f"function_call the input does not carry{dropped}: nothing after a compaction may "
                    "refer to a call it dropped")
    return None


def check_compaction_records(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """next_input: each ``compaction`` record is the boundary the next request shows, and
    each request that starts from a response's compaction item has its record."""
    records = run.of_kind(CompactionEvent.kind)
    findings = _unrecorded(run, {record.get("turn") for record in records})
    for record in records:
        turn = record.get("turn")
        later = run.round(turn + 1) if isinstance(turn, int) else None
        if later is None or later.request is None:
            continue  # the run ended at the compaction: no later input to hold it to
        dropped = dropped_at(run, later)
        ok = dropped == record.get("dropped")
        shown = f"leaves out {dropped} item(s)" if dropped is not None else "starts from no compaction item"
        said = (f"the compaction record of turn {turn} says {record.get('dropped')} item(s) were left "
                f"out, and request {later.turn} {shown}")
        findings.append(Finding(link="next_input", ok=ok, message=said, check="compaction", turn=later.turn,
                                seqs=seqs_of(record, later.request)))
    return findings


def _unrecorded(run: RunRecord, recorded: set[Any]) -> list[Finding]:
    """A request that leaves out items at the compaction item of the previous response, with
    no ``compaction`` record of that turn (a resumed run that applied it must write it too)."""
    findings = []
    for current in run.rounds[1:]:
        previous = run.round(current.turn - 1)
        if previous is None or previous.turn in recorded or last_compaction(previous.output()) is None:
            continue
        dropped = dropped_at(run, current)
        if dropped is None or current.request is None:
            continue
        said = (f"request {current.turn} leaves out {dropped} item(s) at the compaction of turn "
                f"{previous.turn}, but no compaction record says so: the run must record each boundary")
        findings.append(Finding(link="next_input", ok=False, message=said, check="compaction",
                                turn=current.turn, seqs=seqs_of(previous.response, current.request)))
    return findings


def compaction_lines(run: RunRecord, current: ModelRound) -> list[str]:
    """``explain``'s row under a response with a compaction item: what the next request left out."""
    if last_compaction(current.output()) is None:
        return []
    later = run.round(current.turn + 1)
    dropped = dropped_at(run, later) if later is not None else None
    return [f"  compaction at turn {current.turn}, {dropped or 0} items dropped"
            + (f" (request {current.turn + 1} starts from the compaction item)" if dropped else "")]


def dropped_at(run: RunRecord, current: ModelRound) -> int | None:
    """How many items of the context request ``current`` left out at a compaction, or None."""
    previous = run.round(current.turn - 1)
    if previous is None or current.request is None or "previous_response_id" in current.body:
        return None
    given = previous.body.get("input")
    given = given if isinstance(given, list) else []
    prefix = given + previous.output()
    items = _items(current)
    if items[: len(prefix)] == prefix:
        return None
    boundary = boundary_of(prefix, items, previous, len(given))
    return boundary.start if boundary is not None else None


def unanswered(dropped: list[Any], where: str, boundary: Boundary) -> str | None:
    """The first call among the ``dropped`` items whose output is not among them, in words."""
    answered = {item.get("call_id") for item in _of_type(dropped, FUNCTION_CALL_OUTPUT)}
    for item in _of_type(dropped, FUNCTION_CALL):
        if item.get("call_id") not in answered:
            return (f"{where} leaves out call {item.get('call_id')} ({item.get('name')}) at "
                    f"{boundary.named}, but its output was never fed back before the compaction: "
                    "the model never got its result")
    return None


def _is(item: Any, kind: str) -> bool:
    return isinstance(item, dict) and item.get("type") == kind


def _of_type(items: list[Any], kind: str) -> list[dict[str, Any]]:
    return [item for item in items if _is(item, kind)]


def _items(current: ModelRound) -> list[Any]:
    items = current.body.get("input")
    return items if isinstance(items, list) else []


def _finding(ok: bool, message: str, current: ModelRound, previous: ModelRound) -> Finding:
    return Finding(link="next_input", ok=ok, message=message, check="compaction", turn=current.turn,
                   seqs=seqs_of(previous.response, current.request))
