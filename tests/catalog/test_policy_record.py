"""A policy's decisions are recorded and proven: a policy denying ``write_*`` on one server
(``notes``) and any ``path`` under ``.ssh`` on another (``fs``, toolrelay's own file
server) is enforced in ``run``, ``batch`` and ``call``; the transcript holds the policy (its
rules and digest) and every decision, paired with its call by its own span of events;
``verify`` holds each decision to the recorded rules, and rejects tampered copies (a
decision removed, a rule changed, a denied call that ran, a denied tool offered, a refusal
claimed for the policy that it did not make); ``explain`` and ``view`` name the rule of a
refused call and say "refused by policy", never the status name; a transcript recorded
before refusals named the policy still verifies."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from testkit.processes import run
from testkit.servers import RUG_SERVER
from toolrelay.relay.stages.policy_rules import parse_rules, rules_digest
from toolrelay.verify import load_run, verify

RULES = [
    {"server": "notes", "tool": "write_*", "decision": "deny", "reason": "notes are read-only here"},
    {"server": "fs", "arguments": {"/path": "**/.ssh/**"}, "decision": "deny", "reason": "no keys"},
    {"server": "*", "tool": "*", "decision": "allow"},
]
OLD_REFUSAL = (Path(__file__).resolve().parent.parent / "data" / "transcripts"
               / "policy_refusal_before_refused_by.jsonl")
"""README's trust example (``examples/trust-policy.json``) as recorded before ``refused_by``."""
SSH_DENIED = 'denied by policy rule #2 of policy.json: "no keys"'
WRITE_DENIED = 'denied by policy rule #1 of policy.json: "notes are read-only here"'
Events = list[dict[str, Any]]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "toolrelay", *args], text=True, timeout=60, cwd=cwd)


