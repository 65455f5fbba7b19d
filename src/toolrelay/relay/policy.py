"""A policy file: ordered rules saying which tool may run, as one offer-chain filter and one call hook.

    {"rules": [
      {"server": "notes", "tool": "write_*", "decision": "deny", "reason": "notes are read-only here"},
      {"tool": "write_file", "arguments": {"/path": "**/.ssh/**"}, "decision": "deny"},
      {"annotations": {"destructiveHint": true}, "decision": "ask"},
      {"server": "*", "tool": "*", "decision": "allow"}
    ]}

``server`` and ``tool`` are globs on the config's server name and the MCP tool name
(default any), ``annotations`` match hint values, ``arguments`` maps a JSON Pointer into
the call's arguments to a glob on its string value (the rules themselves, and which one
decides, are ``stages/policy_rules.py``: verify applies them again through it). The first
rule that matches decides: ``deny`` withholds the tool from the model (``withhold``, when
no argument decides it) or refuses the call naming the rule (``before_call``, a
``refused_by_hook`` outcome with ``refused_by: "policy"``: never a success); ``allow`` runs
it without asking; ``ask`` asks for consent, even for a tool marked read-only. A rule with
``turns`` (``"1-3"``) holds in those model turns only: a tool denied in some turns stays
declared and is left out of those turns' ``tool_choice`` (``allowed_in_turn``,
``stages/policy_turns.py``), a call of it there refused. No rule matching: today's behaviour
(read-only tools run, others asked), unless an earlier answer stands (``memory``: ``a``
always for this tool this run, ``s`` saved). A ``Policy`` is both: give the same object as
a filter and as a hook (the hook reads the annotations the filter saw), as ``--policy
FILE`` does. Bound to a run's events (``record_to``, which the assembly calls), it records
its rules as the servers list their tools (before its first decision) and every decision
it takes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..client import jsonc
from ..client.config import ServerConfig
from ..client.host import SamplingApprover, SamplingRequest
from ..errors import UsageError
from ..events import EventStream
from ..protocol import json_depth
from ..protocol.tool_digest import tool_digest
from .approvals import ApprovalStore
from .offer import ServerListing
from .stages.consent import ConsentMemory
from .stages.context import CallContext, Refusal
from .stages.parse import FunctionCall
from .stages.policy_rules import (
    DECISIONS,
    DEFAULT,
    REFUSED_BY_POLICY,
    PolicyDecision,
    PolicyLoaded,
    PolicyRule,
    SamplingRules,
    deciding_rule,
    parse_rules,
    parse_sampling,
    rules_digest,
    said,
)
from .stages.policy_turns import PolicyTurn, Routes, has_phases, hidden_in_turn, withheld_rule
from .stages.route import Route

__all__ = ["DECISIONS", "NO_POLICY", "Policy", "PolicyRule", "load_policy", "policy_of"]

NO_POLICY: Final = "no policy file"
"""The source of the policy of no rules a run keeps its remembered answers in."""


@dataclass(slots=True)
class Policy:
    """The rules of one file; a ``ToolFilter`` and a ``CallHook`` at once."""

    rules: tuple[PolicyRule, ...]
    source: str
    """Where the rules came from (the file's path), named in every reason."""
    memory: ConsentMemory | None = None
    """Answers that stand for later calls (the terminal prompt's ``a`` and ``s``)."""
    sampling: SamplingRules | None = None
    """The ``"sampling"`` block: which servers may sample the model, and the run's budget."""
    approvals: ApprovalStore | None = None
    """Where ``s`` answers are kept for later runs (read as each server lists its tools)."""
    _annotations: dict[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    _configs: dict[str, ServerConfig] = field(default_factory=dict)
    _digests: dict[tuple[str, str], str] = field(default_factory=dict)
    _events: EventStream | None = None
    _announced: bool = False
    _sampled: list[int] = field(default_factory=lambda: [0, 0])
    """Sampling requests approved so far, and the tokens they asked for."""

    @property
    def digest(self) -> str:
        return rules_digest(self.rules, self.sampling)

    def sampling_gate(self, approve: SamplingApprover) -> SamplingApprover:
        """``approve`` behind the sampling rules: ``deny`` and a spent budget refuse, ``allow``
        approves without asking, ``ask`` (or no rule) asks ``approve``; each decision recorded."""

        async def gate(request: SamplingRequest) -> str | None:
            sampling = self.sampling or SamplingRules()
            rule = sampling.deciding(request.server)
            decision = rule.decision if rule is not None else DEFAULT
            over = sampling.over_budget(self._sampled[0], self._sampled[1], request.max_tokens)
            words = said(rule, self.source) if over is None or decision == "deny" else over
            self._record(PolicyDecision(
                stage="sampling", server=request.server, tool="", decision="deny" if over else decision,
                rule=rule.index if rule else None, source=self.source, said=words, digest=self.digest,
                call_id=request.call_id, tokens=request.max_tokens))
            if decision == "deny" or over is not None:
                return words
            refusal = None if decision == "allow" else await approve(request)
            if refusal is None:
                self._sampled[0] += 1
                self._sampled[1] += request.max_tokens
            return refusal

        return gate

    def record_to(self, events: EventStream) -> None:
        """Record the rules (once, before the first decision) and each decision on ``events``."""
        if self._events is not events:
            self._events, self._announced = events, False

    def remember(self, memory: ConsentMemory, approvals: ApprovalStore | None = None) -> None:
        """Let ``memory`` answer for later calls, its ``s`` answers kept in ``approvals``."""
        self.memory, self.approvals = memory, approvals
        memory.save = self._save

    def withhold(self, listing: ServerListing) -> Mapping[str, str]:
        """Tools the first matching rule denies whatever the arguments (a rule with
        ``arguments`` decides at call time: the tool stays offered)."""
        found: dict[str, str] = {}
        self._announce()  # as the servers list their tools: a batch's preamble, before any task's decision
        self._configs[listing.server] = listing.config
        for tool in listing.tools:
            name, annotations = str(tool["name"]), _hints(tool)
            self._annotations[(listing.server, name)] = annotations
            self._digests[(listing.server, name)] = tool_digest(tool)
            rule = withheld_rule(self.rules, listing.server, name, annotations)
            if rule is not None:
                found[name] = rule.said(self.source)
                self._record(PolicyDecision(stage="offer", server=listing.server, tool=name, decision="deny",
                                            rule=rule.index, source=self.source, said=found[name],
                                            digest=self.digest))
        self._read_approvals(listing)
        return found

    def _read_approvals(self, listing: ServerListing) -> None:
        """The server's saved approvals that still hold (its tools defined as they were then)."""
        if self.memory is None or self.approvals is None:
            return
        names = [str(tool["name"]) for tool in listing.tools]
        digests = {name: self._digests[(listing.server, name)] for name in names}
        kept = {entry for entry in self.memory.saved if entry[0] != listing.server}
        approved = self.approvals.approved(listing.config, digests)
        self.memory.saved = kept | {(listing.server, name) for name in approved}

    def _save(self, server: str, tool: str) -> None:
        config, digest = self._configs.get(server), self._digests.get((server, tool))
        if self.approvals is not None and config is not None and digest is not None:
            self.approvals.save(config, tool, digest)

    async def before_call(self, call: FunctionCall, context: CallContext) -> Refusal | None:
        if context.server is None or context.tool is None:
            return None  # an unknown tool: said as such by the dispatch
        server, tool = context.server, context.tool
        annotations = self._annotations.get((server, tool), {})
        try:
            arguments = json_depth.loads(call.arguments_text or "{}")
        except ValueError:
            arguments = None  # invalid arguments are refused later; no argument rule matches them
        rule = deciding_rule(self.rules, server, tool, annotations, arguments, turn=context.turn)
        decision = rule.decision if rule is not None else DEFAULT
        remembered = self._remembered(decision, server, tool, annotations)
        self._record(PolicyDecision(
            stage="call", server=server, tool=tool, decision=decision, rule=rule.index if rule else None,
            source=self.source, said=said(rule, self.source), digest=self.digest,
            call_id=call.call_id or None, alias=call.alias, remembered=remembered))
        if rule is not None and rule.decision == "deny":
            return Refusal(rule.said(self.source), by=REFUSED_BY_POLICY)
        if remembered is not None or rule is None:
            if remembered is not None:
                context.approve = None  # an earlier answer stands: nobody is asked again
            return None
        approve = context.approve
        context.approve = None  # allow: nobody is asked; ask: asked here, once, whatever the hints say
        if rule.decision == "ask" and approve is not None:
            route = Route(alias=call.name, server=server, tool=tool, rule={}, annotations=dict(annotations))
            refusal = await approve(route, arguments if isinstance(arguments, dict) else {})
            if refusal is None:
                return None
            return Refusal(f"{refusal} ({rule.said(self.source)})", by=REFUSED_BY_POLICY)
        return None

    async def after_call(self, call: FunctionCall, context: CallContext, outcome: Any) -> None:
        return None

    def allowed_in_turn(self, turn: int, routes: Routes) -> list[str] | None:
        """The aliases of ``routes`` (the tools declared, in order) allowed in ``turn``, when the
        phase rules hide some this turn (None: nothing narrowed); recorded under phase rules."""
        if not has_phases(self.rules):
            return None
        hidden = hidden_in_turn(self.rules, turn, routes)
        allowed = [alias for alias in routes if alias not in hidden]
        self._record(PolicyTurn(
            turn=turn, allowed=allowed, source=self.source, digest=self.digest,
            hidden=[{"alias": alias, "server": routes[alias][0], "tool": routes[alias][1], "rule": rule.index,
                     "said": rule.said(self.source)} for alias, rule in hidden.items()]))
        return allowed if hidden else None

    def _remembered(self, decision: str, server: str, tool: str,
                    annotations: Mapping[str, Any]) -> str | None:
        """``run`` or ``saved`` when an earlier answer approves a call that would be asked about."""
        if self.memory is None or decision not in ("ask", DEFAULT):
            return None
        if decision == DEFAULT and annotations.get("readOnlyHint") is True:
            return None  # never asked about: no answer is needed
        return self.memory.remembered(server, tool)

    def _record(self, decision: PolicyDecision | PolicyTurn) -> None:
        self._announce()
        if self._events is not None:
            self._events.emit(decision)

    def _announce(self) -> None:
        """The rules, recorded once per event stream before the first thing decided by them."""
        events = self._events
        if events is None or self._announced:
            return
        self._announced = True
        events.emit(PolicyLoaded(source=self.source, digest=self.digest,
                                 rules=[rule.to_record() for rule in self.rules],
                                 sampling=self.sampling.to_record() if self.sampling else None))


def load_policy(path: str | Path) -> Policy:
    """The policy file at ``path`` (JSON or JSONC); UsageError naming the rule and key otherwise."""
    where = str(path)
    try:
        document = jsonc.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read the policy file {where}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"the policy file {where} is not JSON: {exc}") from None
    return Policy(rules=parse_rules(document, where), source=where, sampling=parse_sampling(document, where))


def policy_of(block: Any, config_path: str | Path) -> Policy:
    """The config's ``"toolrelay": {"policy": ...}``: the rules inline (``{"rules": [...]}``),
    or the path of a policy file (relative to the config's folder)."""
    if isinstance(block, str):
        path = Path(block).expanduser()
        return load_policy(path if path.is_absolute() else Path(config_path).parent / path)
    where = f'{config_path}: "toolrelay.policy"'
    if not isinstance(block, dict):
        raise UsageError(f'{where} must be {{"rules": [...]}} or the path of a policy file')
    return Policy(rules=parse_rules(block, where), source=str(config_path),
                  sampling=parse_sampling(block, where))


def _hints(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    found = tool.get("annotations")
    return found if isinstance(found, Mapping) else {}
