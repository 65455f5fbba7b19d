"""A policy's rules as data, and the one function that says which rule decides a call.

Pure: ``relay/policy.py`` reads the file and applies the rules to a run; verify applies the
recorded rules again to each recorded call (``verify/policy_checks.py``), through this
module, so the relay and the judge cannot disagree on what a rule means. The two events a
policy records are here too: ``PolicyLoaded`` (the rules and their digest, before the
first decision) and ``PolicyDecision`` (one per tool withheld and one per call).
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from ...errors import UsageError
from ...events import Event
from ...protocol.tool_digest import canonical_json
from .turn_span import TurnSpan, parse_turns

__all__ = [
    "DECISIONS", "DEFAULT", "NO_ARGUMENTS", "REFUSED_BY_POLICY", "SPENT", "PolicyDecision", "PolicyLoaded",
    "PolicyRule", "SamplingRules", "deciding_rule", "parse_rules", "parse_sampling", "rules_digest", "said",
]

DECISIONS: Final = ("allow", "deny", "ask")
DEFAULT: Final = "default"
"""The decision recorded when no rule matches: consent decides as without a policy."""
NO_ARGUMENTS: Final = object()
"""``deciding_rule``'s ``arguments`` at offer time: rules that look at arguments do not match."""
_RULE_KEYS: Final = frozenset({"server", "tool", "annotations", "arguments", "decision", "reason", "turns"})
_DONE: Final = {"allow": "allowed", "deny": "denied", "ask": "asked"}
_HINTS: Final = frozenset({"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"})
REFUSED_BY_POLICY: Final = "policy"
"""The ``refused_by`` of a call a rule refused (deny, or ask answered no): the user reads the
rule's words (``denied by policy rule #2 of policy.json: ...``), the model ``Error (policy):
...``, never "hook"."""
SPENT: Final = "over the policy's sampling budget"
"""How a sampling refusal for a spent budget begins."""
_SAMPLING_KEYS: Final = frozenset({"rules", "maxRequests", "maxTokens"})
_SAMPLING_RULE_KEYS: Final = frozenset({"server", "decision", "reason"})


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyRule:
    """One rule of the file, and where it is (``index``: its place in ``rules``, from 1)."""

    index: int
    decision: str
    server: str = "*"
    tool: str = "*"
    annotations: Mapping[str, Any] = field(default_factory=dict)
    arguments: Mapping[str, str] = field(default_factory=dict)
    reason: str = ""
    turns: TurnSpan | None = None
    """The model turns the rule holds in (None: every turn, and calls outside any turn)."""

    def holds_in(self, turn: int | None) -> bool:
        """Whether the rule is tried in ``turn`` (None: a call outside any model turn)."""
        return self.turns is None or self.turns.holds(turn)

    def matches_tool(self, server: str, tool: str, annotations: Mapping[str, Any]) -> bool:
        return (fnmatch.fnmatchcase(server, self.server) and fnmatch.fnmatchcase(tool, self.tool)
                and all(annotations.get(hint) == value for hint, value in self.annotations.items()))

    def matches_arguments(self, arguments: Any) -> bool:
        for pointer, glob in self.arguments.items():
            value = _at(arguments, pointer)
            if not isinstance(value, str) or not fnmatch.fnmatchcase(value, glob):
                return False
        return True

    def said(self, source: str) -> str:
        """``denied by policy rule #2 of policy.json: "why"`` (``allowed`` / ``asked`` by;
        ``... of policy.json in turns 1-3: "why"`` for a rule that holds in some turns)."""
        why = f': "{self.reason}"' if self.reason else ""
        when = f" {self.turns.words}" if self.turns is not None else ""
        return f"{_DONE[self.decision]} by policy rule #{self.index} of {source}{when}{why}"

    def to_record(self) -> dict[str, Any]:
        """The rule as written (keys at their default left out), as the transcript keeps it."""
        record: dict[str, Any] = {
            "server": self.server, "tool": self.tool, "annotations": dict(self.annotations),
            "arguments": dict(self.arguments), "decision": self.decision, "reason": self.reason,
            "turns": self.turns.text if self.turns is not None else "",
        }
        return {key: value for key, value in record.items() if value not in ("*", "", {})}


