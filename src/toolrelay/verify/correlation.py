"""Link 6, correlation: the two id domains, each paired within itself, linked by toolrelay.

MCP side: in each session (server + connection), every request id is unique and answered
by exactly one response with that id; a request may stay unanswered only when its call
failed in transport or was cancelled, the server exited, or the run did not finish.
Model side: every ``call_id`` is unique, every function_call gets exactly one
``function_call_output`` in the next request, and no output is without its call. The link
between them is recorded (the MCP events carry the call_id), and the outcome names the
same MCP id: checked, never guessed.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from itertools import filterfalse, pairwise, repeat
from operator import attrgetter, itemgetter
from typing import Any, Final

from ..events import CallParsed
from ..protocol.responses import FUNCTION_CALL_OUTPUT
from .evidence import call_finding, seqs_of
from .facts import RunFacts
from .mcp_pairs import Session, broken_pair, walk_mcp
from .mcp_side import tagged_for_another
from .record import CallTrace, ModelRound, RunRecord
from .verdict import Finding
from .walked import MCP_WALK, REQUEST_METHODS, SEQS_IN_ORDER, keep, kept

__all__ = ["check_call_links", "check_event_order", "check_mcp_pairs", "check_outputs", "link_of_call"]

_TOLERATED_ENDINGS = frozenset({"aborted", "timeout", "error", None})
_SEQ = itemgetter("seq")
_CALL_ID: Final = attrgetter("call_id")
_CALL_ID_OF: Final = itemgetter("call_id")
_SECOND: Final = itemgetter(1)


def check_event_order(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """correlation: the record's own ids, the seq numbers, run on without a gap or repeat
    (every event is written once, in order), so no line was dropped, copied or moved."""
    seqs = list(map(_SEQ, run.events))
    previous = seqs[-1] if seqs else None
    in_order = not seqs or all(map(operator.eq, seqs, range(seqs[0], seqs[0] + len(seqs))))  # in C, no list
    keep(facts, SEQS_IN_ORDER, in_order)  # for check_answer_order
    if not in_order:  # the gap found here
        for before, seq in pairwise(seqs):
            if seq != before + 1:
                return [Finding(link="correlation", ok=False, check="event_order", seqs=(before, seq),
                                message=f"event seq {seq} follows seq {before}: a line of the transcript is "
                                        "missing, repeated or out of order")]
    return [Finding(link="correlation", ok=True, check="event_order",
                    message=f"{len(run.events)} events, seq {run.events[0]['seq'] if run.events else 0} "
                            f"to {previous}, each once and in order")]


def check_mcp_pairs(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """correlation: MCP ids unique per session, each request answered once by its id."""
    walk = kept(facts, MCP_WALK) or walk_mcp(run.mcp)  # walked with the listings, most often (facts)
    sessions, findings, methods = walk.sessions, list(walk.findings), walk.methods
    for exit_event in run.exits:
        found = sessions.get((exit_event.get("server"), exit_event.get("connection")))
        if found is not None:
            found.exited = True
    if methods is not None:
        keep(facts, REQUEST_METHODS, frozenset(methods))
    ended: dict[str, str | None] | None = None  # made only when a request is left open
    for session in sessions.values():
        if session.open:
            ended = ended if ended is not None else {c.call_id: c.status for c in run.calls}
            findings.extend(_unanswered(session, run, ended))
        findings.append(
            Finding(
                link="correlation",
                ok=True,
                check="mcp_pairs",
                server=session.server,
                message=f"{session.name}: {len(session.seen)} request id(s), unique; "
                f"{session.answered} answered by their own id",
            )
        )
    return findings


def _unanswered(session: Session, run: RunRecord, ended: dict[str, str | None]) -> list[Finding]:
    found: list[Finding] = []
    resumed = run.resumes[-1]["seq"] if run.resumes else 0
    for mcp_id, request in session.open.items():
        call_status = ended.get(request.get("call_id"))  # type: ignore[arg-type]
        if (
            session.exited
            or request["seq"] < resumed  # the run was stopped there; the resumed run judged it
            or mcp_id in session.cancelled
            or run.status in _TOLERATED_ENDINGS
            or call_status in ("transport_error", "cancelled")
        ):
            continue
        found.append(
            broken_pair(
                f"{request.get('method')} mcp id {mcp_id} on {session.name} was never answered, "
                "yet the run ended normally",
                request,
                mcp_id=mcp_id,
                server=session.server,
                call_id=request.get("call_id"),
            )
        )
    return found


def check_call_links(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """correlation: each call's MCP messages and outcome name the same MCP id."""
    findings = facts.judged(link_of_call)
    findings.extend(
        Finding(
            link="correlation",
            ok=False,
            check="call_links",
            call_id=event.get("call_id"),
            seqs=seqs_of(event),
            message=f"a {event['kind']} event names call_id {event.get('call_id')}, "
            "which no model response holds",
        )
        for event in run.orphans
        if event["kind"] != CallParsed.kind
    )
    return findings


