"""Verify a ``toolrelay call --transcript`` record: one call made without a model.

The transcript holds what a run's does for its calls (the servers' messages, the policy
and its decisions, the declarations, the call's parse, route and outcome) between
``direct_call`` (the alias and arguments text asked for, the call_id its events carry)
and ``direct_call_end`` (how it ended). Every check of a run that needs no model is
applied to it (``checks.py``: the policy's decisions against its recorded rules, the call
held to its ``tools/call``, the MCP ids...); here, in place of the model's side:

- ``direct_call`` (parse): one call asked for, and the call parsed is that one (alias and
  arguments text as given);
- ``direct_call_end`` (correlation): its status is the call's recorded outcome; a call
  never dispatched (``not_offered``) has no call events, its alias is not in the
  declarations, and the reason said is the one the declarations withheld it with.
"""

from __future__ import annotations

from typing import Any

from ..relay.stages.direct_call import NOT_OFFERED, DirectCall, DirectCallEnd
from .evidence import seqs_of
from .facts import RunFacts
from .record import RunRecord
from .verdict import Finding

__all__ = ["check_direct_call", "direct_status", "direct_unfinished", "is_direct_call"]


def is_direct_call(run: RunRecord) -> bool:
    """Whether ``run`` was recorded by ``toolrelay call``."""
    return bool(run.of_kind(DirectCall.kind))


def check_direct_call(run: RunRecord, facts: RunFacts) -> list[Finding]:
    asked, ends = run.of_kind(DirectCall.kind), run.of_kind(DirectCallEnd.kind)
    if len(asked) != 1 or len(run.calls) != 1:
        return [_finding("parse", False, f"{len(asked)} direct_call record(s): a call transcript holds one",
                         *asked)]
    call, start = run.calls[0], asked[0]
    findings = [_asked(call.first("parsed"), start)]
    if len(ends) > 1:
        return [*findings, _finding("correlation", False, f"{len(ends)} direct_call_end records for one call",
                                    *ends)]
    if ends:
        findings.append(_ended(run, facts, start, ends[0]))
    return findings


def direct_unfinished(run: RunRecord, facts: RunFacts) -> list[str]:
    """Why the call's record is not finished: no ``direct_call_end``."""
    if run.of_kind(DirectCallEnd.kind):
        return []
    last = run.events[-1]["seq"] if run.events else 0
    return [f"the transcript ends at seq {last} without direct_call_end: the call was stopped before "
            "it ended"]


def direct_status(run: RunRecord) -> str | None:
    """``completed`` once the call's record ends (whatever the call's outcome, which its
    findings say), None before."""
    return "completed" if run.of_kind(DirectCallEnd.kind) else None


def _asked(parsed: dict[str, Any] | None, start: dict[str, Any]) -> Finding:
    where = f"{start.get('call_id')} ({start.get('alias')})"
    if parsed is None:
        return _finding("parse", True, f"{where}: asked for, never parsed (see how it ended)", start)
    said = (parsed.get("alias"), parsed.get("arguments_text"))
    if said != (start.get("alias"), start.get("arguments_text")):
        return _finding("parse", False, f"{where}: the call parsed is {said[0]} with {said[1]!r}, not the "
                        f"call asked for ({start.get('arguments_text')!r})", start, parsed)
    return _finding("parse", True, f"{where}: the call parsed is the call asked for, arguments text "
                    f"{start.get('arguments_text')!r}", start, parsed)


def _ended(run: RunRecord, facts: RunFacts, start: dict[str, Any], end: dict[str, Any]) -> Finding:
    call = run.calls[0]
    where = f"{start.get('call_id')} ({start.get('alias')})"
    status = end.get("status")
    if status == NOT_OFFERED:
        return _not_offered(run, facts, where, start, end)
    if call.status != status:
        return _finding("correlation", False, f"{where}: direct_call_end says {status}, but the call's "
                        f"recorded outcome is {call.status}", start, end, call.first("outcomes"))
    return _finding("correlation", True, f"{where}: ended {status}, its recorded outcome", start, end,
                    call.first("outcomes"))


def _not_offered(run: RunRecord, facts: RunFacts, where: str, start: dict[str, Any],
                 end: dict[str, Any]) -> Finding:
    call = run.calls[0]
    if call.parsed or call.outcomes or call.mcp_requests:
        return _finding("correlation", False, f"{where}: direct_call_end says not offered, yet the call was "
                        "dispatched", start, end, call.first("outcomes") or call.first("parsed"))
    catalog = facts.catalog_at(end["seq"]) or {}
    routes = catalog.get("routes") if isinstance(catalog.get("routes"), dict) else {}
    if start.get("alias") in (routes or {}):
        return _finding("correlation", False, f"{where}: direct_call_end says not offered, yet the "
                        "declarations offer it", start, end, catalog)
    withheld = [entry for entry in catalog.get("withheld") or []
                if isinstance(entry, dict) and entry.get("alias") == start.get("alias")]
    reason = str(end.get("reason"))
    if withheld and str(withheld[0].get("reason")) not in reason:
        return _finding("correlation", False, f"{where}: not offered, but said {reason!r}, not the reason "
                        f"the declarations withheld it with ({withheld[0].get('reason')!r})",
                        start, end, catalog)
    said = withheld[0].get("reason") if withheld else "not in the declarations"
    return _finding("correlation", True, f"{where}: not offered ({said}): nothing sent", start, end, catalog)


def _finding(link: str, ok: bool, message: str, *events: dict[str, Any] | None) -> Finding:
    """A finding about the call (its call_id from the ``direct_call`` record among ``events``)."""
    asked = [e for e in events if e is not None and e.get("kind") == DirectCall.kind]
    call_id = asked[0].get("call_id") if asked else None
    return Finding(link=link, ok=ok, message=message, check="direct_call", seqs=seqs_of(*events),
                   call_id=call_id if isinstance(call_id, str) else None)
