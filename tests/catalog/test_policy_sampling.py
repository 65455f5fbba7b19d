"""Sampling rules: the policy's ``"sampling"`` block says which servers may sample the model
(``allow`` without asking, ``deny``, ``ask``) and the run's budget of requests and tokens;
each request's decision is recorded and verified, and a tampered copy is rejected."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from testkit.processes import run
from testkit.servers import ASKING_SERVER
from testkit.transcripts import transcript_events
from toolrelay.verify import load_run, verify

POLICY = {"rules": [], "sampling": {
    "rules": [{"server": "other", "decision": "deny", "reason": "not this one"},
              {"server": "ask", "decision": "allow"}],
    "maxRequests": 2, "maxTokens": 100}}


def test_sampling_is_allowed_denied_and_budgeted_each_decision_recorded(tmp_path: Path) -> None:
    entry = {"command": sys.executable, "args": [str(ASKING_SERVER)]}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"ask": entry, "other": entry}}))
    (tmp_path / "policy.json").write_text(json.dumps(POLICY))
    asks = [("ask__sample", 40), ("ask__sample", 40), ("ask__sample", 40), ("other__sample", 10)]
    turns = [{"calls": [{"name": name, "arguments": {"prompt": "Say hi", "max_tokens": tokens}}]}
             for name, tokens in asks]
    script = {"turns": [*turns, {"message": "done"}], "sampling": {"message": "Hi there."}}
    (tmp_path / "script.json").write_text(json.dumps(script))
    done = run([sys.executable, "-m", "toolrelay", "run", "go", "--config", "mcp.json",
                "--policy", "policy.json", "--model", "offline", "--script", "script.json",
                "--transcript", "run.jsonl", "--json"],
               cwd=tmp_path, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    events = transcript_events(tmp_path / "run.jsonl")
    decided = [(e["server"], e["decision"], e["rule"], e["said"]) for e in events
               if e["kind"] == "policy_decision" and e["stage"] == "sampling"]
    assert decided == [
        ("ask", "allow", 2, "allowed by policy rule #2 of policy.json"),  # no --yes, no terminal: allowed
        ("ask", "allow", 2, "allowed by policy rule #2 of policy.json"),
        ("ask", "deny", 2, "over the policy's sampling budget of 2 request(s) per run"),
        ("other", "deny", 1, 'denied by policy rule #1 of policy.json: "not this one"'),
    ]
    answers = [json.loads(e["item"]["output"]) for e in events if e["kind"] == "feedback"]
    assert ["result" in answer for answer in answers] == [True, True, False, False]  # what each server got
    assert "over the policy's sampling budget of 2 request(s) per run" in json.dumps(answers[2])
    verdict = verify(load_run(tmp_path / "run.jsonl"))
    assert verdict.ok, verdict.broken

    for event in events:  # a refused request recorded as allowed
        if event["kind"] == "policy_decision" and event["server"] == "other":
            event["decision"] = "allow"
    (tmp_path / "tampered.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    broken = verify(load_run(tmp_path / "tampered.jsonl")).broken
    assert broken is not None and "records allow by rule #1, but the recorded sampling rules give deny" in (
        broken.message)


def test_a_bad_sampling_block_is_refused(tmp_path: Path) -> None:
    (tmp_path / "policy.json").write_text(json.dumps({"rules": [], "sampling": {"maxRequests": -1}}))
    done = run([sys.executable, "-m", "toolrelay", "tools", "--policy", "policy.json"], cwd=tmp_path,
               text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith('toolrelay tools: error: policy.json: "sampling": "maxRequests" must be a '
                                  "whole number, 0 or more")
