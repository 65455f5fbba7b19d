"""``toolrelay policy check``: every offered tool with its decision and rule (and the rules
that may refuse it by its arguments), the rules matching no tool or server flagged; the
config's own policy block when no --policy is given; a usage error without any policy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from testkit.processes import run
from testkit.servers import RUG_SERVER

RULES = [
    {"server": "rug", "tool": "pull", "decision": "deny", "reason": "no rugs here"},
    {"tool": "write_*", "arguments": {"/name": "**/.ssh/**"}, "decision": "deny"},
    {"server": "rugg", "decision": "deny"},  # a typo: matches nothing
    {"tool": "read_note", "decision": "ask"},
]
SAMPLING = {"rules": [{"server": "nobody", "decision": "allow"}]}


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "toolrelay", *args], text=True, timeout=60, cwd=cwd)


def _folder(tmp_path: Path, **top: object) -> Path:
    entry = {"command": sys.executable, "args": [str(RUG_SERVER)]}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"rug": entry}, **top}))
    (tmp_path / "policy.json").write_text(json.dumps({"rules": RULES, "sampling": SAMPLING}))
    return tmp_path


def test_each_tool_gets_its_decision_and_rule_and_unmatched_rules_are_flagged(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    done = cli("policy", "check", "--config", "mcp.json", "--policy", "policy.json", "--json", cwd=folder)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    decided = [(t["alias"], t["decision"], t["rule"], t["refused_by_arguments"]) for t in report["tools"]]
    assert decided == [("rug__pull", "deny", 1, []), ("rug__read_note", "ask", 4, []),
                       ("rug__write_note", "default", None, [2])]
    assert report["unmatched"] == [{"rule": 3, "server": "rugg", "decision": "deny"}]
    assert report["unmatched_sampling"] == [{"rule": 1, "server": "nobody", "decision": "allow"}]
    table = cli("policy", "check", "--config", "mcp.json", "--policy", "policy.json", cwd=folder)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["ALIAS", "SERVER", "TOOL", "DECISION", "RULE", "NOTE"]
    assert lines[1].split()[:5] == ["rug__pull", "rug", "pull", "deny", "#1"]
    assert "rule #3 matches no tool: server 'rugg', decision 'deny'" in table.stdout
    assert "sampling rule #1 matches no server: server 'nobody', decision 'allow'" in table.stdout


def test_the_configs_policy_is_checked_and_no_policy_is_a_usage_error(tmp_path: Path) -> None:
    folder = _folder(tmp_path, toolrelay={"policy": "policy.json"})
    done = cli("policy", "check", "--config", "mcp.json", "--json", cwd=folder)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["policy"] == "policy.json"
    (folder / "bare.json").write_text(json.dumps({"mcpServers": {"rug": {"command": "x"}}}))
    refused = cli("policy", "check", "--config", "bare.json", cwd=folder)
    assert refused.returncode == 2
    assert refused.stderr.endswith('error: policy check needs a policy: --policy FILE, or a config with '
                                   '"toolrelay": {"policy": ...}\n')
