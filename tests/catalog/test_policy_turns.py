"""Phase rules (issue 26): a policy rule with ``"turns"`` hides tools in some model turns
without rewriting ``tools``. The request of such a turn keeps the same ``tools`` array (its
prefix is byte-identical to the next request's up to ``tool_choice``) and lists the tools
allowed in ``tool_choice`` (``allowed_tools``, in the Responses and the chat dialect, as the
``openai`` types accept it); a call the model makes anyway is refused naming the rule. The
turn is recorded (``policy_turn``), ``verify`` takes it again from the recorded rules and
rejects tampered copies, ``explain`` and ``view`` name it, ``policy check`` shows it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from testkit.openai_wire import check_body, check_chat_body
from testkit.processes import run
from toolrelay.protocol.chat import chat_request, responses_request
from toolrelay.relay.stages.policy_rules import parse_rules, rules_digest
from toolrelay.relay.stages.policy_turns import turn_choice, withheld_rule
from toolrelay.transcript.delta import wire_bytes, wire_digest
from toolrelay.transcript.reader import read_transcript
from toolrelay.verify import load_run, verify

RULES: list[dict[str, Any]] = [
    {"server": "fs", "tool": "read_*", "turns": "1", "decision": "deny", "reason": "look around first"},
    {"decision": "allow"},
]
HIDDEN = ["fs__read_multiple_files", "fs__read_text_file"]
ALLOWED = ["fs__get_file_info", "fs__list_allowed_directories", "fs__list_directory", "fs__search_files"]
LISTING = {"type": "function", "name": "fs__list_directory"}
SAID = 'denied by policy rule #1 of policy.json in turn 1: "look around first"'
Events = list[dict[str, Any]]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "toolrelay", *args], text=True, timeout=60, cwd=cwd)


def make_folder(folder: Path, rules: list[dict[str, Any]] = RULES) -> Path:
    (folder / "home").mkdir()
    (folder / "home" / "a.txt").write_text("hello\n")
    server = {"command": sys.executable, "args": ["-m", "toolrelay", "files", str(folder / "home")]}
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": {"fs": server}}))
    (folder / "policy.json").write_text(json.dumps({"rules": rules}))
    read = {"name": "fs__read_text_file", "arguments": {"path": "a.txt"}}
    listing = {"name": "fs__list_directory", "arguments": {"path": "."}}
    turns = [{"calls": [read, listing]}, {"calls": [read]}, {"message": "done"}]
    (folder / "script.json").write_text(json.dumps({"turns": turns}))
    return folder


def run_in(folder: Path, *options: str, transcript: str = "run.jsonl") -> Events:
    done = cli("run", "go", "--config", "mcp.json", "--policy", "policy.json", "--model", "offline",
               "--script", "script.json", "--transcript", transcript, *options, cwd=folder)
    assert done.returncode == 0, done.stderr
    return read_transcript(folder / transcript).events


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, module_state: Path) -> Path:
    folder = make_folder(tmp_path_factory.mktemp("policy-turns"))
    run_in(folder)
    return folder


def requests_of(events: Events) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == "model_request"]


def allowed_tools(names: list[str], mode: str = "auto") -> dict[str, Any]:
    return {"type": "allowed_tools", "mode": mode, "tools": [{"type": "function", "name": n} for n in names]}


def test_a_phase_rule_narrows_tool_choice_and_keeps_the_tools(recorded: Path) -> None:
    events = read_transcript(recorded / "run.jsonl").events
    first, second, third = (e["body"] for e in requests_of(events))
    for body in (first, second, third):
        check_body(body)
    assert first["tool_choice"] == allowed_tools(ALLOWED)
    assert second["tool_choice"] == third["tool_choice"] == "auto"
    assert [t["name"] for t in first["tools"]] == sorted(ALLOWED + HIDDEN)  # hidden, not withheld
    turns = [(e["turn"], e["allowed"], [(h["alias"], h["rule"]) for h in e["hidden"]])
             for e in events if e["kind"] == "policy_turn"]
    assert turns == [(1, ALLOWED, [(alias, 1) for alias in HIDDEN]), (2, sorted(ALLOWED + HIDDEN), []),
                     (3, sorted(ALLOWED + HIDDEN), [])]
    outcomes = [e["outcome"] for e in events if e["kind"] == "call_outcome"]
    assert [(o["alias"], o["status"]) for o in outcomes] == [
        ("fs__read_text_file", "refused_by_hook"), ("fs__list_directory", "ok"), ("fs__read_text_file", "ok")]
    assert outcomes[0]["message"] == SAID
    feedback = next(e for e in events if e["kind"] == "feedback" and e["call_id"] == outcomes[0]["call_id"])
    assert feedback["item"]["output"] == f"Error (policy): {SAID}"
    verdict = verify(load_run(recorded / "run.jsonl"))
    assert verdict.ok, verdict.broken
    held = [f.message for f in verdict.findings if f.check == "policy"]
    assert ("turn 1: fs__read_multiple_files (rule #1), fs__read_text_file (rule #1) hidden by the phase "
            "rules, 4 of 6 tool(s) allowed by the request's tool_choice") in held
    assert f"call_offline_0001 (fs__read_text_file → fs/read_text_file): refused, {SAID}" in held


def test_the_prefix_is_byte_identical_up_to_tool_choice_when_the_phase_changes(recorded: Path) -> None:
    requests = requests_of(read_transcript(recorded / "run.jsonl").events)
    sent = [wire_bytes(event["body"]) for event in requests[:2]]
    assert [wire_digest(content) for content in sent] == [e["body_sha256"] for e in requests[:2]]
    first = requests[0]["body"]
    assert list(first)[:4] == ["model", "instructions", "tools", "tool_choice"] or \
        list(first)[:3] == ["model", "tools", "tool_choice"]
    head = {key: first[key] for key in list(first)[: list(first).index("tool_choice")]}
    prefix = wire_bytes(head)[:-1] + b',"tool_choice":'
    assert sent[0].startswith(prefix) and sent[1].startswith(prefix)
    assert len(prefix) > len(wire_bytes({"tools": first["tools"]}))
    assert sent[0][len(prefix):] != sent[1][len(prefix):]  # the phase changed: tool_choice differs


def test_the_chat_dialect_sends_its_own_allowed_tools_form(tmp_path: Path, private_state: Path) -> None:
    folder = make_folder(tmp_path)
    events = run_in(folder, "--api", "chat")
    bodies = [e["body"] for e in requests_of(events)]
    for body in bodies:
        check_chat_body(body)
    assert bodies[0]["tool_choice"] == {"type": "allowed_tools", "allowed_tools": {
        "mode": "auto", "tools": [{"type": "function", "function": {"name": n}} for n in ALLOWED]}}
    assert bodies[1]["tool_choice"] == "auto"
    assert verify(load_run(folder / "run.jsonl")).ok


def test_the_offline_model_keeps_to_the_allowed_tools(tmp_path: Path, private_state: Path) -> None:
    """Without a script the stand-in calls read_text_file, unless the turn's tool_choice
    leaves it out (as a model keeps to allowed_tools): then it says it has none."""
    folder = make_folder(tmp_path)
    done = cli("run", "Read a.txt", "--config", "mcp.json", "--policy", "policy.json", "--model", "offline",
               "--transcript", "run.jsonl", "--json", cwd=folder)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["calls"] == [] and result["final_text"].startswith("I have no read_text_file tool")
    assert verify(load_run(folder / "run.jsonl")).ok


def test_every_task_of_a_batch_narrows_its_turns_and_verifies(tmp_path: Path, private_state: Path) -> None:
    """The policy is in the preamble every task's transcript starts with (no tool is withheld
    at the offer here: the rules are recorded as the servers list their tools all the same)."""
    folder = make_folder(tmp_path)
    tasks = [{"id": f"t{n}", "task": "go", "script": "script.json"} for n in (1, 2)]
    (folder / "tasks.jsonl").write_text("".join(json.dumps(task) + "\n" for task in tasks))
    done = cli("batch", "tasks.jsonl", "--out", "out", "--model", "offline", "--config", "mcp.json",
               "--policy", "policy.json", cwd=folder)
    assert done.returncode == 0, done.stderr
    for task in ("t1", "t2"):
        events = read_transcript(folder / "out" / "transcripts" / f"{task}.jsonl").events
        assert [e["kind"] for e in events].count("policy") == 1
        assert requests_of(events)[0]["body"]["tool_choice"] == allowed_tools(ALLOWED)
        verdict = verify(load_run(folder / "out" / "transcripts" / f"{task}.jsonl"))
        assert verdict.ok, verdict.broken


def test_tool_choice_required_stays_required_among_the_allowed(tmp_path: Path, private_state: Path) -> None:
    folder = make_folder(tmp_path)
    first = requests_of(run_in(folder, "--tool-choice", "required"))[0]["body"]
    check_body(first)
    assert first["tool_choice"] == allowed_tools(ALLOWED, "required")
    assert verify(load_run(folder / "run.jsonl")).ok


@pytest.mark.parametrize(("asked", "allowed", "sent"), [
    ("auto", ALLOWED, allowed_tools(ALLOWED)),
    ("required", ALLOWED, allowed_tools(ALLOWED, "required")),
    ("none", ALLOWED, "none"),
    (LISTING, ALLOWED, LISTING),
    ({"type": "function", "name": "fs__read_text_file"}, ALLOWED, allowed_tools(ALLOWED)),
    ("auto", [], "none"),
], ids=["auto", "required", "none", "named-allowed", "named-hidden", "nothing-allowed"])
def test_how_a_tool_choice_combines_with_a_turns_rules(asked: Any, allowed: list[str], sent: Any) -> None:
    assert turn_choice(asked, allowed) == sent
    tools = [{"type": "function", "name": n, "parameters": {}, "strict": False} for n in ALLOWED + HIDDEN]
    body = {"model": "m", "input": "x", "tools": tools, "tool_choice": sent}
    check_body(body)
    chat = chat_request(body)
    check_chat_body(chat)
    assert responses_request(chat)["tool_choice"] == sent


def test_a_tool_denied_in_every_turn_is_withheld_and_one_denied_in_some_is_not() -> None:
    def withheld(rules: list[dict[str, Any]]) -> int | None:
        rule = withheld_rule(parse_rules({"rules": rules}, "p.json"), "fs", "read_text_file", {})
        return rule.index if rule else None

    assert withheld([{"tool": "read_*", "turns": "1-", "decision": "deny"}]) == 1
    assert withheld([{"tool": "read_*", "turns": "1-3", "decision": "deny"}, {"decision": "deny"}]) == 1
    assert withheld([{"tool": "read_*", "turns": "4-", "decision": "allow"}, {"decision": "deny"}]) is None
    assert withheld([{"tool": "read_*", "turns": "2", "decision": "deny"}]) is None


def _write(events: Events, path: Path) -> None:
    """Whole bodies (the reader takes them as older transcripts have them), digests made again."""
    for event in events:
        if event["kind"] == "model_request":
            event["body_sha256"] = wire_digest(wire_bytes(event["body"]))
    path.write_text("".join(json.dumps(e) + "\n" for e in events))


def _choice_widened(events: Events) -> None:
    requests_of(events)[0]["body"]["tool_choice"] = "auto"


def _turn_dropped(events: Events) -> None:
    events[:] = [e for e in events if not (e["kind"] == "policy_turn" and e["turn"] == 1)]


def _list_widened(events: Events) -> None:
    requests_of(events)[0]["body"]["tool_choice"] = allowed_tools([*ALLOWED, "fs__read_text_file"])
    next(e for e in events if e["kind"] == "policy_turn")["allowed"].append("fs__read_text_file")


def _phase_widened(events: Events) -> None:
    """The rules made to hide the reads in turns 1-2 (digests fitted): the read of turn 2 ran."""
    rules = [{**RULES[0], "turns": "1-2"}, RULES[1]]
    digest = rules_digest(parse_rules({"rules": rules}, "policy.json"))
    for event in events:
        if event["kind"] == "policy":
            event["rules"] = rules
        if event["kind"] in ("policy", "policy_decision", "policy_turn"):
            event["digest"] = digest
        if event["kind"] == "policy_decision" and event["call_id"] == "call_offline_0003":
            event["decision"], event["rule"] = "deny", 1


@pytest.mark.parametrize(("edit", "said"), [
    (_choice_widened, "turn 1: the request's tool_choice 'auto' lets the model call fs__read_multiple_files, "
     "which policy rule #1 hides in it"),
    (_turn_dropped, "turn 1: no policy_turn is recorded before its request, yet the recorded rules have "
     "phases (they hide fs__read_multiple_files (rule #1), fs__read_text_file (rule #1) in it)"),
    (_list_widened, "turn 1: the policy_turn (seq"),
    (_phase_widened, "call_offline_0003 (fs__read_text_file → fs/read_text_file): the recorded policy denies "
     "the call, yet its tools/call went out"),
], ids=["choice-widened", "turn-dropped", "list-widened", "denied-call-ran"])
def test_verify_rejects_a_tampered_copy(recorded: Path, tmp_path: Path, edit: Callable[[Events], None],
                                        said: str) -> None:
    events = read_transcript(recorded / "run.jsonl").events
    edit(events)
    copy = tmp_path / "tampered.jsonl"
    _write(events, copy)
    verdict = verify(load_run(copy))
    assert not verdict.ok
    broken = [f.message for f in verdict.findings if not f.ok and f.link == "routing"]
    assert any(said in message for message in broken), broken


def test_an_untouched_rewrite_still_verifies(recorded: Path, tmp_path: Path) -> None:
    """The tampering tests' rewriting alone breaks nothing (so they fail for their edit)."""
    copy = tmp_path / "copy.jsonl"
    _write(read_transcript(recorded / "run.jsonl").events, copy)
    verdict = verify(load_run(copy))
    assert verdict.ok, verdict.broken


