"""A conversation (``toolrelay.Conversation``): every user turn after the first, judged.

A conversation is one run whose turns are numbered through it; each user turn after the
first starts with a ``user_turn`` record (its number, the model turn it starts at, the
items it adds), after the ``run_end`` of the user turn before. Three facts per user turn:

- placement (correlation): it starts where the conversation was, at the turn after the last
  one requested, after the previous user turn had ended, numbered in order;
- the previous user turn's ending (model_response): the answer its ``run_end`` presents is
  the text of its last response, and its token usage is what the responses so far add up
  to (``check_answer`` and ``check_usage`` judge the last user turn's);
- context (next_input): its first request carries the whole conversation so far. In
  replay mode: the previous request's input, then the previous response's output items,
  unchanged and in order (so, by the per-request context check, every earlier user turn's
  messages, calls and outputs), then only outputs of the previous response's calls and the
  items the user turn adds. In chain mode: ``previous_response_id`` names the previous
  response and the input holds only those outputs and the added items.

``context.check_context`` leaves these requests to this module.
"""

from __future__ import annotations

from typing import Any

from ..events import RunEndEvent, UserTurnEvent
from ..protocol.responses import FUNCTION_CALL_OUTPUT
from ..relay.stages.dialects import known_reader
from ..relay.stages.request import user_message
from ..relay.stages.usage import add_counts, usage_text
from .compaction import boundary_of, unanswered
from .evidence import seqs_of
from .facts import RunFacts
from .jsonpath import excerpt, first_difference, item_label
from .record import ModelRound, RunRecord
from .verdict import Finding

__all__ = ["check_user_turn_endings", "check_user_turn_places", "check_user_turns", "user_turn_starts"]

Event = dict[str, Any]


def user_turn_starts(run: RunRecord) -> dict[int, Event]:
    """Model turn → the ``user_turn`` record that starts a user turn there."""
    return {event["turn"]: event for event in _user_turns(run) if isinstance(event.get("turn"), int)}


def _user_turns(run: RunRecord) -> list[Event]:
    return run.of_kind(UserTurnEvent.kind)


def _added(event: Event) -> list[Any]:
    """The items the user turn adds after the context (its recorded ``input``)."""
    given = event.get("input")
    return given if isinstance(given, list) else [user_message(str(event.get("task")))]


# -- placement --------------------------------------------------------------------------