def link_of_call(call: CallTrace, facts: RunFacts) -> Finding | None:
    """check_call_links' finding about one call."""
    if not call.mcp_requests:
        return None
    request = call.mcp_requests[0]
    mcp_id = request.get("message", {}).get("id")
    where = (request.get("server"), request.get("connection"))
    response = call.mcp_responses[0] if call.mcp_responses else None
    owner = tagged_for_another(call, facts)
    problem = (
        f"the tools/call tagged {call.call_id} (mcp id {mcp_id}) carries the arguments of {owner.call_id}: "
        "the MCP events' call_id tags are swapped"
        if owner is not None
        else _link_problem(call, mcp_id, where, response)
    )
    if problem is not None:
        return call_finding(call, "correlation", False, f"{call.call_id}: {problem}", "call_links", request,
                            response, call.first("outcomes"))
    return call_finding(call, "correlation", True, lambda: linked_said(call, mcp_id, where), "call_links",
                        request, response)


def linked_said(call: CallTrace, mcp_id: Any, where: tuple[Any, Any]) -> str:
    """The words of the finding that the call's tools/call (``mcp_id`` on ``where``: its
    server and connection) and its answer carry its ids."""
    return f"{call.call_id} ↔ mcp id {mcp_id} on {where[0]} (connection {where[1]})"


def _link_problem(
    call: CallTrace, mcp_id: Any, where: tuple[Any, Any], response: dict[str, Any] | None
) -> str | None:
    outcome = call.outcome or {}
    named = (outcome.get("mcp_id"), outcome.get("server"), outcome.get("connection"))
    if named[0] is not None and named != (mcp_id, *where):
        return (f"call_outcome names mcp id {named[0]} on {named[1]}, but its tools/call is mcp id {mcp_id} "
                f"on {where[0]}")
    if response is not None:
        answered = response.get("message", {}).get("id")
        if (answered, response.get("server"), response.get("connection")) != (mcp_id, *where):
            return f"its tools/call is mcp id {mcp_id}, but the answer recorded for it has mcp id {answered}"
    return None


