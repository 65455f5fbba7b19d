"""A policy file: ordered rules saying which tool may run, as one offer-chain filter and one call hook.

    {"rules": [
      {"server": "notes", "tool": "write_*", "decision": "deny", "reason": "notes are read-only here"},
      {"tool": "write_file", "arguments": {"/path": "**/.ssh/**"}, "decision": "deny"},
      {"annotations": {"destructiveHint": true}, "decision": "ask"},
      {"server": "*", "tool": "*", "decision": "allow"}
    ]}

``server`` and ``tool`` are globs on the config's server name and the MCP tool name
(default any), ``annotations`` match hint values, ``arguments`` maps a JSON Pointer into
the call's arguments to a glob on its string value. The first rule that matches decides:
``deny`` withholds the tool from the model (``withhold``, when no argument decides it) or
refuses the call naming the rule (``before_call``, a ``refused_by_hook`` outcome: never a
success); ``allow`` runs it without asking; ``ask`` asks for consent, even for a tool
marked read-only. No rule matching: today's behaviour (read-only tools run, others asked).
A ``Policy`` is both: give the same object as a filter and as a hook (the hook reads the
annotations the filter saw), as ``--policy FILE`` does.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..client import jsonc
from ..errors import UsageError
from ..protocol import json_depth
from .offer import ServerListing
from .stages.context import CallContext
from .stages.parse import FunctionCall
from .stages.route import Route

__all__ = ["DECISIONS", "Policy", "PolicyRule", "load_policy"]

DECISIONS: Final = ("allow", "deny", "ask")
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


@dataclass(slots=True)
class Policy:
    """The rules of one file; a ``ToolFilter`` and a ``CallHook`` at once."""

    rules: tuple[PolicyRule, ...]
    source: str
    """Where the rules came from (the file's path), named in every reason."""
    _annotations: dict[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)

    def withhold(self, listing: ServerListing) -> Mapping[str, str]:
        """Tools the first matching rule denies whatever the arguments (a rule with
        ``arguments`` decides at call time: the tool stays offered)."""
        found: dict[str, str] = {}
        for tool in listing.tools:
            name, annotations = str(tool["name"]), _hints(tool)
            self._annotations[(listing.server, name)] = annotations
            rule = next((r for r in self.rules if r.matches_tool(listing.server, name, annotations)), None)
            if rule is not None and rule.decision == "deny" and not rule.arguments:
                found[name] = rule.said(self.source)
        return found

    async def before_call(self, call: FunctionCall, context: CallContext) -> str | None:
        if context.server is None or context.tool is None:
            return None  # an unknown tool: said as such by the dispatch
        annotations = self._annotations.get((context.server, context.tool), {})
        try:
            arguments = json_depth.loads(call.arguments_text or "{}")
        except ValueError:
            arguments = None  # invalid arguments are refused later; no argument rule matches them
        rule = next((r for r in self.rules if r.matches_tool(context.server, context.tool, annotations)
                     and r.matches_arguments(arguments)), None)
        if rule is None:
            return None
        if rule.decision == "deny":
            return rule.said(self.source)
        approve = context.approve
        context.approve = None  # allow: nobody is asked; ask: asked here, once, whatever the hints say
        if rule.decision == "ask" and approve is not None:
            route = Route(alias=call.name, server=context.server, tool=context.tool, rule={},
                          annotations=dict(annotations))
            refusal = await approve(route, arguments if isinstance(arguments, dict) else {})
            return None if refusal is None else f"{refusal} ({rule.said(self.source)})"
        return None

    async def after_call(self, call: FunctionCall, context: CallContext, outcome: Any) -> None:
        return None


def load_policy(path: str | Path) -> Policy:
    """The policy file at ``path`` (JSON or JSONC); UsageError naming the rule and key otherwise."""
    where = str(path)
    try:
        document = jsonc.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read the policy file {where}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"the policy file {where} is not JSON: {exc}") from None
    raw = document.get("rules") if isinstance(document, dict) else None
    if not isinstance(raw, list):
        raise UsageError(f'the policy file {where} needs {{"rules": [...]}}')
    rules = tuple(_rule(entry, index, where) for index, entry in enumerate(raw, 1))
    return Policy(rules=rules, source=where)


def _rule(entry: Any, index: int, where: str) -> PolicyRule:
    at = f"{where}: rule #{index}"
    if not isinstance(entry, dict):
        raise UsageError(f"{at}: must be an object")
    unknown = sorted(set(entry) - _RULE_KEYS)
    if unknown:
        raise UsageError(f'{at}: unknown key "{unknown[0]}" (known: {", ".join(sorted(_RULE_KEYS))})')
    if entry.get("decision") not in DECISIONS:
        said = f"got {entry.get('decision')!r}"
        raise UsageError(f'{at}: "decision" must be one of {", ".join(DECISIONS)}, {said}')
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


def _hints(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    found = tool.get("annotations")
    return found if isinstance(found, Mapping) else {}


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