def check_user_turn_places(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """correlation: each user turn starts after the previous one ended, at the next turn."""
    findings: list[Finding] = []
    start = run.run_start
    for number, event in enumerate(_user_turns(run), start=2):
        seq = event["seq"]
        problem = _place_problem(run, event, number, start)
        said = f"user turn {event.get('number')} (user_turn, seq {seq})"
        if problem is None:
            message = f"{said} starts at turn {event['turn']}, after user turn {number - 1} ended"
        else:
            message = f"{said} {problem}"
        findings.append(Finding(link="correlation", ok=problem is None, check="user_turn_place",
                                turn=event.get("turn") if isinstance(event.get("turn"), int) else None,
                                seqs=(seq,), message=message))
        start = event
    return findings


def _place_problem(run: RunRecord, event: Event, number: int, start: Event | None) -> str | None:
    seq, turn = event["seq"], event.get("turn")
    if start is None or start["seq"] > seq:
        return "comes before the conversation began (no run_start before it)"
    if event.get("number") != number:
        return f"is numbered {event.get('number')!r}, but it is user turn {number} of the conversation"
    ends = [e for e in run.of_kind(RunEndEvent.kind) if start["seq"] < e["seq"] < seq]
    if not ends:
        return f"starts before user turn {number - 1} ended (no run_end after seq {start['seq']})"
    asked = max((r.turn for r in run.rounds if r.request is not None and r.request["seq"] < seq), default=0)
    if turn != asked + 1:
        return (f"starts at turn {turn!r}, but the conversation had asked turn {asked}: "
                f"it goes on at {asked + 1}")
    return None


# -- the previous user turn's ending ----------------------------------------------------


def check_user_turn_endings(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """model_response: each user turn that a later one follows presented its last
    response's text as its answer, and the usage so far."""
    findings: list[Finding] = []
    for event in _user_turns(run):
        before = [e for e in run.of_kind(RunEndEvent.kind) if e["seq"] < event["seq"]]
        if before:
            findings.extend(_ending(run, facts, before[-1], event))
    return findings


def _ending(run: RunRecord, facts: RunFacts, end: Event, event: Event) -> list[Finding]:
    turns = end.get("turns")
    if not isinstance(turns, int):
        return []
    number = event.get("number")
    which = f"user turn {number - 1 if isinstance(number, int) else '?'}"
    findings = []
    if end.get("status") == "completed":
        turn = facts.turn(turns)
        given = (turn.text or "") if turn is not None and not turn.calls else None
        ok = given is not None and given == end.get("final_text")
        if ok:
            message = f"{which}'s answer is the message text of response {turns}: {excerpt(given)}"
        else:
            message = (f"{which}'s answer, {excerpt(end.get('final_text'))}, is not the text of its "
                       f"last response (turn {turns}): {excerpt(given)}")
        findings.append(Finding(link="model_response", ok=ok, check="user_turn_answer", turn=turns,
                                seqs=seqs_of(end), message=message))
    if "usage" in end:
        summed: dict[str, int] = {}
        for current in run.rounds[:turns]:
            reader = known_reader(current.dialect)
            if reader is not None:
                summed = add_counts(summed, reader.usage(current.answer))
        ok = end["usage"] == summed
        said = usage_text(summed) or "no counts"
        message = (f"{which}'s run_end counts the tokens of the {turns} turn(s) so far: {said}" if ok else
                   f"{which}'s run_end claims the tokens {usage_text(end['usage']) or repr(end['usage'])}, "
                   f"but the {turns} turn(s) so far add up to {said}")
        findings.append(Finding(link="model_response", ok=ok, check="user_turn_usage", seqs=seqs_of(end),
                                message=message))
    return findings


# -- context ----------------------------------------------------------------------------


def check_user_turns(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """next_input: each later user turn's first request carries the conversation so far."""
    findings: list[Finding] = []
    for turn, event in user_turn_starts(run).items():
        current, previous = run.round(turn), run.round(turn - 1)
        if current is None or current.request is None or previous is None or previous.answer is None:
            continue  # not asked yet (unfinished), or the previous turn's own checks say why
        findings.append(_carried(run, current, previous, event))
    return findings


def _carried(run: RunRecord, current: ModelRound, previous: ModelRound, event: Event) -> Finding:
    where = f"request {current.turn} (user turn {event.get('number')})"
    items = current.body.get("input")
    items = items if isinstance(items, list) else []
    added = _added(event)
    if "previous_response_id" in current.body:
        problem, said = _chain_problem(current, previous, items, added, where)
    elif run.context_mode == "chain" and isinstance(previous.answer, dict) and previous.answer.get("id"):
        problem, said = f"chain mode, but {where} has no previous_response_id", ""
    else:
        problem, said = _replay_problem(previous, items, added, where)
    seqs = seqs_of(previous.response, event, current.request)
    if problem is not None:
        return Finding(link="next_input", ok=False, check="user_turn_context", turn=current.turn,
                       seqs=seqs, message=problem)
    return Finding(link="next_input", ok=True, check="user_turn_context", turn=current.turn, seqs=seqs,
                   message=f"{where} {said}, then the user's {len(added)} new item(s)")


def _chain_problem(current: ModelRound, previous: ModelRound, items: list[Any], added: list[Any],
                   where: str) -> tuple[str | None, str]:
    named = current.body.get("previous_response_id")
    response_id = previous.answer.get("id") if previous.answer else None
    if named != response_id:
        return f"{where}'s previous_response_id is {named!r}, the previous response is {response_id!r}", ""
    problem = _tail_problem(items, previous, added, where)
    return problem, f"continues {response_id} (previous_response_id)"


def _replay_problem(previous: ModelRound, items: list[Any], added: list[Any],
                    where: str) -> tuple[str | None, str]:
    given = previous.body.get("input")
    given = given if isinstance(given, list) else []
    prefix = given + previous.output()
    boundary = boundary_of(prefix, items, previous, len(given)) if items[: len(prefix)] != prefix else None
    if boundary is not None:  # the conversation goes on from a compaction item (compaction.py)
        kept = len(prefix) - boundary.start
        problem = unanswered(prefix[: boundary.start], where, boundary) \
            or _tail_problem(items[kept:], previous, added, where)
        said = f"goes on from the item of {boundary.named} ({boundary.start} earlier item(s) left out)"
        return problem, said
    for index, wanted in enumerate(prefix):
        if index < len(items) and items[index] == wanted:
            continue
        origin = (f"input[{index}] of request {previous.turn}" if index < len(given)
                  else f"output[{index - len(given)}] of response {previous.turn}")
        near = items[index] if index < len(items) else None
        if isinstance(near, dict) and isinstance(wanted, dict) and item_label(near) == item_label(wanted):
            return (f"{where} changed {item_label(wanted)} ({origin}) at input[{index}]."
                    f"{first_difference(wanted, near)}: a later user turn carries the conversation "
                    "unchanged"), ""
        return (f"{where} dropped {item_label(wanted)} ({origin}): a later user turn must carry every "
                "earlier turn's items unchanged"), ""
    problem = _tail_problem(items[len(prefix):], previous, added, where)
    said = (f"carries the conversation so far: request {previous.turn}'s {len(given)} item(s) and response "
            f"{previous.turn}'s {len(previous.output())} output item(s), unchanged and in order")
    return problem, said


def _tail_problem(tail: list[Any], previous: ModelRound, added: list[Any], where: str) -> str | None:
    """The items after the carried context: outputs of the previous response's calls, then
    exactly the ones the user turn added."""
    cut = len(tail) - len(added)
    if cut < 0 or first_difference(added, tail[cut:]) is not None:
        return (f"{where} does not end with the {len(added)} item(s) its user_turn record adds "
                f"({excerpt(added)}): it ends with {excerpt(tail[max(cut, 0):])}")
    calls = {call.call_id for call in previous.calls}
    for item in tail[:cut]:
        is_output = isinstance(item, dict) and item.get("type") == FUNCTION_CALL_OUTPUT
        if not (is_output and item.get("call_id") in calls):
            return (f"{where} adds {item_label(item)} between the carried context and the user's message: "
                    f"only outputs of response {previous.turn}'s calls may come there")
    return None
