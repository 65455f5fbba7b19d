"""The transcript itself: every event in order with its ids, exact bodies, no secrets, and
a valid prefix when the run is killed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from testkit.processes import ProcessKeeper, kill_tree
from toolrelay.offline import OfflineModel
from toolrelay.transcript.reader import read_transcript
from toolrelay.verify import load_run, verify

from .helpers import (
    HONEST_SERVER,
    TASK,
    find,
    http_file_server,
    iter_events,
    read_events,
    run_cli,
    tool_call,
    write_notes,
)


def test_every_event_has_seq_time_run_and_kind_in_order(seed_run: Path) -> None:
    events = read_events(seed_run)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert len({e["run"] for e in events}) == 1
    assert all(isinstance(e["time"], float) and isinstance(e["kind"], str) for e in events)
    kinds = [e["kind"] for e in events]
    order = [
        "run_start",
        "model_request",
        "model_response",
        "call_parsed",
        "call_routed",
        "mcp_request",
        "mcp_response",
        "call_outcome",
        "feedback",
        "model_request",
        "model_response",
        "run_end",
    ]
    positions = [kinds.index(kind, kinds.index("run_start")) for kind in order[:1]]
    for kind in order[1:]:
        positions.append(kinds.index(kind, positions[-1] + 1))
    assert positions == sorted(positions)


def test_call_events_carry_the_link_between_the_two_id_domains(seed_run: Path) -> None:
    events = read_events(seed_run)
    response_item = find(events, "model_response", turn=1)["body"]["output"][0]
    parsed, routed = find(events, "call_parsed"), find(events, "call_routed")
    assert parsed["arguments_text"] == response_item["arguments"]  # verbatim text
    assert parsed["arguments"] == {"path": "notes.txt", "head": 20} and parsed["error"] is None
    assert (routed["alias"], routed["server"], routed["tool"]) == (
        "fs__read_text_file",
        "fs",
        "read_text_file",
    )
    request, answer = tool_call(events), tool_call(events, 0, "mcp_response")
    for message in (request, answer):
        assert (message["server"], message["connection"], message["mcp_id"]) == ("fs", 1, 4)
        assert message["call_id"] == response_item["call_id"] == "call_offline_0001"
        assert message["message"]["id"] == 4
    outcome = find(events, "call_outcome")["outcome"]
    assert (outcome["status"], outcome["mcp_id"], outcome["call_id"]) == ("ok", 4, "call_offline_0001")
    feedback = find(events, "feedback")["item"]
    assert feedback == {
        "type": "function_call_output",
        "call_id": "call_offline_0001",
        "output": "".join(f"line {n}\n" for n in range(1, 21)),
    }
    start, end = find(events, "run_start"), find(events, "run_end")
    assert (start["output_budget"], start["multimodal"]) == (100_000, True)
    assert (end["status"], end["turns"]) == ("completed", 2)


def test_no_secret_reaches_the_transcript(tmp_path: Path) -> None:
    """A real run: a stdio server with env and argument secrets, an HTTP server behind a
    bearer header, and a model endpoint that requires an API key."""
    write_notes(tmp_path)
    secrets = {
        "OPENAI_API_KEY": "sk-model-key-0123456789",
        "TOOLRELAY_INPUT_ARG_TOKEN": "argument-secret-2468",  # ${input:arg_token}: a prompted secret
        "ENV_SECRET": "environment-secret-1357",
        "HTTP_SECRET": "header-secret-97531",
    }
    literal = "literal-env-secret-8642"
    with (
        http_file_server(tmp_path, secrets["HTTP_SECRET"]) as url,
        OfflineModel(require_key=secrets["OPENAI_API_KEY"]) as model,
    ):
        config = tmp_path / "mcp.json"
        config.write_text(
            json.dumps(
                {
                    "mcpServers": {
                        "box": {
                            "command": sys.executable,
                            "args": [str(HONEST_SERVER), "--token", "${input:arg_token}"],
                            "env": {"BOX_TOKEN": "${env:ENV_SECRET}", "PLAIN": literal},
                        },
                        "web": {"url": url, "headers": {"Authorization": "Bearer ${env:HTTP_SECRET}"}},
                    }
                }
            )
        )
        proc = run_cli(
            "run",
            TASK,
            "--model",
            "gpt-test",
            "--base-url",
            model.base_url,
            "--config",
            str(config),
            "--transcript",
            "t.jsonl",
            "--quiet",
            cwd=tmp_path,
            env={**os.environ, **secrets},
        )
        received = model.requests
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "t.jsonl").read_text()
    for name, value in [*secrets.items(), ("PLAIN", literal)]:
        assert value not in text, f"{name} leaked into the transcript"
    events = read_events(tmp_path / "t.jsonl")
    target = find(events, "server_starting", server="box")["target"]
    assert target.startswith(f"{sys.executable} {HONEST_SERVER} --token ")  # the command line, value masked
    assert [e["body"] for e in iter_events(events, "model_request")] == received  # bodies exactly as sent
    assert verify(load_run(tmp_path / "t.jsonl")).ok


def _killed_run(tmp_path: Path, processes: ProcessKeeper, entry: dict[str, object], until: str) -> Path:
    """A real ``toolrelay run`` killed with SIGKILL once its transcript holds ``until``."""
    write_notes(tmp_path)
    (tmp_path / "script.json").write_text(json.dumps({"turns": [entry]}))
    (tmp_path / "mcp.json").write_text(
        json.dumps({"mcpServers": {"box": {"command": sys.executable, "args": [str(HONEST_SERVER)]}}})
    )
    transcript = tmp_path / "t.jsonl"
    proc = processes.spawn(
        [sys.executable, "-m", "toolrelay", "run", TASK, "--model", "offline", "--script", "script.json",
         "--config", "mcp.json", "--transcript", str(transcript), "--quiet"],
        cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while until not in (transcript.read_text() if transcript.exists() else ""):
            assert time.monotonic() < deadline and proc.poll() is None, f"the run never recorded {until}"
            time.sleep(0.05)
    finally:
        kill_tree(proc)  # SIGKILL to the run, and to the server it started (in a session of its own)
    return transcript


def test_a_killed_run_leaves_a_valid_prefix_that_verifies_as_unfinished(
    tmp_path: Path, processes: ProcessKeeper
) -> None:
    entry = {"calls": [{"name": "box__sleep", "arguments": {"seconds": 60}}]}
    transcript = _killed_run(tmp_path, processes, entry, '"method": "tools/call"')
    lines = transcript.read_text().splitlines()
    assert all(json.loads(line)["kind"] for line in lines)  # every line is a whole event
    assert '"kind": "run_end"' not in transcript.read_text()
    verdict = verify(load_run(transcript))
    assert verdict.ok and not verdict.finished
    assert verdict.unfinished[0].startswith(f"the transcript ends at seq {len(lines)} without run_end")
    assert "call_offline_0001 has no output: it was not run to its end" in verdict.unfinished
    proc_verify = run_cli("verify", str(transcript))
    assert proc_verify.returncode == 0
    assert "unfinished run (not a broken link):" in proc_verify.stdout
    required = run_cli("verify", str(transcript), "--require-finished")
    assert required.returncode == 1
    assert required.stderr == (f"toolrelay verify: the run did not end normally: the transcript ends at seq "
                               f"{len(lines)} without run_end: the run was stopped before it ended\n")
    as_json = run_cli("verify", str(transcript), "--json", "--require-finished")
    assert as_json.returncode == 1  # the same document as without the flag: only the exit differs
    assert json.loads(as_json.stdout) == json.loads(run_cli("verify", str(transcript), "--json").stdout)


def test_a_run_killed_before_the_model_answered_claims_no_tool_call_it_cannot_know(
    tmp_path: Path, processes: ProcessKeeper
) -> None:
    held = {"message": "never sent whole", "hold_completed_until_file": str(tmp_path / "never")}
    transcript = _killed_run(tmp_path, processes, held, '"kind": "model_stream"')
    expected = "no tool call is recorded: the transcript ends before turn 1's response was recorded"
    verify_proc = run_cli("verify", str(transcript))
    assert verify_proc.returncode == 0 and expected in verify_proc.stdout
    assert "made no tool call" not in verify_proc.stdout and "nothing ran" not in verify_proc.stdout
    explained = run_cli("explain", str(transcript))
    assert f"unfinished: {expected}" in explained.stdout and "made no tool call" not in explained.stdout
    required = run_cli("verify", str(transcript), "--require-finished")
    assert required.returncode == 1 and required.stderr.count("\n") == 1


def test_require_finished_passes_a_completed_run_and_names_an_early_stop(
    seed_run: Path, tmp_path: Path
) -> None:
    assert run_cli("verify", str(seed_run), "--require-finished").returncode == 0
    write_notes(tmp_path)
    stopped = run_cli("run", TASK, "--model", "offline", "--max-turns", "1", "--transcript", "t.jsonl",
                      "--quiet", cwd=tmp_path)
    assert stopped.returncode != 0, stopped.stderr  # the turn limit: a real run stopped early
    assert run_cli("verify", str(tmp_path / "t.jsonl")).returncode == 0
    proc = run_cli("verify", str(tmp_path / "t.jsonl"), "--require-finished")
    assert proc.returncode == 1
    said = "toolrelay verify: the run did not end normally: the run stopped at the turn limit (1)"
    assert proc.stderr.startswith(said) and proc.stderr.count("\n") == 1


def test_a_line_cut_short_is_dropped_and_reported(seed_run: Path, tmp_path: Path) -> None:
    events = seed_run.read_text().splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(events[:10]) + "\n" + events[10][:40])
    transcript = read_transcript(cut)
    assert transcript.cut_tail and len(transcript.events) == 10
    verdict = verify(load_run(cut))
    assert verdict.ok
    assert (
        "without run_end: the run was stopped before it ended; its last line was cut short"
        in verdict.unfinished[0]
    )
