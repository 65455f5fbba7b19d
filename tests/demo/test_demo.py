"""``toolrelay demo``: the seed's attachments from a real run, verified, and checked again by
the seed's own standalone scripts — which must also reject tampered copies."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from testkit.processes import run
from toolrelay.demo import run_demo
from toolrelay.offline import OfflineModel
from toolrelay.verify import load_run, verify
from verify.helpers import broken_link, find, iter_events, read_events, tampered_folder

from .conftest import run_example

ATTACHMENTS = [
    "request_1.json",
    "response_1.json",
    "mcp_request.json",
    "mcp_response.json",
    "request_2.json",
    "response_2.json",
    "responses_roundtrip.json",
    "field_fragments.json",
    "transcript.jsonl",
]
STREAMED = ["transcript.jsonl", "response_1.sse", "response_2.sse"]


def test_demo_runs_the_seed_scenario_and_prints_the_chain(
    demo: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    folder, proc = demo
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert f"wrote {folder}/: {' '.join(ATTACHMENTS)}\n" in out
    assert f"wrote {folder}/streamed/: {' '.join(STREAMED)} (the same walk-through, streamed" in out
    rows = [
        "declaration",
        "request_1",
        "function_call",
        "parse",
        "route",
        "MCP request",
        "MCP response",
        "function_call_output",
        "request_2",
        "answer",
        "verify",
    ]
    starts = [
        next(i for i, line in enumerate(out.splitlines()) if line.startswith(row + " ")) for row in rows
    ]
    assert starts == sorted(starts)
    assert (
        "call_offline_0001: fs__read_text_file, arguments (JSON text) "
        '"{\\"path\\":\\"notes.txt\\",\\"head\\":20}"' in out
    )
    assert 'id 3 tools/call, params.arguments (object) {"path": "notes.txt", "head": 20}' in out
    assert "call_offline_0001 (same call_id): " in out
    assert "all 7 links hold" in out
    assert sorted(p.name for p in folder.iterdir()) == sorted([*ATTACHMENTS, "streamed"])
    assert sorted(p.name for p in (folder / "streamed").iterdir()) == sorted(STREAMED)


def test_the_demo_says_which_mcp_revision_it_speaks_and_why(
    demo: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    folder, proc = demo
    said = proc.stdout.splitlines()[1]
    assert said == ("MCP 2025-06-18 with the file server: the walk-through's reference messages, which "
                    "these files reproduce, are in that revision (toolrelay run speaks 2026-07-28 with a "
                    "server that does)")
    handshake = next(e for e in read_events(folder / "transcript.jsonl") if e.get("method") == "initialize")
    assert handshake["message"]["params"]["protocolVersion"] == "2025-06-18"  # what the line says
    shown = run([sys.executable, "-m", "toolrelay", "demo", "--help"], text=True, timeout=30)
    assert "It speaks MCP 2025-06-18, the revision of the walk-through's reference messages" in shown.stdout
    assert "toolrelay run speaks 2026-07-28 with a server that does" in shown.stdout


def test_the_files_are_the_exact_messages_of_the_run(demo_folder: Path) -> None:
    events = read_events(demo_folder / "transcript.jsonl")
    load = lambda name: json.loads((demo_folder / name).read_text())  # noqa: E731
    for turn in (1, 2):
        assert load(f"request_{turn}.json") == find(events, "model_request", turn=turn)["body"]
        assert load(f"response_{turn}.json") == find(events, "model_response", turn=turn)["body"]
    call = next(iter_events(events, "mcp_request", method="tools/call"))
    answer = next(iter_events(events, "mcp_response", method="tools/call"))
    assert load("mcp_request.json") == call["message"] and load("mcp_response.json") == answer["message"]
    text = load("mcp_response.json")["result"]["content"][0]["text"]
    assert text.count("\n") == 20 and text.startswith("note 01:") and "note 21" not in text  # a real head 20
    assert load("request_2.json")["input"][2]["output"] == text  # the tool's text is the feedback
    bundle = load("responses_roundtrip.json")
    assert [r["request"] for r in bundle["rounds"]] == [load("request_1.json"), load("request_2.json")]
    assert bundle["links"] == [
        {
            "call_id": "call_offline_0001",
            "turn": 1,
            "alias": "fs__read_text_file",
            "server": "fs",
            "tool": "read_text_file",
            "connection": 1,
            "mcp_id": 3,
            "status": "ok",
        }
    ]
    fragments = load("field_fragments.json")
    assert fragments["declaration"]["mcp_tool"]["inputSchema"]["properties"]["path"]["type"] == "string"
    assert fragments["call"] == load("response_1.json")["output"][0]
    assert fragments["feedback"] == load("request_2.json")["input"][2]


@pytest.mark.parametrize("verb", ["verify", "explain"])
def test_the_folder_verifies(verb: str, demo_folder: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "toolrelay", verb, str(demo_folder)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    expected = "agree with transcript.jsonl" if verb == "explain" else "ok: 23 checks hold"
    assert expected in proc.stdout


@pytest.mark.parametrize("script", ["verify_roundtrip.py", "verify_fields.py"])
def test_the_seeds_standalone_checks_pass_and_reject_the_three_breakages(
    script: str, demo_folder: Path
) -> None:
    for target in (demo_folder, demo_folder / _bundle(script)):
        proc = run_example(script, str(target))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "FAIL" not in proc.stdout and proc.stdout.rstrip().endswith("all checks hold")
        assert proc.stdout.count("rejected: ") == 3


def _bundle(script: str) -> str:
    return "responses_roundtrip.json" if script == "verify_roundtrip.py" else "field_fragments.json"


def _first_call(items: list[Any]) -> dict[str, Any]:
    return next(item for item in items if item.get("type") == "function_call")


FileChange = Callable[[Any], Any]
SCRIPT_BREAKAGES: list[tuple[str, FileChange, str]] = [
    (
        "verify_roundtrip.py",
        lambda b: b["mcp"][0]["response"].update(id=4),
        "call_offline_0001: MCP request id 3 ↔ response id 4",
    ),
    (
        "verify_roundtrip.py",
        lambda b: b["rounds"][1]["request"]["input"].pop(1),
        "turn 2 does not carry the previous input and output items unchanged",
    ),
    (
        "verify_roundtrip.py",
        lambda b: [
            _first_call(r["response"]["output"]).update(arguments={"path": "notes.txt"})
            for r in b["rounds"][:1]
        ],
        "turn 2 does not carry the previous input and output items unchanged",
    ),
    (
        "verify_roundtrip.py",
        lambda b: b["rounds"][1]["request"]["tools"].pop(),
        "the declarations changed in turn 2",
    ),
    (
        "verify_roundtrip.py",
        lambda b: b["rounds"][1]["request"]["input"][2].update(output="made up"),
        'call_offline_0001: the feedback "made up" is not the tool\'s text',
    ),
    (
        "verify_fields.py",
        lambda f: f["mcp_response"].update(id=4),
        "MCP ids do not pair: request 3, response 4",
    ),
    ("verify_fields.py", lambda f: f.pop("call"), "the model's function_call item is missing"),
    (
        "verify_fields.py",
        lambda f: f["call"].update(arguments=json.loads(f["call"]["arguments"])),
        "the model's arguments must be JSON text (a string), not a dict",
    ),
    (
        "verify_fields.py",
        lambda f: f["declaration"]["function_tool"]["parameters"]["properties"].update(
            path={"type": "string", "default": "notes.txt"}
        ),
        'the rule holds this call\'s value "notes.txt": a declaration never holds a value',
    ),
    (
        "verify_fields.py",
        lambda f: f["mcp_response"]["result"].update(isError=True),
        "the tool error (isError: true) is not fed back as an error with the tool's text",
    ),
]


@pytest.mark.parametrize(("script", "change", "said"), SCRIPT_BREAKAGES)
def test_the_standalone_checks_reject_tampered_files(
    script: str, change: FileChange, said: str, demo_folder: Path, tmp_path: Path
) -> None:
    folder = tampered_folder(demo_folder, tmp_path / "copy", _bundle(script), change)
    proc = run_example(script, str(folder))
    assert proc.returncode == 1, proc.stdout
    assert f"  FAIL {said}" in proc.stdout
    assert proc.stdout.rstrip().endswith("some checks failed")


@pytest.mark.parametrize("script", ["verify_roundtrip.py", "verify_fields.py"])
def test_the_standalone_checks_refuse_unreadable_input(script: str, tmp_path: Path) -> None:
    (tmp_path / _bundle(script)).write_text("{ not json")
    proc = run_example(script, str(tmp_path))
    assert proc.returncode == 2
    assert f"cannot read {tmp_path / _bundle(script)}: Expecting property name" in proc.stderr


def _output(items: list[Any]) -> dict[str, Any]:
    return next(item for item in items if item.get("type") == "function_call_output")


FOLDER_TAMPERING: list[tuple[str, FileChange, str, str]] = [
    ("mcp_response.json", lambda v: v.update(id=4), "correlation", "its message has id 4"),
    ("mcp_request.json", lambda v: v.update(id=7), "correlation", "its message has id 7"),
    (
        "request_2.json",
        lambda v: v["input"].remove(_first_call(v["input"])),
        "next_input",
        "request 2 dropped function_call call_offline_0001",
    ),
    (
        "response_1.json",
        lambda v: _first_call(v["output"]).update(arguments={"path": "notes.txt", "head": 20}),
        "parse",
        "the model's arguments is a JSON object, not JSON text",
    ),
    (
        "request_2.json",
        lambda v: _output(v["input"]).update(output="note 01: edited\n"),
        "feedback",
        'request 2 input[2] holds "note 01: edited\\n"; render_output gives',
    ),
    (
        "request_2.json",
        lambda v: v["input"].remove(_output(v["input"])),
        "correlation",
        "call_offline_0001 (response 1) has no function_call_output in request 2",
    ),
    (
        "request_2.json",
        lambda v: v["input"].append(_output(v["input"])),
        "correlation",
        "request 2 holds 2 function_call_output items for call_offline_0001",
    ),
    ("request_2.json", lambda v: v["input"].reverse(), "next_input", "request 2 reordered the context"),
    (
        "request_2.json",
        lambda v: _output(v["input"]).update(call_id="call_other"),
        "correlation",
        "request 2 holds an output for call_other, "
        "but no earlier response has a function_call with that call_id",
    ),
    (
        "mcp_response.json",
        lambda v: v["result"].update(isError=True),
        "feedback",
        "call_outcome records ok, but the recorded answer is a tool error (isError: true)",
    ),
    (
        "request_2.json",
        lambda v: v["tools"][0].update(description="another rule"),
        "next_input",
        "the declarations changed between request 1 and 2",
    ),
    (
        "mcp_request.json",
        lambda v: v["params"]["arguments"].update(head=3),
        "routing",
        "is not the parsed arguments text",
    ),
    (
        "response_2.json",
        lambda v: v["output"][0]["content"][0].update(text="I made this up"),
        "model_response",
        'is not the text of response resp_offline_0002 (turn 2): "I made this up"',
    ),
    (
        "response_1.json",
        lambda v: v.update(created_at=0),
        "model_response",
        "response_1.json differs from the transcript's event (seq 11) at created_at",
    ),
    (
        "responses_roundtrip.json",
        lambda v: v["mcp"][0]["response"].update(id=4),
        "correlation",
        "responses_roundtrip.json is not what the run's messages give (differs at mcp[0].response.id)",
    ),
    (
        "field_fragments.json",
        lambda v: v["call"].update(arguments={"path": "x"}),
        "parse",
        "field_fragments.json is not what the run's messages give (differs at call.arguments)",
    ),
]


@pytest.mark.parametrize(
    ("name", "change", "link", "said"),
    FOLDER_TAMPERING,
    ids=[f"{n}-{i}" for i, (n, *_) in enumerate(FOLDER_TAMPERING)],
)
def test_a_tampered_file_is_caught_even_with_the_transcript_intact(
    name: str, change: FileChange, link: str, said: str, demo_folder: Path, tmp_path: Path
) -> None:
    folder = tampered_folder(demo_folder, tmp_path / "copy", name, change)
    assert (folder / "transcript.jsonl").read_bytes() == (demo_folder / "transcript.jsonl").read_bytes()
    broken, message = broken_link(folder)
    assert (broken, said in message) == (link, True), message


def test_files_that_disagree_with_the_transcript_are_reported(demo_folder: Path, tmp_path: Path) -> None:
    folder = tampered_folder(demo_folder, tmp_path / "copy", "request_2.json", lambda v: v["input"].reverse())
    messages = [f.message for f in verify(load_run(folder)).broken_findings() if f.check == "files_agree"]
    seq = find(read_events(folder / "transcript.jsonl"), "model_request", turn=2)["seq"]
    assert messages == [
        f"request_2.json differs from the transcript's event (seq {seq}) at input[0].role",
        "responses_roundtrip.json is not what the run's messages give (differs at "
        "rounds[1].request.input[0].type)",
    ]


def test_the_demo_replaces_a_previous_demos_files_only(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "request_3.json").write_text("{}")  # left by an earlier, longer run
    (out / "notes-of-mine.txt").write_text("keep me")
    result = run_demo(out)
    assert result.ok, result.verdict.broken
    assert not (out / "request_3.json").exists() and (out / "notes-of-mine.txt").read_text() == "keep me"


def test_a_model_that_makes_no_call_fails_the_demo(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"message": "I would rather not read files."}]}))
    with OfflineModel(script) as model:
        proc = run(
            [
                sys.executable,
                "-m",
                "toolrelay",
                "demo",
                "--out",
                str(tmp_path / "out"),
                "--model",
                "gpt-4.1",
                "--base-url",
                model.base_url,
            ],
            text=True,
            timeout=60,
        )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "without calling the file server: the read_text_file call did not happen" in proc.stdout
    assert "the model made no tool call: there is no chain to walk" in proc.stdout
    verify_proc = subprocess.run(
        [sys.executable, "-m", "toolrelay", "verify", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert verify_proc.returncode == 0  # honest, but unfinished
    assert "the model made no tool call: nothing ran" in verify_proc.stdout


def test_an_unreachable_model_endpoint_exits_3_and_keeps_the_transcript(tmp_path: Path) -> None:
    """Nothing listens on the port: the retries show as they happen, then exit 3. The
    back-offs are cut to 10 ms (their lengths are the model client's tests'): all 4 retries
    in well under a second instead of ~7 s."""
    with socket.socket() as probe:  # a port that was free a moment ago: connection refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = tmp_path / "out"
    quick_retries = ("import sys, toolrelay.model.client as client; client.backoff_delay = lambda *_: 0.01; "
                     "from toolrelay.cli.main import main; sys.exit(main())")
    proc = run(
        [sys.executable, "-c", quick_retries, "demo", "--out", str(out), "--model", "gpt-4.1",
         "--base-url", f"http://127.0.0.1:{port}/v1"],
        text=True,
        timeout=60,
        env={**os.environ, "OPENAI_API_KEY": "sk-demo-test-key-0123456789"},
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    endpoint = f"http://127.0.0.1:{port}/v1/responses"
    said = f"toolrelay demo: error: cannot reach the model endpoint {endpoint}: connection refused"
    assert said in proc.stderr
    assert "! model request attempt 1 failed (connection refused); retrying in" in proc.stderr
    assert "! model request attempt 4 failed (connection refused); retrying in 0.01 s" in proc.stderr
    events = read_events(out / "transcript.jsonl")
    assert events[-1]["kind"] == "server_exited"  # the file server was shut down after the run
    ended = find(events, "run_end")
    assert (ended["status"], ended["reason"].startswith("cannot reach the model endpoint")) == ("error", True)
    assert "sk-demo-test-key-0123456789" not in (out / "transcript.jsonl").read_text()


def test_an_out_folder_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("mine")
    proc = run(
        [sys.executable, "-m", "toolrelay", "demo", "--out", str(tmp_path / "taken")],
        text=True, timeout=60,
    )
    assert proc.returncode == 2
    said = f"cannot write the demo folder {tmp_path / 'taken'}: {tmp_path / 'taken'} is a file, not a folder"
    assert proc.stderr == f"toolrelay demo: error: {said}\n"
    assert (tmp_path / "taken").read_text() == "mine"  # untouched


def test_an_untouched_copy_verifies(demo_folder: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(demo_folder, copy)
    verdict = verify(load_run(copy))
    assert verdict.ok and verdict.finished
