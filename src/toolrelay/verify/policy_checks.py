"""Routing, the policy: no call ran that the recorded policy denied, and each recorded
decision is the one the recorded rules give.

A run with a policy records it (``policy``: its source, its rules, their digest) before
its first decision, then one ``policy_decision`` per tool withheld from the offer and per
call (``relay/policy.py``). Here the recorded rules are read again and their digest
recomputed (a rule changed in the record is found), and each decision is taken again
through the same function the relay used (``stages/policy_rules.py``), from the tool's
annotations as its server listed them and the call's recorded arguments text. A call's
decision is recorded inside the call's own span of events (after its ``call_routed``,
before its ``call_outcome``) and names its call_id, alias and route: it is paired with the
call whose span holds it, never by the model's call_id alone. A call the rules deny must have ended
``refused_by_hook`` with the rule's words and no ``tools/call``; an outcome that says the
policy refused it (``refused_by: "policy"``, which the model read as ``Error (policy): ``;
older transcripts leave it out) must rest on a decision that could refuse (deny, or ask);
a tool they deny whatever
the arguments must not be in any declarations recorded after the policy. Under a recorded
policy every routed call has its decision: one removed is a broken link. Transcripts
without a policy are not judged here.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import itemgetter, methodcaller
from typing import Any, Final

from ..errors import UsageError
from ..events import CallOutcomeEvent
from ..protocol import json_depth
from ..relay.stages.policy_rules import (
    DEFAULT,
    REFUSED_BY_POLICY,
    SPENT,
    PolicyDecision,
    PolicyLoaded,
    PolicyRule,
    SamplingRules,
    deciding_rule,
    parse_rules,
    parse_sampling,
    rules_digest,
)
from ..relay.stages.policy_turns import withheld_rule
from .evidence import call_finding, seqs_of
from .facts import RunFacts
from .policy_turns import check_turns
from .record import CallTrace, RunRecord
from .verdict import Finding

__all__ = ["check_policy", "decision_of", "policy_note"]

_LINK = "routing"
_OUTCOME: Final = itemgetter("outcome")
_REFUSED_BY: Final = methodcaller("get", "refused_by")


def check_policy(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """routing: the policy's digest, every decision against its rules, no denied call run."""
    policies, decisions = run.of_kind(PolicyLoaded.kind), run.of_kind(PolicyDecision.kind)
    if not policies:
        if decisions:
            first = decisions[0]
            return [_general(False, f"a policy decision is recorded (seq {first['seq']}) but no policy: "
                             "the rules it was taken by are gone from the record", first)]
        if not _any_says_policy_refused(run):
            return []
        return [_unfounded_refusal(call, "no policy is recorded") for call in run.calls
                if _says_policy_refused(call)]
    read = _read_policy(policies[0])
    if isinstance(read, Finding):
        return [read]
    rules, sampling, digest = read
    findings = [_general(True, f"the policy of {policies[0].get('source')}: {len(rules)} rule(s), digest "
                         f"{digest}", policies[0])]
    findings += [f for f in (_decision_digest(d, digest) for d in decisions) if f is not None]
    findings += [f for f in (_offer(d, rules, facts) for d in decisions if d.get("stage") == "offer") if f]
    findings += _offered(run, rules, facts, policies[0]["seq"])
    findings += check_turns(run, rules, facts)
    findings += [f for f in (_sampled(d, sampling) for d in decisions if d.get("stage") == "sampling") if f]
    made = [d for d in decisions if d.get("stage") == "call"]
    calls = [call for call in run.calls if call.routed]
    paired = {call.routed[0]["seq"]: _paired(call, made) for call in calls}
    findings += [f for f in (_call(call, paired[call.routed[0]["seq"]], rules, facts) for call in calls) if f]
    findings += [_unfounded_refusal(call, "it was never routed: no rule decided it") for call in run.calls
                 if not call.routed and _says_policy_refused(call)]
    used = {id(d) for d in paired.values() if d is not None}
    findings += [_general(False, f"policy decision (seq {d['seq']}) for {d.get('call_id')} "
                          f"({d.get('server')}/{d.get('tool')}) lies in no such call's span of events", d)
                 for d in made if id(d) not in used]
    return findings


def decision_of(run: RunRecord, call: CallTrace) -> dict[str, Any] | None:
    """The recorded policy decision of ``call`` (the one inside its span of events), if any."""
    made = [e for e in run.of_kind(PolicyDecision.kind) if e.get("stage") == "call"]
    return _paired(call, made) if call.routed else None


