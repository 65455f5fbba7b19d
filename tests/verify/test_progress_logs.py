"""Progress and log messages in the proof: a real scripted run whose server reports progress
and logs during one call and sends progress for a token nobody sent during another
verifies (each progress notification paired with the call that sent its token, each log
message inside its call, the stray one flagged as belonging to no pending call); tampered
copies fail on the correlation link, saying what is wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import PYTHON
from testkit.servers import PROGRESS_SERVER
from testkit.transcripts import transcript_events

from .helpers import Event, run_cli, tampered, verdict_of

SCRIPT = {
    "turns": [
        {"calls": [{"name": "pr__work", "arguments": {"steps": 4, "interval": 0.01}}]},
        {"calls": [{"name": "pr__stray", "arguments": {}}]},
        {"message": "Done."},
    ],
}


@pytest.fixture(scope="module")
def reported_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("reported")
    config = {"mcpServers": {"pr": {"command": PYTHON, "args": [str(PROGRESS_SERVER)]}}}
    (folder / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    (folder / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    proc = run_cli("run", "work", "--config", "mcp.json", "--model", "offline", "--script", "script.json",
                   "--server-log-level", "info", "--transcript", "run.jsonl", cwd=folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert '[pr] info: worker: {"step":2,"of":4}' in proc.stderr  # shown during the run
    return folder / "run.jsonl"


def progress(events: list[Event], n: int = 0) -> Event:
    return [e for e in events if e.get("method") == "notifications/progress"][n]


def log_message(events: list[Event]) -> Event:
    return next(e for e in events if e.get("method") == "notifications/message")


def test_progress_and_logs_are_paired_with_their_call(reported_run: Path) -> None:
    events = transcript_events(reported_run)
    calls = [e for e in events if e["kind"] == "mcp_request" and e["method"] == "tools/call"]
    tokens = [call["message"]["params"]["_meta"]["progressToken"] for call in calls]
    assert len(set(tokens)) == 2  # one per call
    assert [p["call_id"] for p in events if p.get("method") == "notifications/progress"] == \
        ["call_offline_0001"] * 4 + [None]  # the stray one belongs to no call
    proc = run_cli("verify", str(reported_run), "--all")
    assert proc.returncode == 0, proc.stdout
    assert ("  ok     correlation    call_offline_0001: during its tools/call the server sent 4 progress "
            "notification(s) (last 4/4) and 3 log message(s)") in proc.stdout
    assert ("server pr sent progress for token 'not-a-token-of-yours', which no pending tools/call sent: "
            "recorded, ignored") in proc.stdout
    explained = run_cli("explain", str(reported_run))
    assert "answered, ok; it reported 4 progress and 3 log message(s)" in explained.stdout


def give_progress_to_the_other_call(events: list[Event]) -> None:
    progress(events, 1)["call_id"] = "call_offline_0002"


def attach_the_stray_progress(events: list[Event]) -> None:
    progress(events, 4)["call_id"] = "call_offline_0002"


def make_progress_go_back(events: list[Event]) -> None:
    progress(events, 2)["message"]["params"]["progress"] = 1


def move_a_log_message_after_its_answer(events: list[Event]) -> None:
    moved = log_message(events)
    events.remove(moved)
    answer = next(e for e in events if e["kind"] == "mcp_response" and e["method"] == "tools/call")
    events.insert(events.index(answer) + 1, moved)
    for seq, event in enumerate(events, 1):
        event["seq"] = seq


@pytest.mark.parametrize(("change", "said"), [
    (give_progress_to_the_other_call,
     "is recorded with call_id 'call_offline_0002', the tools/call that sent the token with "
     "'call_offline_0001'"),
    (attach_the_stray_progress,
     "server pr sent progress for token 'not-a-token-of-yours', which no pending tools/call sent, yet it "
     "is recorded with call call_offline_0002"),
    (make_progress_go_back, "server pr sent progress 1 for token "),
    (move_a_log_message_after_its_answer,
     "call_offline_0001: the server's notifications/message is recorded with this call, but came after "
     "its answer"),
])
def test_a_tampered_copy_breaks_correlation_saying_what(reported_run: Path, tmp_path: Path, change: Any,
                                                        said: str) -> None:
    copy = tampered(reported_run, tmp_path / "t.jsonl", change)
    messages = [f.message for f in verdict_of(copy).findings if not f.ok]
    assert any(said in message for message in messages), messages
    proc = run_cli("verify", str(copy))
    assert proc.returncode == 1
    assert "BROKEN link: correlation" in proc.stdout, proc.stdout