def make_folder(folder: Path) -> Path:
    (folder / "home" / ".ssh").mkdir(parents=True)
    (folder / "home" / ".ssh" / "id_rsa").write_text("SECRET KEY\n")
    (folder / "home" / "notes.txt").write_text("hello\n")
    servers = {"notes": {"command": sys.executable, "args": [str(RUG_SERVER)]},
               "fs": {"command": sys.executable, "args": ["-m", "toolrelay", "files", str(folder / "home")]}}
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    (folder / "policy.json").write_text(json.dumps({"rules": RULES}))
    calls = [{"name": "fs__read_text_file", "arguments": {"path": str(folder / "home" / ".ssh" / "id_rsa")}},
             {"name": "fs__read_text_file", "arguments": {"path": str(folder / "home" / "notes.txt")}},
             {"name": "notes__write_note", "arguments": {"name": "a", "text": "x"}}]
    (folder / "script.json").write_text(json.dumps({"turns": [{"calls": calls}, {"message": "done"}]}))
    return folder


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, module_state: Path) -> Path:
    folder = make_folder(tmp_path_factory.mktemp("policy-run"))
    done = cli("run", "go", "--config", "mcp.json", "--policy", "policy.json", "--model", "offline",
               "--script", "script.json", "--transcript", "run.jsonl", "--json", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder


def events_of(path: Path) -> Events:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_run_records_the_policy_and_each_decision_inside_its_calls_span(recorded: Path) -> None:
    events = events_of(recorded / "run.jsonl")
    (policy,) = [e for e in events if e["kind"] == "policy"]
    assert policy["source"] == "policy.json"
    assert policy["digest"] == rules_digest(parse_rules({"rules": RULES}, "policy.json"))
    declarations = next(e for e in events if e["kind"] == "declarations")
    assert policy["seq"] < declarations["seq"]
    offer = [(e["server"], e["tool"], e["rule"]) for e in events
             if e["kind"] == "policy_decision" and e["stage"] == "offer"]
    assert offer == [("notes", "write_note", 1)]
    made = {e["call_id"]: e for e in events if e["kind"] == "policy_decision" and e["stage"] == "call"}
    assert sorted((call_id, e["decision"], e["rule"]) for call_id, e in made.items()) == [
        ("call_offline_0001", "deny", 2), ("call_offline_0002", "allow", 3)]
    for call_id, decision in made.items():  # inside the call's own span: after its route, before its outcome
        routed = next(e["seq"] for e in events if e["kind"] == "call_routed" and e["call_id"] == call_id)
        ended = next(e["seq"] for e in events if e["kind"] == "call_outcome" and e["call_id"] == call_id)
        assert routed < decision["seq"] < ended
    outcomes = {e["call_id"]: e["outcome"] for e in events if e["kind"] == "call_outcome"}
    assert (outcomes["call_offline_0001"]["status"], outcomes["call_offline_0001"]["message"]) == (
        "refused_by_hook", SSH_DENIED)
    assert outcomes["call_offline_0001"]["refused_by"] == "policy"
    assert "refused_by" not in outcomes["call_offline_0002"]
    feedback = {e["call_id"]: e["item"]["output"] for e in events if e["kind"] == "feedback"}
    assert feedback["call_offline_0001"] == f"Error (policy): {SSH_DENIED}"
    assert outcomes["call_offline_0003"]["status"] == "unknown_tool"  # withheld: never offered
    assert "SECRET KEY" not in (recorded / "run.jsonl").read_text()
    verdict = verify(load_run(recorded / "run.jsonl"))
    assert verdict.ok, verdict.broken
    held = [f.message for f in verdict.findings if f.check == "policy"]
    assert f"call_offline_0001 (fs__read_text_file → fs/read_text_file): refused, {SSH_DENIED}" in held


def _drop_decision(call_id: str) -> Callable[[Events], None]:
    def edit(events: Events) -> None:
        events[:] = [e for e in events
                     if not (e["kind"] == "policy_decision" and e.get("call_id") == call_id)]
    return edit


def _rule_changed(events: Events) -> None:
    policy = next(e for e in events if e["kind"] == "policy")
    policy["rules"][1]["arguments"] = {"/path": "**/notes.txt"}


def _rules(events: Events, rules: list[dict[str, Any]]) -> None:
    """The recorded rules replaced, with a digest that fits them (and each decision's)."""
    digest = rules_digest(parse_rules({"rules": rules}, "policy.json"))
    for event in events:
        if event["kind"] == "policy":
            event["rules"], event["digest"] = rules, digest
        if event["kind"] == "policy_decision":
            event["digest"] = digest


def _denied_call_ran(events: Events) -> None:
    """The allowed read made denied (its decision too): its tools/call went out all the same."""
    _rules(events, [RULES[0], {**RULES[1], "arguments": {"/path": "**"}}, RULES[2]])
    for event in events:
        if event["kind"] == "policy_decision" and event.get("call_id") == "call_offline_0002":
            event["decision"], event["rule"] = "deny", 2


def _claimed_for_policy(call_id: str) -> Callable[[Events], None]:
    """The outcome of a call the policy did not refuse made to say the policy refused it."""
    def edit(events: Events) -> None:
        for event in events:
            if event["kind"] == "call_outcome" and event["call_id"] == call_id:
                event["outcome"]["refused_by"] = "policy"
    return edit


def _decision_kept_rules_changed(events: Events) -> None:
    _rules(events, [RULES[0], RULES[2]])


def _denied_tool_offered(events: Events) -> None:
    _rules(events, [RULES[0], RULES[1], {"server": "fs", "tool": "list_*", "decision": "deny"}, RULES[2]])


@pytest.mark.parametrize(("edit", "said"), [
    (_drop_decision("call_offline_0002"), "call_offline_0002 (fs__read_text_file → fs/read_text_file): no "
     "policy decision is recorded for the call, yet the recorded policy gives allow by rule #3"),
    (_drop_decision("call_offline_0001"), "no policy decision is recorded for the call, yet the recorded "
     "policy gives deny by rule #2"),
    (_rule_changed, "the recorded policy's rules give digest sha256:"),
    (_denied_call_ran, "call_offline_0002 (fs__read_text_file → fs/read_text_file): the recorded policy "
     "denies the call, yet its tools/call went out"),
    (_decision_kept_rules_changed, "call_offline_0001 (fs__read_text_file → fs/read_text_file): the policy "
     "decision records deny by rule #2, but the recorded rules give allow by rule #2"),
    (_denied_tool_offered, "which policy rule #3 denies: it should have been withheld"),
    (_claimed_for_policy("call_offline_0002"), "call_offline_0002 (fs__read_text_file → fs/read_text_file): "
     "its outcome says the policy refused it, but the recorded rules give allow by rule #3, which refuses "
     "nothing"),
    (_claimed_for_policy("call_offline_0003"), "call_offline_0003 (notes__write_note): its outcome says "
     "the policy refused it, but it was never routed: no rule decided it"),
], ids=["decision-removed", "deny-removed", "rule-changed", "denied-call-ran", "rules-swapped", "offered",
        "refusal-claimed", "unrouted-refusal-claimed"])
def test_verify_rejects_a_tampered_copy(recorded: Path, tmp_path: Path, edit: Callable[[Events], None],
                                        said: str) -> None:
    events = events_of(recorded / "run.jsonl")
    edit(events)
    copy = tmp_path / "tampered.jsonl"
    copy.write_text("".join(json.dumps(e) + "\n" for e in events))
    verdict = verify(load_run(copy))
    assert not verdict.ok
    assert verdict.broken is not None and verdict.broken.link == "routing"
    assert said in verdict.broken.message


def test_a_feedback_that_hides_the_policys_refusal_is_rejected(recorded: Path, tmp_path: Path) -> None:
    """The outcome's refused_by is what the model was told: dropping it from the record leaves
    a feedback ``Error (policy): ...`` that the recorded outcome does not render to."""
    events = events_of(recorded / "run.jsonl")
    for event in events:
        if event["kind"] == "call_outcome" and event["call_id"] == "call_offline_0001":
            del event["outcome"]["refused_by"]
    copy = tmp_path / "tampered.jsonl"
    copy.write_text("".join(json.dumps(e) + "\n" for e in events))
    verdict = verify(load_run(copy))
    assert verdict.broken is not None and verdict.broken.link == "feedback"
    assert (f'call_offline_0001: the feedback event holds "Error (policy): {SSH_DENIED[:30]}'
            in verdict.broken.message.replace('\\"', "'")), verdict.broken.message
    assert "render_output gives \"Error (refused by hook): denied" in verdict.broken.message


def test_explain_and_view_name_the_rule_of_a_refused_call(recorded: Path) -> None:
    explained = cli("explain", "run.jsonl", cwd=recorded)
    assert explained.returncode == 0, explained.stderr
    assert f"policy: {SSH_DENIED}" in explained.stdout
    assert "    4 server checks     ok     not sent (refused by policy)\n" in explained.stdout
    assert "refused_by_hook" not in explained.stdout and "refused by hook" not in explained.stdout
    viewed = cli("view", "run.jsonl", "-o", "trace.html", cwd=recorded)
    assert viewed.returncode == 0, viewed.stderr
    page = (recorded / "trace.html").read_text()
    assert "refused by policy rule #2 of policy.json" in page
    assert '"label":"outcome refused by policy"' in page and '"status":"refused by policy"' in page


def test_a_transcript_from_before_refusals_named_the_policy_still_verifies(tmp_path: Path) -> None:
    """Recorded by the previous release: its outcome has no refused_by and the model read
    ``Error (refused by hook): ...``; that is still what the outcome renders to, so it holds,
    and explain tells it as it was recorded."""
    old = tmp_path / "old.jsonl"
    old.write_bytes(OLD_REFUSAL.read_bytes())
    events = events_of(old)
    outcomes = [e["outcome"] for e in events if e["kind"] == "call_outcome"]
    (outcome,) = [o for o in outcomes if o["status"] != "ok"]
    assert (outcome["status"], "refused_by" in outcome) == ("refused_by_hook", False)
    verdict = verify(load_run(old))
    assert verdict.ok, verdict.broken
    explained = cli("explain", old.name, cwd=tmp_path)
    assert "not sent (refused by hook)" in explained.stdout
    assert 'function_call_output "Error (refused by hook): denied by policy rule #2' in explained.stdout


def test_batch_and_call_enforce_both_rules(tmp_path: Path, private_state: Path) -> None:
    folder = make_folder(tmp_path)
    task = {"id": "t1", "task": "go", "script": "script.json"}
    (folder / "tasks.jsonl").write_text(json.dumps(task) + "\n")
    done = cli("batch", "tasks.jsonl", "--out", "out", "--model", "offline", "--config", "mcp.json",
               "--policy", "policy.json", cwd=folder)
    assert done.returncode == 0, done.stderr
    (result,) = [json.loads(line) for line in (folder / "out" / "results.jsonl").read_text().splitlines()]
    transcript = folder / "out" / result["transcript"]
    verdict = verify(load_run(transcript))
    assert verdict.ok, verdict.broken
    events = events_of(transcript)
    assert [e["kind"] for e in events].count("policy") == 1
    decided = sorted((e["stage"], e["decision"], e["rule"]) for e in events if e["kind"] == "policy_decision")
    assert decided == [("call", "allow", 3), ("call", "deny", 2), ("offer", "deny", 1)]
    key = str(folder / "home" / ".ssh" / "id_rsa")
    called = cli("call", "fs__read_text_file", json.dumps({"path": key}), "--config", "mcp.json",
                 "--policy", "policy.json", "--json", cwd=folder)
    assert called.returncode == 1, called.stderr
    outcome = json.loads(called.stdout)
    assert (outcome["status"], outcome["message"]) == ("refused_by_hook", SSH_DENIED)
    assert [(d["decision"], d["rule"]) for d in outcome["policy"]] == [("deny", 2)]
    written = cli("call", "notes__write_note", '{"name": "a", "text": "x"}', "--config", "mcp.json",
                  "--policy", "policy.json", cwd=folder)
    said = ("toolrelay call: error: notes__write_note: server notes: tool write_note is not offered: "
            f"{WRITE_DENIED}\n")
    assert (written.returncode, written.stderr) == (2, said)