def test_explain_view_and_policy_check_name_the_phase(recorded: Path) -> None:
    explained = cli("explain", "run.jsonl", cwd=recorded)
    assert explained.returncode == 0, explained.stderr
    assert (f"  policy: turn 1 hides {', '.join(HIDDEN)} ({SAID}); 4 tool(s) allowed by tool_choice"
            in explained.stdout)
    viewed = cli("view", "run.jsonl", "-o", "trace.html", cwd=recorded)
    assert viewed.returncode == 0, viewed.stderr
    assert f"turn 1: hidden {', '.join(HIDDEN)}" in (recorded / "trace.html").read_text()
    checked = cli("policy", "check", "--config", "mcp.json", "--policy", "policy.json", cwd=recorded)
    assert checked.returncode == 0, checked.stderr
    row = next(line for line in checked.stdout.splitlines() if line.startswith("fs__read_text_file "))
    assert row.split()[3:8] == ["allow", "#2", "hidden", "in", "turn"]  # the note is cut to the width
    report = json.loads(cli("policy", "check", "--config", "mcp.json", "--policy", "policy.json", "--json",
                            cwd=recorded).stdout)
    read = next(t for t in report["tools"] if t["alias"] == "fs__read_text_file")
    assert read["phases"] == [{"rule": 1, "turns": "1", "when": "in turn 1", "decision": "deny"}]
