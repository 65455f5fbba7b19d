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

__all__ = [
    "DECISIONS", "DEFAULT", "NO_ARGUMENTS", "PolicyDecision", "PolicyLoaded", "PolicyRule", "deciding_rule",
    "parse_rules", "rules_digest", "said",
]

DECISIONS: Final = ("allow", "deny", "ask")
DEFAULT: Final = "default"
"""The decision recorded when no rule matches: consent decides as without a policy."""
NO_ARGUMENTS: Final = object()
"""``deciding_rule``'s ``arguments`` at offer time: rules that look at arguments do not match."""
_RULE_KEYS: Final = frozenset({"server", "tool", "annotations", "arguments", "decision", "reason"})
_DONE: Final = {"allow": "allowed", "deny": "denied", "ask": "asked"}
_HINTS: Final = frozenset({"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"})


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
        """``denied by policy rule #2 of policy.json: "why"`` (``allowed`` / ``asked`` by)."""
        why = f': "{self.reason}"' if self.reason else ""
        return f"{_DONE[self.decision]} by policy rule #{self.index} of {source}{why}"

    def to_record(self) -> dict[str, Any]:
        """The rule as written (keys at their default left out), as the transcript keeps it."""
        record: dict[str, Any] = {
            "server": self.server, "tool": self.tool, "annotations": dict(self.annotations),
            "arguments": dict(self.arguments), "decision": self.decision, "reason": self.reason,
        }
        return {key: value for key, value in record.items() if value not in ("*", "", {})}


def said(rule: PolicyRule | None, source: str) -> str:
    """What a decision says: the rule's words, or that no rule matched."""
    return rule.said(source) if rule is not None else f"no rule of {source} matched: consent as usual"


def deciding_rule(rules: Sequence[PolicyRule], server: str, tool: str, annotations: Mapping[str, Any],
                  arguments: Any = NO_ARGUMENTS) -> PolicyRule | None:
    """The first rule matching the tool (and, given ``arguments``, the call's arguments); with
    ``NO_ARGUMENTS`` a rule that looks at arguments is passed over (it decides at call time)."""
    for rule in rules:
        if not rule.matches_tool(server, tool, annotations):
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


def rules_digest(rules: Sequence[PolicyRule]) -> str:
    """``sha256:<hex>`` of the rules' canonical JSON: the same rules always give the same one."""
    text = canonical_json([rule.to_record() for rule in rules])
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(slots=True, kw_only=True)
class PolicyLoaded(Event):
    """The policy a run follows: where it came from, its rules as read, and their digest."""

    kind: ClassVar[str] = "policy"
    source: str
    digest: str
    rules: list[dict[str, Any]]


@dataclass(slots=True, kw_only=True)
class PolicyDecision(Event):
    """One decision of the policy: a tool withheld from the offer (``stage`` ``offer``), or a
    call allowed, refused or asked about (``call``). It is recorded as the call is dispatched,
    after the call's ``call_routed`` event and before its ``call_outcome``: verify pairs it
    with the call whose recorded span holds it (the model's call_id alone is not unique)."""

    kind: ClassVar[str] = "policy_decision"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"call_id", "alias", "remembered"})
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
    return PolicyRule(index=index, decision=entry["decision"], annotations=annotations, arguments=arguments,
                      **texts)


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