def said(rule: PolicyRule | None, source: str) -> str:
    """What a decision says: the rule's words, or that no rule matched."""
    return rule.said(source) if rule is not None else f"no rule of {source} matched: consent as usual"


def deciding_rule(rules: Sequence[PolicyRule], server: str, tool: str, annotations: Mapping[str, Any],
                  arguments: Any = NO_ARGUMENTS, turn: int | None = None) -> PolicyRule | None:
    """The first rule matching the tool (and, given ``arguments``, the call's arguments) that
    holds in ``turn`` (None: outside any model turn, where no rule with ``turns`` holds); with
    ``NO_ARGUMENTS`` a rule that looks at arguments is passed over (it decides at call time)."""
    for rule in rules:
        if not rule.holds_in(turn) or not rule.matches_tool(server, tool, annotations):
            continue
        if arguments is NO_ARGUMENTS:
            if rule.arguments:
                continue
            return rule
        if rule.matches_arguments(arguments):
            return rule
    return None


def parse_rules(document: Any, where: str) -> tuple[PolicyRule, ...]:
    """The rules of ``{"rules": [...]}`` (a file's, or the config block's, or a transcript's);
    UsageError naming the rule and the key otherwise."""
    raw = document.get("rules") if isinstance(document, dict) else None
    if not isinstance(raw, list):
        raise UsageError(f'the policy file {where} needs {{"rules": [...]}}')
    return tuple(_rule(entry, index, where) for index, entry in enumerate(raw, 1))


@dataclass(frozen=True, slots=True, kw_only=True)
class SamplingRules:
    """The policy's ``"sampling"`` block: which servers may sample the model (the first rule
    matching the server decides), and the run's budget of requests and requested tokens."""

    rules: tuple[PolicyRule, ...] = ()
    max_requests: int | None = None
    max_tokens: int | None = None
    """Summed over the requests' ``maxTokens`` (what a request may cost, known before it goes)."""

    def deciding(self, server: str) -> PolicyRule | None:
        return next((rule for rule in self.rules if fnmatch.fnmatchcase(server, rule.server)), None)

    def over_budget(self, requests: int, tokens: int, asked: int) -> str | None:
        """Why one more request of ``asked`` tokens is over the budget (``requests`` and
        ``tokens`` approved so far), or None."""
        if self.max_requests is not None and requests + 1 > self.max_requests:
            return f"{SPENT} of {self.max_requests} request(s) per run"
        if self.max_tokens is not None and tokens + asked > self.max_tokens:
            return (f"{SPENT} of {self.max_tokens} tokens per run "
                    f"({tokens} approved, {asked} asked)")
        return None

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"rules": [rule.to_record() for rule in self.rules]}
        if self.max_requests is not None:
            record["maxRequests"] = self.max_requests
        if self.max_tokens is not None:
            record["maxTokens"] = self.max_tokens
        return record


def parse_sampling(document: Any, where: str) -> SamplingRules | None:
    """The ``"sampling"`` block of a policy document (None without one)."""
    block = document.get("sampling") if isinstance(document, dict) else None
    if block is None:
        return None
    at = f'{where}: "sampling"'
    if not isinstance(block, dict) or not set(block) <= _SAMPLING_KEYS:
        raise UsageError(f'{at} must be an object of {", ".join(sorted(_SAMPLING_KEYS))}')
    limits = {key: block.get(key) for key in ("maxRequests", "maxTokens")}
    for key, value in limits.items():
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise UsageError(f'{at}: "{key}" must be a whole number, 0 or more')
    raw = block.get("rules", [])
    if not isinstance(raw, list):
        raise UsageError(f'{at}: "rules" must be a list')
    rules = []
    for index, entry in enumerate(raw, 1):
        unknown = sorted(set(entry) - _SAMPLING_RULE_KEYS) if isinstance(entry, dict) else []
        if unknown:
            known = ", ".join(sorted(_SAMPLING_RULE_KEYS))
            raise UsageError(f'{at}: rule #{index}: unknown key "{unknown[0]}" (known: {known})')
        rules.append(_rule(entry, index, f"{at}"))
    return SamplingRules(rules=tuple(rules), max_requests=limits["maxRequests"],
                         max_tokens=limits["maxTokens"])


