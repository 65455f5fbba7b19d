"""``toolrelay run`` told to stop by real signals, as a real subprocess with real servers.

SIGTERM / SIGHUP: every call in flight is cancelled with ``notifications/cancelled``
before any server is stopped, and the transcript records exactly what was written (a
cancellation that could not be written says ``"delivered": false``). Ctrl-C, once or again
and again while the servers stop: the answer of a completed run is printed before the
servers are stopped, nothing claims cancelled calls that were not, and no server process
is left behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import TOOLBOX, make_workspace

from testkit.transcripts import transcript_events

CANCELLED = "notifications/cancelled"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "workspace")


def start_run(workspace: Path, record: Path, calls: list[str], *server_args: str,
              final: str | None = None, shutdown_grace: float | None = None) -> subprocess.Popen[str]:
    """``toolrelay run`` on the toolbox server (recording what it receives), the offline
    model calling ``calls`` at once, then answering ``final`` (if given); the server's
    ``shutdownGrace`` when given (else the 2 s default)."""
    config = workspace / "box.json"
    args = [str(TOOLBOX), "--record", str(record), *server_args]
    box: dict[str, Any] = {"command": sys.executable, "args": args}
    if shutdown_grace is not None:
        box["toolrelay"] = {"shutdownGrace": shutdown_grace}
    config.write_text(json.dumps({"mcpServers": {"box": box}}))
    turns: list[dict[str, Any]] = [{"calls": [{"name": f"box__{c}", "arguments": {}} for c in calls]}]
    if final is not None:
        turns.append({"message": final})
    script = workspace / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AZURE_OPENAI_"))}
    return subprocess.Popen(
        [sys.executable, "-m", "toolrelay", "run", "x", "--model", "offline", "--script", str(script),
         "--config", str(config), "--yes", "--transcript", str(workspace / "run.jsonl")],
        cwd=workspace, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )


def received(record: Path) -> list[dict[str, Any]]:
    text = record.read_text() if record.exists() else ""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def wait_for(record: Path, found: Callable[[list[dict[str, Any]]], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not found(received(record)):
        assert time.monotonic() < deadline, f"the server never got there: {received(record)}"
        time.sleep(0.02)


def calls_received(name: str, count: int) -> Callable[[list[dict[str, Any]]], bool]:
    return lambda lines: sum(m.get("params", {}).get("name") == name for m in lines) >= count


def noted(what: str) -> Callable[[list[dict[str, Any]]], bool]:
    return lambda lines: {"toolbox": what} in lines


def servers_running(marker: Path) -> list[int]:
    """Processes whose command line names ``marker`` (the record file: the server's only)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or str(marker) not in (entry / "cmdline").read_bytes().decode():
                continue
            state = (entry / "stat").read_bytes().rpartition(b")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if state not in (b"Z", b"X"):
            found.append(int(entry.name))
    return found


def finish(proc: subprocess.Popen[str], timeout: float = 30) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def recorded_cancellations(workspace: Path) -> list[dict[str, Any]]:
    events = transcript_events(workspace / "run.jsonl")
    return [e for e in events if e["kind"] == "mcp_notification" and e["method"] == CANCELLED]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_terminated_run_delivers_the_cancellations_it_records(
    workspace: Path, tmp_path: Path, signum: int
) -> None:
    record = tmp_path / "received.jsonl"
    proc = start_run(workspace, record, ["hang"] * 4)
    wait_for(record, calls_received("hang", 4))
    proc.send_signal(signum)
    _, stderr = finish(proc)
    assert proc.returncode == 128 + signum, stderr
    wait_for(record, noted("stdin closed"), timeout=10)  # the server read all it was sent
    hangs = sorted(m["id"] for m in received(record) if m.get("params", {}).get("name") == "hang")
    delivered = sorted(m["params"]["requestId"] for m in received(record) if m.get("method") == CANCELLED)
    recorded = recorded_cancellations(workspace)
    assert delivered == hangs  # every call in flight, each cancelled once
    assert sorted(e["message"]["params"]["requestId"] for e in recorded) == hangs
    assert not any("delivered" in e for e in recorded)  # each one written
    assert servers_running(record) == []
    assert "Traceback" not in stderr


def test_a_cancellation_that_cannot_be_written_is_recorded_as_not_delivered(
    workspace: Path, tmp_path: Path
) -> None:
    record = tmp_path / "received.jsonl"
    # it no longer reads, so it never sees its stdin close: 0.2 s before SIGTERM, not 2 s
    proc = start_run(workspace, record, ["stop_reading"], shutdown_grace=0.2)
    wait_for(record, noted("stopped reading"))  # its stdin is closed: nothing more can reach it
    proc.send_signal(signal.SIGTERM)
    _, stderr = finish(proc)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    [stop] = [m for m in received(record) if m.get("params", {}).get("name") == "stop_reading"]
    [cancellation] = recorded_cancellations(workspace)
    assert cancellation["message"]["params"]["requestId"] == stop["id"]
    assert cancellation["delivered"] is False
    assert servers_running(record) == []


def test_ctrl_c_while_the_servers_stop_after_a_completed_run_still_prints_the_answer(
    workspace: Path, tmp_path: Path
) -> None:
    record = tmp_path / "received.jsonl"
    # the server ignores its stdin closing and SIGTERM: stopping it takes seconds
    proc = start_run(workspace, record, ["echo"], "--ignore-term", final="All done.")
    wait_for(record, noted("stdin closed"))  # the run is over; the servers are being stopped
    proc.send_signal(signal.SIGINT)
    stdout, stderr = finish(proc)
    assert stdout == "All done.\n"
    assert "in-flight calls were cancelled" not in stderr
    assert "toolrelay run: interrupted while the servers were stopping (the run had completed)" in stderr
    assert proc.returncode == 130
    assert servers_running(record) == []
    assert "Traceback" not in stderr


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signals_again_and_again_while_the_servers_stop_leave_no_server_behind(
    workspace: Path, tmp_path: Path, signum: int
) -> None:
    record = tmp_path / "received.jsonl"
    proc = start_run(workspace, record, ["hang"], "--ignore-term")
    wait_for(record, calls_received("hang", 1))
    proc.send_signal(signum)
    wait_for(record, noted("stdin closed"))  # the servers are being stopped
    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:  # a user pressing Ctrl-C again and again
        proc.send_signal(signum)
        time.sleep(0.02)
    _, stderr = finish(proc)
    assert proc.returncode == (130 if signum == signal.SIGINT else 128 + signum), stderr
    assert servers_running(record) == []
    assert "Traceback" not in stderr
