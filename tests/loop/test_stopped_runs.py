"""A run stopped while calls are in flight — SIGINT, SIGTERM, SIGHUP or ``--timeout`` —
leaves a transcript that verifies as unfinished (exit 0), never as broken: each cancelled
call's outcome names its route, MCP id and connection, and says what stopped it.

Real processes throughout: ``toolrelay run`` with the offline stand-in model and a stdio
server whose ``hang`` tool never answers, then ``toolrelay verify`` / ``view`` on the file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import TOOLBOX, make_workspace

from toolrelay.verify import load_run, verify
from toolrelay.view.build import build_trace

TWO_HANGING_CALLS = {"turns": [{"calls": [{"name": "box__hang", "arguments": {}}] * 2}]}


def _environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}


def _start_run(workspace: Path, *extra: str) -> tuple[subprocess.Popen[str], Path]:
    config = workspace / "box.json"
    server = {"command": sys.executable, "args": [str(TOOLBOX)]}
    config.write_text(json.dumps({"mcpServers": {"box": server}}))
    script = workspace / "script.json"
    script.write_text(json.dumps(TWO_HANGING_CALLS))
    transcript = workspace / "run.jsonl"
    command = [
        sys.executable, "-m", "toolrelay", "run", "two hanging calls", "--model", "offline",
        "--script", str(script), "--config", str(config), "--yes", "--transcript", str(transcript), *extra,
    ]
    proc = subprocess.Popen(command, cwd=workspace, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_environment())
    return proc, transcript


def _wait_for_calls_in_flight(proc: subprocess.Popen[str], transcript: Path, count: int = 2) -> None:
    """Until the transcript records ``count`` tools/call requests (both calls are in flight)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        lines = transcript.read_text().split("\n")[:-1] if transcript.exists() else []  # whole lines only
        # counted as events: a request's message holds "method": "tools/call" too
        records = [json.loads(line) for line in lines]
        if sum(1 for r in records if (r["kind"], r.get("method")) == ("mcp_request", "tools/call")) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"the calls never went out (exit {proc.poll()})")


def _records(transcript: Path, kind: str) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in transcript.read_text().splitlines()]
    return [event for event in events if event["kind"] == kind]


def _toolrelay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolrelay", *args], capture_output=True, text=True,
                          timeout=60, env=_environment(), stdin=subprocess.DEVNULL)


def _assert_stopped_cleanly(transcript: Path, why: str) -> list[dict[str, Any]]:
    """verify exits 0 (unfinished, not broken), each call is recorded as cancelled with
    its route and MCP ids, and the trace view draws no broken link."""
    verdict = _toolrelay("verify", str(transcript))
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr
    assert "BROKEN" not in verdict.stdout and "unfinished run (not a broken link)" in verdict.stdout
    requests = {r["call_id"]: r for r in _records(transcript, "mcp_request") if r["method"] == "tools/call"}
    outcomes = [record["outcome"] for record in _records(transcript, "call_outcome")]
    assert len(outcomes) == 2
    for outcome in outcomes:
        request = requests[outcome["call_id"]]
        assert outcome["status"] == "cancelled" and outcome["message"] == why
        assert (outcome["server"], outcome["tool"]) == ("box", "hang")
        assert (outcome["mcp_id"], outcome["connection"]) == (request["mcp_id"], request["connection"])
        assert f"{outcome['call_id']} was cancelled: {why}" in verdict.stdout
    run = load_run(transcript)
    trace = build_trace(run.events, verify(run))
    calls = [call for group in trace.groups for call in group.calls()]
    assert [(call.status, call.broken) for call in calls] == [("cancelled", False)] * 2
    assert trace.verdict is not None and trace.verdict.ok and not trace.verdict.finished
    return outcomes


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_run_stopped_by_a_signal_verifies_as_unfinished(tmp_path: Path, signum: signal.Signals) -> None:
    proc, transcript = _start_run(make_workspace(tmp_path / "workspace"))
    _wait_for_calls_in_flight(proc, transcript)
    proc.send_signal(signum)
    proc.communicate(timeout=60)
    assert proc.returncode in (130, 128 + signum)
    _assert_stopped_cleanly(transcript, "the run was interrupted before the call ended")
    [end] = _records(transcript, "run_end")
    assert (end["status"], end["reason"]) == ("aborted", "the run was interrupted")


def test_a_run_ended_by_its_time_limit_says_so_in_each_call_and_at_the_end(tmp_path: Path) -> None:
    proc, transcript = _start_run(make_workspace(tmp_path / "workspace"), "--timeout", "3")
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert "run stopped at its time limit during turn 1: the run's time limit (3 s) ran out" in stderr
    _assert_stopped_cleanly(transcript, "the run's time limit (3 s) ran out before the call ended")
    [end] = _records(transcript, "run_end")
    assert (end["status"], end["reason"]) == ("timeout", "the run's time limit (3 s) ran out")
    assert "interrupted" not in transcript.read_text()
