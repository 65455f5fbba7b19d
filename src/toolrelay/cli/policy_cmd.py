"""``toolrelay policy check``: what a policy decides for every tool the servers offer, and
which of its rules match nothing (a typo in a glob, a server renamed).

For each tool offered by the servers of ``--config`` (after the config's allow/deny lists
and the pins), the decision its first matching rule gives whatever the arguments (``deny``:
withheld; ``allow``; ``ask``; ``default``: no rule, consent as usual), with the rule, the
phase rules that decide it in some turns only (``"turns"``: ``hidden in turn 1``), and the
rules that may still refuse a call of it by its arguments. A tool rule that matches no
tool, and a sampling rule that matches no server, are flagged. The policy is ``--policy
FILE``, else the config's ``"toolrelay": {"policy": ...}``. Exit 0 with or without flags;
2 when there is no policy.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from typing import Any

from ..errors import UsageError
from ..events import EventStream
from ..relay.catalog import Catalog
from ..relay.policy import Policy
from ..relay.stages.policy_rules import DEFAULT, PolicyRule, deciding_rule, said
from ..relay.stages.policy_turns import withheld_rule
from .common import add_server_options, catalog_from_args, print_json, print_table
from .host_options import add_policy_option, policy_from_args

__all__ = ["configure", "run"]

CHECK_HELP = "for every tool, the decision and the rule; the rules that match nothing"
EXAMPLES = """examples:
  toolrelay policy check --config mcp.json --policy policy.json
  toolrelay policy check --config mcp.json --json        # the config's own "toolrelay": {"policy": ...}"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("check",), metavar="check", help=CHECK_HELP)
    add_server_options(parser, strict=False)
    add_policy_option(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.epilog = EXAMPLES


def run(args: argparse.Namespace) -> int:
    policy = policy_from_args(args)
    if policy is None:
        raise UsageError('policy check needs a policy: --policy FILE, or a config with "toolrelay": '
                         '{"policy": ...}')
    report = asyncio.run(_report(args, policy))
    if args.json:
        print_json(report)
    else:
        _print(report)
    return 0


async def _report(args: argparse.Namespace, policy: Policy) -> dict[str, Any]:
    async with contextlib.AsyncExitStack() as stack:
        catalog = await stack.enter_async_context(catalog_from_args(args, EventStream()))
        return _judged(catalog, policy)
    raise AssertionError("unreachable")  # pragma: no cover  (mypy: the with block returns)


def _judged(catalog: Catalog, policy: Policy) -> dict[str, Any]:
    tools, used = [], set()
    for route in catalog.routes:
        withheld = withheld_rule(policy.rules, route.server, route.tool, route.annotations)
        rule = withheld or deciding_rule(policy.rules, route.server, route.tool, route.annotations)
        phases = [r for r in policy.rules if r.turns is not None and not r.arguments
                  and r.matches_tool(route.server, route.tool, route.annotations)]
        by_arguments = [r for r in policy.rules if r.arguments and r.decision == "deny"
                        and r.matches_tool(route.server, route.tool, route.annotations)]
        used |= {r.index for r in policy.rules if r.matches_tool(route.server, route.tool, route.annotations)}
        tools.append({"alias": route.alias, "server": route.server, "tool": route.tool,
                      "decision": rule.decision if rule else DEFAULT, "rule": rule.index if rule else None,
                      "said": said(rule, policy.source), "withheld": withheld is not None,
                      "phases": [{"rule": r.index, "turns": r.turns.text, "when": r.turns.words,
                                  "decision": r.decision}
                                 for r in phases if r.turns is not None and withheld is None],
                      "refused_by_arguments": [r.index for r in by_arguments]})
    servers = set(catalog.available)
    sampling = policy.sampling.rules if policy.sampling else ()
    unmatched_sampling = [r for r in sampling if not any(_server_matches(r, s) for s in servers)]
    return {
        "policy": policy.source, "digest": policy.digest, "tools": tools,
        "withheld": [entry.to_record() for entry in catalog.withheld],
        "unmatched": [{"rule": r.index, **r.to_record()} for r in policy.rules if r.index not in used],
        "unmatched_sampling": [{"rule": r.index, **r.to_record()} for r in unmatched_sampling],
    }


def _server_matches(rule: PolicyRule, server: str) -> bool:
    return rule.matches_tool(server, "*", {})


def _print(report: dict[str, Any]) -> None:
    rows = [(t["alias"], t["server"], t["tool"], t["decision"], f"#{t['rule']}" if t["rule"] else "-",
             _note(t)) for t in report["tools"]]
    print_table(("ALIAS", "SERVER", "TOOL", "DECISION", "RULE", "NOTE"), rows)
    out = sys.stdout
    out.write(f"\n{len(rows)} tool(s) checked against {report['policy']} ({report['digest']})\n")
    for entry in report["withheld"]:
        where = f"{entry['alias']} ({entry['server']}/{entry['tool']})"
        out.write(f"  - {where} not offered anyway: {entry['reason']}\n")
    for rule in report["unmatched"]:
        out.write(f"rule #{rule['rule']} matches no tool: {_shown(rule)}\n")
    for rule in report["unmatched_sampling"]:
        out.write(f"sampling rule #{rule['rule']} matches no server: {_shown(rule)}\n")


def _note(tool: dict[str, Any]) -> str:
    if tool["withheld"]:
        return "withheld from the model"
    notes = [f"{_PHASE[phase['decision']]} {phase['when']} (rule #{phase['rule']})"
             for phase in tool["phases"]]
    refused = tool["refused_by_arguments"]
    if refused:
        notes.append(f"a call may be refused by its arguments (rule {', '.join(f'#{i}' for i in refused)})")
    return "; ".join(notes)


_PHASE = {"deny": "hidden", "allow": "allowed", "ask": "asked about"}


def _shown(rule: dict[str, Any]) -> str:
    return ", ".join(f"{key} {value!r}" for key, value in rule.items() if key != "rule")