def rules_digest(rules: Sequence[PolicyRule], sampling: SamplingRules | None = None) -> str:
    """``sha256:<hex>`` of the rules' canonical JSON (with the sampling block, if any): the
    same policy always gives the same one."""
    listed = [rule.to_record() for rule in rules]
    text = canonical_json(listed if sampling is None else {"rules": listed, "sampling": sampling.to_record()})
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(slots=True, kw_only=True)
class PolicyLoaded(Event):
    """The policy a run follows: where it came from, its rules as read, and their digest."""

    kind: ClassVar[str] = "policy"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"sampling"})
    source: str
    digest: str
    rules: list[dict[str, Any]]
    sampling: dict[str, Any] | None = None
    """The ``"sampling"`` block as read (rules, maxRequests, maxTokens), when there is one."""


@dataclass(slots=True, kw_only=True)
class PolicyDecision(Event):
    """One decision of the policy: a tool withheld from the offer (``stage`` ``offer``), a
    call allowed, refused or asked about (``call``), or a server's sampling request
    (``sampling``: ``tool`` is empty, ``call_id`` the call it came during). A call's is
    recorded as the call is dispatched, after the call's ``call_routed`` event and before its
    ``call_outcome``: verify pairs it with the call whose recorded span holds it (the model's
    call_id alone is not unique)."""

    kind: ClassVar[str] = "policy_decision"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"call_id", "alias", "remembered", "tokens"})
    stage: str
    server: str
    tool: str
    decision: str
    """``allow``, ``deny``, ``ask``, or ``default`` (no rule matched)."""
    rule: int | None
    """The index of the rule that matched (from 1), None for ``default``."""
    source: str
    said: str
    digest: str
    """The digest of the rules it was decided by (that of the run's ``policy`` event)."""
    call_id: str | None = None
    alias: str | None = None
    remembered: str | None = None
    """An earlier answer that decided it without a question (``run``: always this run; ``saved``)."""
    tokens: int | None = None
    """``sampling``: the tokens the request asked for (its ``maxTokens``)."""


def _rule(entry: Any, index: int, where: str) -> PolicyRule:
    at = f"{where}: rule #{index}"
    if not isinstance(entry, dict):
        raise UsageError(f"{at}: must be an object")
    unknown = sorted(set(entry) - _RULE_KEYS)
    if unknown:
        raise UsageError(f'{at}: unknown key "{unknown[0]}" (known: {", ".join(sorted(_RULE_KEYS))})')
    if entry.get("decision") not in DECISIONS:
        got = f"got {entry.get('decision')!r}"
        raise UsageError(f'{at}: "decision" must be one of {", ".join(DECISIONS)}, {got}')
    defaults = (("server", "*"), ("tool", "*"), ("reason", ""))
    texts = {key: entry.get(key, default) for key, default in defaults}
    if not all(isinstance(value, str) for value in texts.values()):
        raise UsageError(f'{at}: "server", "tool" and "reason" must be strings')
    annotations = entry.get("annotations", {})
    if not isinstance(annotations, dict) or not set(annotations) <= _HINTS:
        raise UsageError(f'{at}: "annotations" maps hints ({", ".join(sorted(_HINTS))}) to their values')
    arguments = entry.get("arguments", {})
    if not isinstance(arguments, dict) or not all(
            isinstance(k, str) and k.startswith("/") and isinstance(v, str) for k, v in arguments.items()):
        raise UsageError(f'{at}: "arguments" maps JSON Pointers ("/path") to globs on their string values')
    turns = parse_turns(entry["turns"], at) if "turns" in entry else None
    return PolicyRule(index=index, decision=entry["decision"], annotations=annotations, arguments=arguments,
                      turns=turns, **texts)


def _at(value: Any, pointer: str) -> Any:
    """The value at a JSON Pointer (RFC 6901), None when there is none."""
    for token in pointer.split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict):
            value = value.get(key)
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return None
    return value
