"""Phase rules: a policy rule with ``"turns"`` narrows the tools of some model turns without
rewriting ``tools``.

A tool a rule denies in every turn is withheld from the declarations as before
(``withheld_rule``). A tool denied only in some turns stays declared (the ``tools`` array,
and the prompt prefix the endpoint caches, are byte-identical from turn to turn); in those
turns the request's ``tool_choice`` lists the tools allowed (``turn_choice``, the
Responses API's ``{"type": "allowed_tools", ...}``), and a call the model makes anyway is
refused naming the rule (the call-time decision, ``deciding_rule`` with the call's turn).
Each such turn is recorded before its request (``PolicyTurn``); verify takes it again from
the recorded rules through ``hidden_in_turn`` and holds the request's ``tool_choice`` to
it (``choice_allows``). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

from ...events import Event
from .policy_rules import PolicyRule, deciding_rule

__all__ = ["PolicyTurn", "TurnNarrowing", "choice_allows", "has_phases", "hidden_in_turn", "turn_choice",
           "withheld_rule"]

Routes = Mapping[str, tuple[str, str, Mapping[str, Any]]]
"""alias → (server, tool, the tool's annotations), for the tools a request declares."""


@runtime_checkable
class TurnNarrowing(Protocol):
    """A run's part that may narrow a turn's tools (a ``Policy``): given the turn and the
    function tools the request declares, the aliases allowed, or None (all of them)."""

    def allowed_in_turn(self, turn: int, routes: Routes) -> list[str] | None: ...


def has_phases(rules: Sequence[PolicyRule]) -> bool:
    """Whether some rule holds in some turns only (only then are turns narrowed)."""
    return any(rule.turns is not None for rule in rules)


def withheld_rule(rules: Sequence[PolicyRule], server: str, tool: str,
                  annotations: Mapping[str, Any]) -> PolicyRule | None:
    """The rule that denies the tool whatever the arguments in every turn (the first turn's
    when phase rules take turns about it), or None: then it is declared."""
    first = deciding_rule(rules, server, tool, annotations, turn=1)
    if first is None or first.decision != "deny":
        return None
    for turn in _telling_turns(rules):
        rule = deciding_rule(rules, server, tool, annotations, turn=turn)
        if rule is None or rule.decision != "deny":
            return None
    return first


def hidden_in_turn(rules: Sequence[PolicyRule], turn: int, routes: Routes) -> dict[str, PolicyRule]:
    """alias → the rule that denies it in ``turn`` whatever the arguments."""
    hidden = {}
    for alias, (server, tool, hints) in routes.items():
        rule = deciding_rule(rules, server, tool, hints, turn=turn)
        if rule is not None and rule.decision == "deny":
            hidden[alias] = rule
    return hidden


def turn_choice(asked: str | dict[str, Any], allowed: Sequence[str]) -> str | dict[str, Any]:
    """The request's ``tool_choice`` in a turn that allows only ``allowed`` (in the order
    declared), given the one the run asks for (``--tool-choice``): ``none`` stays; a named
    tool stays if it is allowed (a forced call of a hidden one cannot stand: the rules win,
    ``auto`` among the allowed); ``auto`` and ``required`` become that mode over the allowed
    list; no tool allowed at all is ``none``."""
    if asked == "none" or not allowed:
        return "none"
    if isinstance(asked, dict) and asked.get("type") == "function" and asked.get("name") in allowed:
        return asked
    mode = "required" if asked == "required" else "auto"
    return {"type": "allowed_tools", "mode": mode,
            "tools": [{"type": "function", "name": alias} for alias in allowed]}


def choice_allows(choice: Any, aliases: Sequence[str]) -> list[str] | None:
    """The declared aliases a request's ``tool_choice`` lets the model call (all of them for
    ``auto`` / ``required`` / none given); None when it is a form this module does not know."""
    if choice in (None, "auto", "required"):
        return list(aliases)
    if choice == "none":
        return []
    if isinstance(choice, dict) and choice.get("type") == "function":
        return [alias for alias in aliases if alias == choice.get("name")]
    listed = choice.get("tools") if isinstance(choice, dict) else None
    if isinstance(choice, dict) and choice.get("type") == "allowed_tools" and isinstance(listed, list):
        return [str(entry.get("name")) for entry in choice["tools"]
                if isinstance(entry, dict) and entry.get("type") == "function"]
    return None


def _telling_turns(rules: Sequence[PolicyRule]) -> list[int]:
    """One turn of each stretch in which the same rules hold (where a span starts or ends)."""
    turns = {1}
    for rule in rules:
        if rule.turns is not None:
            turns.add(rule.turns.first)
            if rule.turns.last is not None:
                turns.add(rule.turns.last + 1)
    return sorted(turns)


@dataclass(slots=True, kw_only=True)
class PolicyTurn(Event):
    """The tools of one model turn under a policy with phase rules, recorded before its
    request: the aliases declared and allowed this turn, and each hidden one with the rule
    that hides it (the request's ``tool_choice`` lists ``allowed`` when ``hidden`` is not
    empty)."""

    kind: ClassVar[str] = "policy_turn"
    turn: int
    allowed: list[str]
    hidden: list[dict[str, Any]]
    """``{"alias", "server", "tool", "rule", "said"}`` for each tool hidden this turn."""
    source: str
    digest: str
