"""A policy file (``--policy FILE``): the first matching rule decides. A tool denied
whatever its arguments is withheld (``tools`` says which rule); a deny that depends on an
argument refuses the call, naming the rule, in ``run``, ``batch`` and ``call``, each
refusal recorded and verified; ``allow`` runs a tool without asking; ``ask`` asks even
for a read-only tool. Bad files are refused with a message naming the rule and the key."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from testkit.processes import run
from testkit.servers import RUG_SERVER
from toolrelay.verify import load_run, verify

RULES = [
    {"server": "rug", "tool": "pull", "decision": "deny", "reason": "no rugs here"},
    {"tool": "write_*", "arguments": {"/name": "**/.ssh/**"}, "decision": "deny"},
    {"tool": "read_note", "decision": "ask"},
    {"server": "*", "tool": "*", "decision": "allow"},
]
SSH = {"name": "/home/u/.ssh/id_rsa", "text": "x"}
DENIED_SSH = "denied by policy rule #2 of policy.json"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "toolrelay", *args], text=True, timeout=60, cwd=cwd)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    entry = {"command": sys.executable, "args": [str(RUG_SERVER)]}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"rug": entry}}))
    (tmp_path / "policy.json").write_text(json.dumps({"rules": RULES}))
    return tmp_path


def script(folder: Path, *calls: tuple[str, dict[str, Any]]) -> Path:
    path = folder / "script.json"
    turns = [{"calls": [{"name": f"rug__{name}", "arguments": arguments} for name, arguments in calls]}]
    path.write_text(json.dumps({"turns": [*turns, {"message": "done"}]}))
    return path


def test_a_tool_denied_whatever_its_arguments_is_withheld_naming_the_rule(folder: Path) -> None:
    done = cli("tools", "--all", "--json", "--config", "mcp.json", "--policy", "policy.json", cwd=folder)
    assert done.returncode == 0, done.stderr
    offered = json.loads(done.stdout)
    assert sorted(tool["name"] for tool in offered["tools"]) == ["rug__read_note", "rug__write_note"]
    assert offered["withheld"] == [{"alias": "rug__pull", "server": "rug", "tool": "pull",
                                    "reason": 'denied by policy rule #1 of policy.json: "no rugs here"'}]


def test_run_refuses_by_argument_allows_without_asking_and_asks_for_a_read_only_tool(folder: Path) -> None:
    plan = script(folder, ("write_note", SSH), ("write_note", {"name": "ok", "text": "x"}),
                  ("read_note", {"name": "a"}))
    done = cli("run", "go", "--config", "mcp.json", "--policy", "policy.json", "--model", "offline",
               "--script", str(plan), "--transcript", "run.jsonl", "--json", cwd=folder)
    calls = json.loads(done.stdout)["calls"]
    assert [(call["status"], call.get("message")) for call in calls] == [
        ("refused_by_hook", DENIED_SSH),
        ("ok", None),  # not read-only, no --yes: allowed by rule #4 without asking
        ("refused_by_hook", "tool read_note on server rug needs consent and was not approved (no terminal "
                            "to ask on; rerun with --yes to approve all calls) (asked by policy rule #3 of "
                            "policy.json)"),
    ]
    verdict = verify(load_run(folder / "run.jsonl"))
    assert verdict.ok, verdict.broken
    events = [json.loads(line) for line in (folder / "run.jsonl").read_text().splitlines()]
    sent = [e["message"]["params"]["arguments"] for e in events
            if e["kind"] == "mcp_request" and e["message"].get("method") == "tools/call"]
    assert sent == [{"name": "ok", "text": "x"}]  # the refused calls never left toolrelay
    feedback = {e["call_id"]: e["item"]["output"] for e in events if e["kind"] == "feedback"}
    # the model reads the rule's words under "policy", never the status name "refused by hook"
    assert feedback[calls[0]["call_id"]] == f"Error (policy): {DENIED_SSH}"
    assert feedback[calls[2]["call_id"]] == f"Error (policy): {calls[2]['message']}"
    assert [call.get("refused_by") for call in calls] == ["policy", None, "policy"]


def test_call_and_batch_refuse_a_denied_argument_too(folder: Path) -> None:
    called = cli("call", "rug__write_note", json.dumps(SSH), "--config", "mcp.json",
                 "--policy", "policy.json", cwd=folder)
    assert (called.returncode, called.stderr) == (1, f"toolrelay call: {DENIED_SSH}\n")
    plan = script(folder, ("write_note", SSH))
    (folder / "tasks.jsonl").write_text(json.dumps({"id": "t1", "task": "go", "script": str(plan)}) + "\n")
    done = cli("batch", "tasks.jsonl", "--out", "out", "--model", "offline", "--config", "mcp.json",
               "--policy", "policy.json", cwd=folder)
    assert done.returncode == 0, done.stderr
    (result,) = [json.loads(line) for line in (folder / "out" / "results.jsonl").read_text().splitlines()]
    assert result["failed_calls"] == 1
    recorded = load_run(folder / "out" / result["transcript"])
    assert verify(recorded).ok
    outcome = next(c for c in recorded.calls).outcomes[0]["outcome"]
    assert (outcome["status"], outcome["message"]) == ("refused_by_hook", DENIED_SSH)


@pytest.mark.parametrize(("content", "said"), [
    (None, "cannot read the policy file policy.json: No such file or directory"),
    ("{not json", "the policy file policy.json is not JSON"),
    ('{"rule": []}', 'the policy file policy.json needs {"rules": [...]}'),
    ('{"rules": [{"tool": "x", "decision": "maybe"}]}',
     "policy.json: rule #1: \"decision\" must be one of allow, deny, ask, got 'maybe'"),
    ('{"rules": [{"decision": "deny"}, {"tol": "x", "decision": "deny"}]}',
     'policy.json: rule #2: unknown key "tol" (known: annotations, arguments, decision, reason, server, '
     'tool, turns)'),
    ('{"rules": [{"decision": "allow"}, {"turns": [1, 3], "decision": "deny"}]}',
     'policy.json: rule #2: "turns" must be "N" (one turn), "N-M" (N to M) or "N-" (N on), model turns '
     "counted from 1, got [1, 3]"),
    ('{"rules": [{"turns": "3-1", "decision": "deny"}]}',
     "policy.json: rule #1: \"turns\" '3-1' names no turn"),
    ('{"rules": [{"turns": "0", "decision": "deny"}]}', "policy.json: rule #1: \"turns\" '0' names no turn"),
    ('{"rules": [{"arguments": {"path": "*"}, "decision": "deny"}]}',
     'policy.json: rule #1: "arguments" maps JSON Pointers ("/path") to globs on their string values'),
])
def test_a_bad_policy_file_is_refused_before_any_server_starts(tmp_path: Path, content: str | None,
                                                               said: str) -> None:
    if content is not None:
        (tmp_path / "policy.json").write_text(content)
    done = cli("tools", "--policy", "policy.json", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(f"toolrelay tools: error: {said}")


def config_with(folder: Path, toolrelay: Any, **entry_keys: Any) -> None:
    entry = {"command": sys.executable, "args": [str(RUG_SERVER)], **entry_keys}
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": {"rug": entry}, "toolrelay": toolrelay}))


@pytest.mark.parametrize("block", [{"policy": {"rules": RULES}}, {"policy": "policy.json"}],
                         ids=["inline", "path"])
def test_the_configs_policy_block_is_enforced_and_policy_overrides_it(folder: Path, block: Any) -> None:
    config_with(folder, block)
    source = "mcp.json" if isinstance(block["policy"], dict) else "policy.json"  # next to the config
    called = cli("call", "rug__write_note", json.dumps(SSH), "--config", "mcp.json", cwd=folder)
    said = f"toolrelay call: denied by policy rule #2 of {source}\n"
    assert (called.returncode, called.stderr) == (1, said)
    plan = script(folder, ("write_note", SSH))
    done = cli("run", "go", "--config", "mcp.json", "--model", "offline", "--script", str(plan),
               "--transcript", "run.jsonl", "--json", cwd=folder)
    (call,) = json.loads(done.stdout)["calls"]
    assert (call["status"], call["message"]) == ("refused_by_hook", f"denied by policy rule #2 of {source}")
    assert verify(load_run(folder / "run.jsonl")).ok
    (folder / "open.json").write_text(json.dumps({"rules": [{"decision": "allow"}]}))
    opened = cli("call", "rug__write_note", json.dumps(SSH), "--config", "mcp.json", "--policy", "open.json",
                 cwd=folder)
    assert opened.returncode == 0, opened.stderr


def test_the_library_reads_the_configs_policy_too(folder: Path) -> None:
    import toolrelay

    config_with(folder, {"policy": {"rules": RULES}})
    plan = script(folder, ("write_note", SSH))
    result = toolrelay.run("go", config=folder / "mcp.json", model="offline", script=plan)
    (call,) = result.calls
    said = f"denied by policy rule #2 of {folder / 'mcp.json'}"
    assert (call.status, call.message) == ("refused_by_hook", said)


def test_a_conversation_reads_the_configs_policy_too(folder: Path) -> None:
    import toolrelay

    config_with(folder, {"policy": {"rules": RULES}})
    plan = script(folder, ("write_note", SSH))
    with toolrelay.SyncConversation(config=folder / "mcp.json", model="offline", script=plan) as conv:
        result = conv.send("go")
    (call,) = result.calls
    said = f"denied by policy rule #2 of {folder / 'mcp.json'}"
    assert (call.status, call.message) == ("refused_by_hook", said)


@pytest.mark.parametrize(("toolrelay", "said"), [
    ([], 'mcp.json: the top-level "toolrelay" must be an object'),
    ({"pins": "off"}, 'mcp.json: unknown key "toolrelay.pins" at the top level (known: policy; per-server '
                      'settings go in each entry\'s own "toolrelay" block)'),
    ({"policy": 3}, 'mcp.json: "toolrelay.policy" must be {"rules": [...]} or the path of a policy file'),
    ({"policy": {"rules": [{"decision": "no"}]}},
     "mcp.json: \"toolrelay.policy\": rule #1: \"decision\" must be one of allow, deny, ask, got 'no'"),
])
def test_a_bad_policy_block_is_refused(folder: Path, toolrelay: Any, said: str) -> None:
    config_with(folder, toolrelay)
    done = cli("tools", "--config", "mcp.json", cwd=folder)
    assert done.returncode == 2
    assert done.stderr.startswith(f"toolrelay tools: error: {said}"), done.stderr


def test_a_deny_list_outside_the_entrys_toolrelay_block_is_warned_about_once(folder: Path) -> None:
    config_with(folder, {}, deny=["write_note"])
    done = cli("tools", "--config", "mcp.json", cwd=folder)
    assert done.returncode == 0, done.stderr
    warning = ("mcp.json: server 'rug': \"deny\" is ignored here; toolrelay reads it inside the entry's "
               "\"toolrelay\" block (\"toolrelay\": {\"deny\": [...]}) or from a policy file (--policy)")
    assert done.stderr.count(warning) == 1, done.stderr
    assert "rug__write_note" in done.stdout  # nothing was denied: hence the warning