def check_outputs(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """correlation: each call_id unique, answered once in the next request, no stray outputs."""
    findings: list[Finding] = []
    call_ids = list(map(_CALL_ID, run.calls))
    for call_id, calls in (run.calls_by_id().items() if len(set(call_ids)) < len(call_ids) else ()):
        if len(calls) > 1:  # (each call_id once, as in most runs: found in C)
            turns = ", ".join(str(c.turn) for c in calls)
            findings.append(
                call_finding(
                    calls[-1],
                    "correlation",
                    False,
                    f"call_id {call_id} is used by {len(calls)} function_calls (turns {turns})",
                    "call_ids",
                )
            )
    asked: set[str] = set()
    tally = _Tally()
    for current in run.rounds[1:]:
        previous = run.rounds[current.turn - 2]
        asked.update(map(_CALL_ID, previous.calls))
        tally.take(facts.indexed_items(current, FUNCTION_CALL_OUTPUT), asked)
        findings.extend(_outputs_of(current, previous, tally, asked, facts))
    return findings


class _Tally:
    """The function_call_outputs of a request, counted by call_id. A replayed request's
    outputs begin with the previous request's very entries (``RunFacts.indexed_items``),
    so only the ones after those are counted: linear in a replayed run's outputs, not in
    the square of its turns."""

    def __init__(self) -> None:
        self.entries: list[tuple[int, dict[str, Any]]] = []
        self.counts: dict[str, int] = {}
        self.repeated: set[str] = set()
        self.unasked: set[str] = set()
        self.items: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        self._anew()

    def _anew(self) -> None:
        self.entries = []
        self.counts = {}  # call_id → its outputs, in the order first seen (a Counter's order)
        self.repeated = set()
        self.unasked = set()  # call_ids not asked when first seen (judged again as more are asked)
        self.items = {}  # call_id → (position, item) of its outputs

    def take(self, entries: list[tuple[int, dict[str, Any]]], asked: set[str]) -> None:
        """Count the request's ``entries`` (index in input, item) with ``asked`` as of it."""
        start = len(self.entries)
        if start > len(entries) or not all(map(operator.is_, self.entries, entries)):  # compared in C
            self._anew()  # not the previous request's outputs carried on
            start = 0
        if self._fresh(entries, start, asked):
            self.entries = entries
            return
        counts, items = self.counts, self.items
        for position in range(start, len(entries)):
            item = entries[position][1]
            call_id = str(item.get("call_id"))
            count = counts[call_id] = counts.get(call_id, 0) + 1
            if count == 1:
                items[call_id] = [(position, item)]
                if call_id not in asked:
                    self.unasked.add(call_id)
                continue
            if count == 2:
                self.repeated.add(call_id)
            items[call_id].append((position, item))
        self.entries = entries

    def _fresh(self, entries: list[tuple[int, dict[str, Any]]], start: int, asked: set[str]) -> bool:
        """Count the entries from ``start`` on in C when each names a call_id (a string) of its
        own, not counted yet (the common request: one output per call); False: nothing done."""
        new = entries[start:]
        try:
            outputs = list(map(_SECOND, new))
            call_ids = list(map(_CALL_ID_OF, outputs))
        except (KeyError, TypeError):  # an output without a call_id, or no object: one by one
            return False
        if (set(map(type, call_ids)) - {str} or len(set(call_ids)) < len(call_ids)
                or not self.counts.keys().isdisjoint(call_ids)):
            return False
        self.counts.update(zip(call_ids, repeat(1), strict=False))
        positions = range(start, len(entries))
        entries_of = map(list, zip(zip(positions, outputs, strict=True)))  # each [(position, item)]
        self.items.update(zip(call_ids, entries_of, strict=True))
        self.unasked.update(filterfalse(asked.__contains__, call_ids))
        return True

    def in_order(self, call_ids: set[str]) -> list[str]:
        """``call_ids`` in the order their outputs were first seen."""
        rank = {call_id: place for place, call_id in enumerate(self.counts)} if call_ids else {}
        return sorted(call_ids, key=rank.__getitem__)

    def stray(self, asked: set[str]) -> list[str]:
        """The call_ids with an output that no response so far asked for, in order."""
        self.unasked -= asked  # asked stays asked
        return self.in_order(self.unasked)

    def outputs_for(self, call_ids: Iterable[str]) -> list[dict[str, Any]]:
        """The outputs for ``call_ids``, in the order of the request's input."""
        found = [entry for call_id in call_ids for entry in self.items.get(call_id, ())]
        return [item for _, item in sorted(found, key=itemgetter(0))]


def _outputs_of(current: ModelRound, previous: ModelRound, tally: _Tally, asked: set[str],
                facts: RunFacts) -> list[Finding]:
    counts = tally.counts
    where = f"request {current.turn}"
    problems = [
        *((call_id, f"{where} holds {counts[call_id]} function_call_output items for {call_id}: one call, "
                    "one output") for call_id in tally.in_order(tally.repeated)),
        *((call_id, f"{where} holds an output for {call_id}, but no earlier response has a function_call "
                    "with that call_id") for call_id in tally.stray(asked)),
        *((call.call_id, f"{call.call_id} (response {previous.turn}) has no function_call_output in {where}")
          for call in previous.calls if counts.get(call.call_id, 0) == 0),
    ]
    findings = [_round_broken(current, message, call_id) for call_id, message in problems]
    findings.extend(_swaps(current, previous, tally, facts))
    if not findings and previous.calls:
        count = len(previous.calls)
        message = f"{where} answers each of the {count} call(s) of response {previous.turn} once, by call_id"
        findings.append(Finding(link="correlation", ok=True, check="call_outputs", turn=current.turn,
                                seqs=seqs_of(current.request), message=message))
    return findings


def _swaps(current: ModelRound, previous: ModelRound, tally: _Tally, facts: RunFacts) -> list[Finding]:
    calls = dict(zip(map(_CALL_ID, previous.calls), previous.calls, strict=True))  # a call_id's last wins
    found: list[Finding] = []
    for item in tally.outputs_for(calls):  # only these can carry a result of the previous response
        call = calls.get(str(item.get("call_id")))
        if call is None:
            continue
        expected = facts.expected(call)  # swapped_with's first test, inline: most outputs are their call's
        if expected is not None and item.get("output") == expected.get("output"):
            continue
        other = facts.swapped_with(call, item)
        if other is not None:
            found.append(
                _round_broken(
                    current,
                    f"request {current.turn}'s output for {call.call_id} carries the "
                    f"result of {other.call_id}: call_ids swapped",
                    call.call_id,
                )
            )
    return found


def _round_broken(current: ModelRound, message: str, call_id: str) -> Finding:
    return Finding(
        link="correlation",
        ok=False,
        check="call_outputs",
        message=message,
        call_id=call_id,
        turn=current.turn,
        seqs=seqs_of(current.request),
    )
