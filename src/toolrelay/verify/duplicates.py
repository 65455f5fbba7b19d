"""Link 2, parse: a call_id used by several function_calls of one response.

The API takes exactly one ``function_call_output`` per call_id, so the parse stage lets
only the first function_call with a call_id run; each later one is refused, recorded as
a ``duplicate_call_id`` outcome of its own (no parse, no route, no MCP message), and the
call_id's one output carries the refusals after the first call's result (the feedback
link re-renders it; the correlation link counts the outputs). A record in which a later
function_call ran, or the run went on without refusing it, is broken, and the finding
says which.
"""

from __future__ import annotations

from .evidence import call_finding
from .facts import RunFacts
from .record import CallTrace, RunRecord
from .verdict import Finding

__all__ = ["check_duplicates"]


def check_duplicates(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """parse: each call_id reused within a response ran once, the repeats were refused."""
    return [_duplicates(call, facts) for call in run.calls if call.duplicates]


def _duplicates(call: CallTrace, facts: RunFacts) -> Finding:
    count = len(call.duplicates) + 1
    used = (f"call_id {call.call_id} is used by {count} function_calls of response {call.turn} "
            f"({', '.join(str(c.alias) for c in (call, *call.duplicates))})")
    refusals = [d.outcomes[0] for d in call.duplicates if d.outcomes]
    ran = len(call.parsed)
    if ran > 1:
        message = (f"{used} and {ran} of them were run: only the first may run, the later ones must be "
                   "refused as duplicates (the API takes one function_call_output per call_id)")
        return call_finding(call, "parse", False, message, "duplicate_call_id", *call.parsed)
    problem = _refusal_problem(call, facts)
    if problem is not None:
        return call_finding(call, "parse", False, f"{used}: {problem}", "duplicate_call_id", *refusals)
    later = ", ".join(f"output[{d.index}] {d.alias}" for d in call.duplicates if d.outcomes)
    message = f"{used}: the first ({call.alias}) ran; {later or 'none'} refused as a duplicate, not run"
    return call_finding(call, "parse", True, message, "duplicate_call_id", *call.parsed, *refusals)


def _refusal_problem(call: CallTrace, facts: RunFacts) -> str | None:
    """Why the repeats' refusals do not hold up, or None."""
    went_on = bool(call.feedbacks or facts.sent_after(call))
    for duplicate in call.duplicates:
        where = f"output[{duplicate.index}] ({duplicate.alias})"
        outcome = duplicate.outcome
        if outcome is None:
            if went_on:
                return f"{where} has no refusal recorded, yet the call_id's output was given"
            continue  # the run stopped before refusing it: unfinished
        if len(duplicate.outcomes) > 1:
            return f"{where} is refused {len(duplicate.outcomes)} times"
        if outcome.get("alias") != duplicate.alias:
            return f"the refusal of {where} names alias {outcome.get('alias')!r}"
        if outcome.get("mcp_id") is not None:
            return f"the refusal of {where} claims it was sent to a server (mcp id {outcome.get('mcp_id')})"
    return None
