"""A policy drawn: its rules at the start, and each decision beside the call it decided.

A refused call's decision row says ``refused by policy rule #2 of policy.json`` (red) and
sits in the call's group (its call_id); an allowed or asked one says which rule let it go
on; a tool withheld from the offer is a note of its own, and so is each turn the phase
rules narrow (the tools hidden from its request's ``tool_choice``).
"""

from __future__ import annotations

from typing import Any, Final

from ..relay.stages.policy_rules import PolicyDecision, PolicyLoaded
from ..relay.stages.policy_turns import PolicyTurn
from .model import Badge, Row, RowState

__all__ = ["POLICY_DESCRIBERS"]

_VERB: Final = {"deny": "refused", "allow": "allowed", "ask": "asked about", "default": "left to consent"}


def _row(record: dict[str, Any], label: str, detail: str, state: RowState = "ok") -> Row:
    call_id = record.get("call_id")
    badges = [Badge(kind="call", text=call_id)] if isinstance(call_id, str) else []
    return Row(seq=int(record.get("seq", 0)), kind=str(record.get("kind")), stage="policy", source="app",
               target="app", label=label, detail=detail, badges=badges, state=state,
               call_id=call_id if isinstance(call_id, str) else None)


def _loaded(record: dict[str, Any]) -> Row:
    rules = record.get("rules")
    count = len(rules) if isinstance(rules, list) else 0
    return _row(record, f"policy {record.get('source')}: {count} rule(s)", f"digest {record.get('digest')}")


def _decision(record: dict[str, Any]) -> Row:
    decision = str(record.get("decision"))
    rule = record.get("rule")
    by = f"by policy rule #{rule} of {record.get('source')}" if rule is not None else "by no rule"
    where = f"{record.get('server')} / {record.get('tool')}"
    remembered = record.get("remembered")
    if record.get("stage") == "offer":
        return _row(record, f"withheld {where} {by}", str(record.get("said") or ""), "warn")
    verb = "allowed by an earlier answer" if remembered else _VERB.get(decision, decision)
    label = f"{verb} ({remembered})" if remembered else f"{verb} {by}"
    return _row(record, label, f"{where}: {record.get('said')}", "failed" if decision == "deny" else "ok")


def _turn(record: dict[str, Any]) -> Row:
    """A turn under phase rules: the tools hidden from its request's tool_choice, and why."""
    hidden = [h for h in record.get("hidden") or [] if isinstance(h, dict)]
    listed = record.get("allowed")
    allowed: list[Any] = listed if isinstance(listed, list) else []
    turn = record.get("turn")
    if not hidden:
        return _row(record, f"turn {turn}: no tool hidden by the phase rules",
                    f"{len(allowed)} tool(s) allowed")
    names = ", ".join(str(h.get("alias")) for h in hidden)
    why = "; ".join(sorted({str(h.get("said")) for h in hidden}))
    return _row(record, f"turn {turn}: hidden {names}", f"{why}; allowed: {', '.join(map(str, allowed))}",
                "warn")


POLICY_DESCRIBERS: Final = {
    PolicyLoaded.kind: _loaded, PolicyDecision.kind: _decision, PolicyTurn.kind: _turn,
}