def _paired(call: CallTrace, decisions: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The decision recorded after the call's call_routed and before its outcome, naming its
    call_id, alias and route (the call's own span: call_ids repeat across turns)."""
    routed = call.routed[0]
    outcome = call.first("outcomes")
    end = outcome["seq"] if outcome is not None else float("inf")
    same = (call.call_id, call.alias, routed.get("server"), routed.get("tool"))
    return next((d for d in decisions if routed["seq"] < d["seq"] < end
                 and (d.get("call_id"), d.get("alias"), d.get("server"), d.get("tool")) == same), None)


def policy_note(run: RunRecord, call: CallTrace) -> str | None:
    """``policy: denied by policy rule #2 of policy.json`` for a call with a recorded decision."""
    decision = decision_of(run, call)
    if decision is None:
        return None
    remembered = decision.get("remembered")
    by_answer = f", approved by an earlier answer ({remembered})" if remembered else ""
    return f"policy: {decision.get('said')}{by_answer}"


_Read = tuple[tuple[PolicyRule, ...], SamplingRules | None, str]


def _read_policy(policy: dict[str, Any]) -> _Read | Finding:
    try:
        rules = parse_rules({"rules": policy.get("rules")}, str(policy.get("source")))
        sampling = parse_sampling({"sampling": policy.get("sampling")}, str(policy.get("source")))
    except UsageError as exc:
        return _general(False, f"the recorded policy cannot be read: {exc}", policy)
    digest = rules_digest(rules, sampling)
    if policy.get("digest") != digest:
        return _general(False, f"the recorded policy's rules give digest {digest}, but it records "
                        f"{policy.get('digest')}: a rule changed after the run", policy)
    return rules, sampling, digest


def _decision_digest(decision: dict[str, Any], digest: str) -> Finding | None:
    if decision.get("digest") == digest:
        return None
    return _general(False, f"policy decision (seq {decision['seq']}) was taken by rules of digest "
                    f"{decision.get('digest')}, not by the recorded policy ({digest})", decision)


def _annotations(facts: RunFacts, server: Any, tool: Any, seq: int) -> Mapping[str, Any]:
    listing = facts.listing_at(server, seq)
    entry = listing.tools.get(tool) if listing is not None and isinstance(tool, str) else None
    found = entry.get("annotations") if isinstance(entry, dict) else None
    return found if isinstance(found, dict) else {}


def _offer(decision: dict[str, Any], rules: tuple[PolicyRule, ...], facts: RunFacts) -> Finding | None:
    server, tool = decision.get("server"), decision.get("tool")
    if not isinstance(server, str) or not isinstance(tool, str):
        return _general(False, f"policy decision (seq {decision['seq']}) names no server and tool", decision)
    rule = withheld_rule(rules, server, tool, _annotations(facts, server, tool, decision["seq"]))
    if rule is None or decision.get("rule") != rule.index:
        gives = f"rule #{rule.index} (deny)" if rule else "no rule that denies it in every turn"
        return _general(False, f"policy decision (seq {decision['seq']}) withheld {server}/{tool} by rule "
                        f"#{decision.get('rule')}, but the recorded rules give {gives}", decision)
    return None


def _offered(run: RunRecord, rules: tuple[PolicyRule, ...], facts: RunFacts, since: int) -> list[Finding]:
    """No tool the rules deny whatever its arguments is in the declarations after the policy."""
    for catalog in run.catalogs:
        routes = catalog.get("routes") if catalog["seq"] > since else None
        for alias, route in (routes or {}).items():
            server, tool = route if isinstance(route, list) and len(route) == 2 else (None, None)
            if not isinstance(server, str) or not isinstance(tool, str):
                continue
            rule = withheld_rule(rules, server, tool, _annotations(facts, server, tool, catalog["seq"]))
            if rule is not None:
                return [_general(False, f"the declarations ({catalog.get('reason')}) offer {alias}, which "
                                 f"policy rule #{rule.index} denies: it should have been withheld", catalog)]
    return []


def _sampled(decision: dict[str, Any], sampling: SamplingRules | None) -> Finding | None:
    """A sampling request's decision is its server's first sampling rule's (or a spent budget's)."""
    rule = (sampling or SamplingRules()).deciding(str(decision.get("server")))
    gives = rule.decision if rule is not None else DEFAULT
    spent = decision.get("decision") == "deny" and str(decision.get("said")).startswith(SPENT)
    held = decision.get("decision") == gives or spent
    if decision.get("rule") == (rule.index if rule else None) and held:
        return None
    server = decision.get("server")
    return _general(False, f"the sampling decision (seq {decision['seq']}) for server {server} records "
                    f"{decision.get('decision')} by rule #{decision.get('rule')}, but the recorded sampling "
                    f"rules give {_rule_text(rule)}", decision)


def _arguments(call: CallTrace) -> Any:
    parsed = call.first("parsed")
    text = parsed.get("arguments_text") if parsed is not None else call.item.get("arguments")
    try:
        return json_depth.loads(text or "{}") if isinstance(text, str) else None
    except ValueError:
        return None


def _call(call: CallTrace, decision: dict[str, Any] | None, rules: tuple[PolicyRule, ...],
          facts: RunFacts) -> Finding | None:
    routed = call.routed[0]
    server, tool = routed.get("server"), routed.get("tool")
    if not isinstance(server, str) or not isinstance(tool, str):
        return None
    annotations = _annotations(facts, server, tool, routed["seq"])
    rule = deciding_rule(rules, server, tool, annotations, _arguments(call), turn=call.turn)
    gives = rule.decision if rule is not None else DEFAULT
    where = f"{call.call_id} ({call.alias} → {server}/{tool})"
    if decision is None:
        message = (f"{where}: no policy decision is recorded for the call, yet the recorded policy gives "
                   f"{_rule_text(rule)}: a decision removed from the record")
        return call_finding(call, _LINK, False, message, "policy", routed)
    if (decision.get("decision"), decision.get("rule")) != (gives, rule.index if rule else None):
        message = (f"{where}: the policy decision records {decision.get('decision')} by "
                   f"rule #{decision.get('rule')}, but the recorded rules give {_rule_text(rule)}")
        return call_finding(call, _LINK, False, message, "policy", decision, routed)
    if decision.get("remembered") and gives not in ("ask", DEFAULT):
        message = f"{where}: approved by an earlier answer, yet the rules give {gives}: nobody was asked"
        return call_finding(call, _LINK, False, message, "policy", decision, routed)
    if gives == "deny":
        return _denied(call, where, decision, routed)
    if _says_policy_refused(call) and not _asked_and_refused(call, decision, gives):
        message = (f"{where}: its outcome says the policy refused it, but the recorded rules give "
                   f"{_rule_text(rule)}, which refuses nothing")
        return call_finding(call, _LINK, False, message, "policy", decision, call.first("outcomes"))
    return call_finding(call, _LINK, True, f"{where}: {decision.get('said')}", "policy", decision, routed)


def _denied(call: CallTrace, where: str, decision: dict[str, Any], routed: dict[str, Any]) -> Finding:
    request = call.first("mcp_requests")
    if request is not None:
        message = (f"{where}: the recorded policy denies the call, yet its tools/call went out "
                   f"(seq {request['seq']})")
        return call_finding(call, _LINK, False, message, "policy", decision, request)
    outcome = call.outcome or {}
    if outcome.get("status") != "refused_by_hook" or outcome.get("message") != decision.get("said"):
        message = (f"{where}: the recorded policy denies the call, but it ended {outcome.get('status')} "
                   f"({outcome.get('message')!r}), not refused naming the rule")
        return call_finding(call, _LINK, False, message, "policy", decision, call.first("outcomes"))
    said = f"{where}: refused, {decision.get('said')}"
    return call_finding(call, _LINK, True, said, "policy", decision, routed)


def _any_says_policy_refused(run: RunRecord) -> bool:
    """Whether any call outcome event says the policy refused its call (read in C: each
    call's first outcome is one of them, and most runs have none)."""
    try:
        said = list(map(_REFUSED_BY, map(_OUTCOME, run.of_kind(CallOutcomeEvent.kind))))
    except (KeyError, TypeError, AttributeError):  # not as toolrelay writes it: every call asked
        return True
    return REFUSED_BY_POLICY in said


def _says_policy_refused(call: CallTrace) -> bool:
    return (call.outcome or {}).get("refused_by") == REFUSED_BY_POLICY


def _asked_and_refused(call: CallTrace, decision: dict[str, Any], gives: str) -> bool:
    """An ``ask`` rule's refusal: the answer, then the rule's words in brackets."""
    message = str((call.outcome or {}).get("message", ""))
    return gives == "ask" and message.endswith(f" ({decision.get('said')})")


def _unfounded_refusal(call: CallTrace, but: str) -> Finding:
    message = f"{call.call_id} ({call.alias}): its outcome says the policy refused it, but {but}"
    return call_finding(call, _LINK, False, message, "policy", call.first("outcomes"))


def _rule_text(rule: PolicyRule | None) -> str:
    return f"{rule.decision} by rule #{rule.index}" if rule is not None else "no rule (default consent)"


def _general(ok: bool, message: str, event: dict[str, Any]) -> Finding:
    return Finding(link=_LINK, ok=ok, message=message, check="policy", seqs=seqs_of(event))
