"""Routing, the policy's phases: each request under phase rules lets the model call only the
tools the recorded rules allow in its turn.

A policy rule with ``"turns"`` hides tools in some turns without rewriting ``tools``: the
request's ``tool_choice`` lists the tools allowed (``relay/stages/policy_turns.py``), and
the turn is recorded before its request (``policy_turn``). Here each recorded request of a
run whose rules have phases is taken again: the tools it declares (their routes from the
declarations in force, their annotations from their server's listing), the tools the
recorded rules hide in its turn, through the same function the relay used; the recorded
``policy_turn`` must say the same, and the request's ``tool_choice`` must let the model call
none of the hidden tools, and list exactly the allowed ones when it lists any. A request
declaring namespaces or tool search is not narrowed (refusals at call time stand alone).
Calls are judged by their turn in ``policy_checks.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..relay.stages.policy_rules import PolicyRule
from ..relay.stages.policy_turns import PolicyTurn, Routes, choice_allows, has_phases, hidden_in_turn
from .evidence import seqs_of
from .facts import RunFacts
from .record import ModelRound, RunRecord
from .verdict import Finding

__all__ = ["check_turns", "turn_note"]

_LINK = "routing"


def check_turns(run: RunRecord, rules: tuple[PolicyRule, ...], facts: RunFacts) -> list[Finding]:
    """One finding per request of a run whose rules have phases (none without phases)."""
    if not has_phases(rules):
        return []
    recorded = run.of_kind(PolicyTurn.kind)
    findings = []
    for current in run.rounds:
        if current.request is None:
            continue
        routes = _routes(current, facts)
        if routes is not None:
            findings.append(_turn(current, routes, rules, recorded))
    return findings


def turn_note(run: RunRecord, turn: int) -> str | None:
    """``policy: turn 1 hides fs__read_text_file (rule #1 in turn 1); 4 tool(s) allowed`` for
    a turn whose recorded ``policy_turn`` hides tools (None otherwise)."""
    turns = [e for e in run.of_kind(PolicyTurn.kind) if e.get("turn") == turn]
    event = turns[-1] if turns else None
    hidden = [h for h in (event or {}).get("hidden") or [] if isinstance(h, dict)]
    if event is None or not hidden:
        return None
    rules = sorted({str(h.get("said")) for h in hidden})
    names = ", ".join(str(h.get("alias")) for h in hidden)
    return f"policy: turn {turn} hides {names} ({'; '.join(rules)}); {len(event.get('allowed') or [])} " \
           "tool(s) allowed by tool_choice"


def _routes(current: ModelRound, facts: RunFacts) -> Routes | None:
    """The function tools the request declares, with their routes and annotations (None: it
    declares none, or namespaces or tool search, which are not narrowed by turn)."""
    assert current.request is not None
    tools = current.body.get("tools")
    if not isinstance(tools, list) or not tools or any(
            not isinstance(tool, dict) or tool.get("type") != "function" for tool in tools):
        return None
    seq = current.request["seq"]
    catalog = facts.catalog_at(seq) or {}
    listed = catalog.get("routes")
    known: dict[str, Any] = listed if isinstance(listed, dict) else {}
    routes: dict[str, tuple[str, str, Mapping[str, Any]]] = {}
    for tool in tools:
        route = known.get(tool.get("name"))
        if isinstance(route, list) and len(route) == 2 and all(isinstance(part, str) for part in route):
            routes[str(tool["name"])] = (route[0], route[1], _annotations(facts, route[0], route[1], seq))
    return routes


def _annotations(facts: RunFacts, server: str, tool: str, seq: int) -> Mapping[str, Any]:
    listing = facts.listing_at(server, seq)
    entry = listing.tools.get(tool) if listing is not None else None
    found = entry.get("annotations") if isinstance(entry, dict) else None
    return found if isinstance(found, dict) else {}


def _turn(current: ModelRound, routes: Routes, rules: tuple[PolicyRule, ...],
          recorded: list[dict[str, Any]]) -> Finding:
    assert current.request is not None
    request, number = current.request, current.turn
    hidden = hidden_in_turn(rules, number, routes)
    allowed = [alias for alias in routes if alias not in hidden]
    earlier = [e for e in recorded if e.get("turn") == number and e["seq"] < request["seq"]]
    event = earlier[-1] if earlier else None
    if event is None:
        return _finding(False, f"turn {number}: no policy_turn is recorded before its request, yet the "
                        f"recorded rules have phases (they hide {_listed(hidden)} in it)", number, request)
    said = {(h.get("alias"), h.get("rule")) for h in event.get("hidden") or [] if isinstance(h, dict)}
    if event.get("allowed") != allowed or said != {(alias, rule.index) for alias, rule in hidden.items()}:
        return _finding(False, f"turn {number}: the policy_turn (seq {event['seq']}) allows "
                        f"{event.get('allowed')}, but the recorded rules hide {_listed(hidden)} and "
                        f"allow {allowed}", number, event, request)
    choice = current.body.get("tool_choice")
    allows = choice_allows(choice, list(routes))
    shown = f"tool_choice {choice!r}" if isinstance(choice, str) else f"tool_choice {choice}"
    open_to = [alias for alias in (allows or []) if alias in hidden]
    if allows is None or open_to:
        rule = hidden[open_to[0]] if open_to else None
        why = f"{open_to[0]}, which policy rule #{rule.index} hides in it" if rule else "tools it cannot name"
        return _finding(False, f"turn {number}: the request's {shown} lets the model call {why}",
                        number, event, request)
    if isinstance(choice, dict) and choice.get("type") == "allowed_tools" and allows != allowed:
        return _finding(False, f"turn {number}: the request's allowed_tools lists {allows}, but the "
                        f"recorded rules allow {allowed}", number, event, request)
    if not hidden:
        return _finding(True, f"turn {number}: the phase rules hide no tool", number, event, request)
    return _finding(True, f"turn {number}: {_listed(hidden)} hidden by the phase rules, "
                    f"{len(allowed)} of {len(routes)} tool(s) allowed by the request's tool_choice",
                    number, event, request)


def _listed(hidden: Mapping[str, PolicyRule]) -> str:
    if not hidden:
        return "no tool"
    return ", ".join(f"{alias} (rule #{rule.index})" for alias, rule in hidden.items())


def _finding(ok: bool, message: str, turn: int, *events: dict[str, Any]) -> Finding:
    return Finding(link=_LINK, ok=ok, message=message, check="policy", turn=turn, seqs=seqs_of(*events))
