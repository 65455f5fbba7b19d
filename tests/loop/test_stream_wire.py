"""``toolrelay run`` on the stand-in's real streams: early execution proven, text through a
pipe as it is written, and every stream fault with its exit code, feedback and verify.

These drive the stand-in's paced streams, faults and ``hold_completed_until_file`` and the
model client's incremental reading (issue 12's wire half) through the loop, once per model
dialect (the ``dialect`` fixture: ``--api responses`` and ``--api chat``, every request body
checked against its dialect's openai types, every chat chunk against ``ChatCompletionChunk``).
Scripts follow docs/model.md: per turn ``tokens_per_second``, ``stream_fault``
(``error_after``, ``cut_after``, ``failed_after_call``, ``no_completed``) and
``hold_completed_until_file``. A chat tool call closes only when the next one starts (or
the choice finishes), so a test that needs a call to start while the stream is still open
scripts two calls (``LOOKS``) in both dialects.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Final

import pytest
from loop_helpers import make_workspace
from openai.types.chat import ChatCompletionChunk

from testkit.dialect import Dialect
from testkit.processes import spawned
from testkit.servers import HONEST_SERVER, TOUCH_SERVER

TOUCH = TOUCH_SERVER
LOOK = {"name": "touch__look", "arguments": {"what": "the notes"}}
LOOKS = [LOOK, {"name": "touch__look", "arguments": {"what": "the plan"}}]
"""Two calls: the first closes while the stream is open in either dialect."""
OPENING: Final = {"responses": 2, "chat": 1}
"""The events that say nothing: response.created and .in_progress; chat's role chunk."""
BROKEN: Final = {"cut": "the connection closed",
                 "responses": "the stream ended without response.completed, .incomplete or .failed",
                 "chat": "the stream ended without a finish_reason"}
"""How the run says the stream broke off: cut, or ended without the answer's end."""
_ENDS: Final = {"response.completed": "completed", "response.incomplete": "incomplete",
                "response.failed": "failed"}
_FINISHED: Final = {"length": "incomplete", "content_filter": "incomplete"}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "workspace")


def _files(workspace: Path, turns: list[dict[str, Any]], dialect: Dialect) -> tuple[list[str], Path]:
    """The script and the config (the touch server creates ``called`` on its tools/call)."""
    (workspace / "script.json").write_text(json.dumps({"turns": turns}))
    config = {"mcpServers": {"touch": {"command": sys.executable,
                                       "args": [str(TOUCH), "--touch", str(workspace / "called")]}}}
    (workspace / "mcp.json").write_text(json.dumps(config))
    args = ["--model", "offline", "--script", "script.json", "--config", "mcp.json",
            "--transcript", "t.jsonl", "--api", dialect.api]
    return args, workspace / "called"


def _toolrelay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run([sys.executable, "-m", "toolrelay", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=env, stdin=subprocess.DEVNULL)


def _records(workspace: Path, dialect: Dialect) -> list[dict[str, Any]]:
    """The transcript's records; every request body and chat chunk checked by the openai types."""
    records = [json.loads(line) for line in (workspace / "t.jsonl").read_text().splitlines()]
    for record in records:
        if record["kind"] == "model_request" and "body" in record:  # later ones may be a body_delta
            dialect.check(record["body"])
        elif record["kind"] == "model_stream" and dialect.chat and record["data"] != "[DONE]":
            data = json.loads(record["data"])
            if "error" not in data:  # a mid-stream failure is an error object, not a chunk
                ChatCompletionChunk.model_validate(data)
    return records


def _ending(record: dict[str, Any]) -> str | None:
    """How a stream event ends the answer (completed, incomplete, failed), if it does: a
    Responses terminal event, or a chat chunk with a ``finish_reason``."""
    if record["kind"] != "model_stream" or record["data"] == "[DONE]":
        return None
    data = json.loads(record["data"])
    if data.get("type") in _ENDS:
        return _ENDS[data["type"]]
    reasons = [c.get("finish_reason") for c in data.get("choices") or [] if c.get("finish_reason")]
    return _FINISHED.get(reasons[0], "completed") if reasons else None


def _status(record: dict[str, Any], dialect: Dialect) -> str:
    """A model_response's status: a chat answer's is its error, else its finish."""
    body = record["body"]
    if dialect.chat:
        reason = body["choices"][0].get("finish_reason")
        return "failed" if "error" in body else _FINISHED.get(reason, "completed")
    return str(body["status"])


def _verified(workspace: Path) -> dict[str, Any]:
    proc = _toolrelay("verify", "t.jsonl", "--json", cwd=workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    verdict: dict[str, Any] = json.loads(proc.stdout)
    return verdict


def test_a_call_starts_before_its_response_completes(workspace: Path, dialect: Dialect) -> None:
    """The stand-in holds the answer's end (response.completed; chat's finish chunk) until
    the server has received the tools/call: a client that waited for the whole response
    would never get it."""
    held = {"calls": LOOKS, "hold_completed_until_file": str(workspace / "called")}
    args, _ = _files(workspace, [held, {"message": "seen"}], dialect)
    proc = _toolrelay("run", "look at the notes", *args, cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "seen\n"
    records = _records(workspace, dialect)
    parsed = next(r["seq"] for r in records if r["kind"] == "call_parsed")
    completed = next(r["seq"] for r in records if _ending(r) == "completed")
    assert parsed < completed
    verdict = _verified(workspace)
    assert verdict["ok"] and any(f["check"] == "early_start" and f["ok"] for f in verdict["findings"])


def test_the_text_reaches_a_pipe_while_the_response_is_still_open(workspace: Path, dialect: Dialect) -> None:
    """The stand-in holds the answer's end until the test creates the file, and the test
    creates it only once it has read the first words from toolrelay's stdout pipe."""
    release = workspace / "release"
    talk = {"message": "Here are the first words, and then the rest.", "tokens_per_second": 40,
            "hold_completed_until_file": str(release)}
    args, _ = _files(workspace, [talk], dialect)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    with spawned([sys.executable, "-m", "toolrelay", "run", "talk", *args], cwd=workspace,
                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env) as process:
        assert process.stdout is not None
        seen = _read_until(process.stdout.fileno(), b"first words", deadline=time.monotonic() + 60)
        release.touch()
        rest = process.stdout.read()
        assert process.wait(60) == 0
    assert (seen + rest).decode() == "Here are the first words, and then the rest.\n"


def _read_until(fd: int, wanted: bytes, *, deadline: float) -> bytes:
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    got = b""
    while wanted not in got:
        if not selector.select(max(0.0, deadline - time.monotonic())):
            raise AssertionError(f"no {wanted!r} on stdout while the response was open; got {got!r}")
        chunk = os.read(fd, 4096)
        if not chunk:
            raise AssertionError(f"stdout closed before {wanted!r}; got {got!r}")
        got += chunk
    return got


def test_an_error_event_mid_stream_ends_the_run_failed_with_nothing_fed_back(
    workspace: Path, dialect: Dialect
) -> None:
    args, _ = _files(workspace, [{"calls": [LOOK], "stream_fault": {"error_after": 4}}], dialect)
    proc = _toolrelay("run", "look", *args, cwd=workspace)
    assert proc.returncode == 1, proc.stderr
    assert "failed response" in proc.stderr
    records = _records(workspace, dialect)
    assert [_status(r, dialect) for r in records if r["kind"] == "model_response"] == ["failed"]
    assert not [r for r in records if r["kind"] == "feedback"]
    assert not [r for r in records if r["kind"] == "call_parsed"]  # the call's arguments never closed
    assert len([r for r in records if r["kind"] == "model_request"]) == 1
    _verified(workspace)


def test_a_response_failing_after_a_call_closed_keeps_the_calls_outcome_and_feeds_nothing_back(
    workspace: Path, dialect: Dialect
) -> None:
    args, _ = _files(workspace, [{"calls": [LOOK], "stream_fault": {"failed_after_call": True}}], dialect)
    proc = _toolrelay("run", "look", *args, cwd=workspace)
    assert proc.returncode == 1, proc.stderr
    assert "ended after 1 turn with a failed response" in proc.stderr
    records = _records(workspace, dialect)
    [outcome] = [r["outcome"] for r in records if r["kind"] == "call_outcome"]
    assert outcome["status"] in ("ok", "cancelled") and outcome["alias"] == "touch__look"
    assert not [r for r in records if r["kind"] == "feedback"]
    verdict = _verified(workspace)
    assert not verdict["finished"]


def test_a_response_ending_incomplete_after_a_call_started_keeps_its_outcome_and_feeds_nothing_back(
    workspace: Path, dialect: Dialect
) -> None:
    """The first call closes, so it starts (read-only); then the response ends incomplete
    (``response.incomplete``; chat's ``finish_reason: length``): the outcomes are recorded,
    nothing goes back, exit 1."""
    held = str(workspace / "called")  # the touch server creates it when its tools/call arrives
    args, called = _files(workspace, [{"calls": LOOKS, "status": "incomplete", "after_calls": "cut off",
                                       "hold_completed_until_file": held}], dialect)
    proc = _toolrelay("run", "look", *args, cwd=workspace)
    assert proc.returncode == 1, proc.stderr
    assert "ended after 1 turn with an incomplete response" in proc.stderr
    assert called.exists()  # the answer's end waited for the tools/call: the call started mid-stream
    records = _records(workspace, dialect)
    assert [_ending(r) for r in records if _ending(r)] == ["incomplete"]
    outcomes = [r["outcome"] for r in records if r["kind"] == "call_outcome"]
    assert outcomes
    assert all(o["status"] in ("ok", "cancelled") and o["alias"] == "touch__look" for o in outcomes)
    assert not [r for r in records if r["kind"] == "feedback"]
    assert len([r for r in records if r["kind"] == "model_request"]) == 1
    verdict = _verified(workspace)
    assert not verdict["finished"]
    assert any(f["check"] == "early_start" and f["ok"] for f in verdict["findings"])


@pytest.mark.parametrize("fault", [{"cut_after": 7}, {"no_completed": True}], ids=["cut", "no_completed"])
def test_a_stream_broken_off_after_a_call_started_exits_3_naming_the_call(
    workspace: Path, dialect: Dialect, fault: dict[str, Any]
) -> None:
    """Seven events: the first call closed, the second's item (chat: its arguments) begun;
    or every event but the answer's end. The started call is named, never re-sent."""
    args, _ = _files(workspace, [{"calls": LOOKS, "stream_fault": fault}], dialect)
    proc = _toolrelay("run", "look", *args, cwd=workspace)
    assert proc.returncode == 3, proc.stderr
    assert "calls that had started: " in proc.stderr and "(touch__look: " in proc.stderr
    assert BROKEN[dialect.api if "no_completed" in fault else "cut"] in proc.stderr
    records = _records(workspace, dialect)
    assert len([r for r in records if r["kind"] == "model_request"]) == 1  # not retried blindly
    assert [r["status"] for r in records if r["kind"] == "run_end"] == ["error"]
    assert not [r for r in records if r["kind"] == "feedback"]
    assert not [r for r in records if _ending(r)]
    _verified(workspace)


def test_a_tampered_cut_stream_is_rejected(workspace: Path, dialect: Dialect) -> None:
    """A cut stream's recorded events are proof too: changing the started call's arguments
    in one of them breaks the transcript."""
    args, _ = _files(workspace, [{"calls": LOOKS, "stream_fault": {"cut_after": 7}}], dialect)
    assert _toolrelay("run", "look", *args, cwd=workspace).returncode == 3
    _verified(workspace)
    lines = (workspace / "t.jsonl").read_text().splitlines()
    changed = next(n for n, line in enumerate(lines) if "model_stream" in line and "the not" in line)
    lines[changed] = lines[changed].replace("the not", "the key", 1)
    (workspace / "t.jsonl").write_text("\n".join(lines) + "\n")
    proc = _toolrelay("verify", "t.jsonl", "--json", cwd=workspace)
    assert proc.returncode != 0
    verdict = json.loads(proc.stdout)
    broken = verdict["broken"]
    assert not verdict["ok"] and broken["link"] == "model_response" and broken["check"] == "stream", verdict
    assert broken["message"].startswith("turn 1: ") and "arguments" in broken["message"]


def test_a_stream_cut_before_anything_but_its_opening_is_retried(workspace: Path, dialect: Dialect) -> None:
    """Cut after its opening (response.created and .in_progress; chat's role chunk): nothing
    was shown and no call ran, so the request is asked again like a 5xx; the stand-in
    answers the retry (the same turn) whole, and the run completes."""
    opening = OPENING[dialect.api]
    cut_off = {"calls": [LOOK], "stream_fault": {"cut_after": opening}}
    args, _ = _files(workspace, [cut_off, {"message": "seen"}], dialect)
    proc = _toolrelay("run", "look", *args, cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "seen\n"
    [notice] = [line for line in proc.stderr.splitlines() if "retrying" in line]
    assert "model request attempt 1 failed" in notice, proc.stderr
    records = _records(workspace, dialect)
    requests = [(r["turn"], r["attempt"]) for r in records if r["kind"] == "model_request"]
    assert requests == [(1, 1), (1, 2), (2, 1)]
    cut = [r for r in records if r["kind"] == "model_response" and r["turn"] == 1 and r["attempt"] == 1]
    assert cut[0]["cut"] == "the connection closed" and cut[0]["stream_events"] == opening
    [outcome] = [r["outcome"] for r in records if r["kind"] == "call_outcome"]
    assert outcome["status"] == "ok" and outcome["alias"] == "touch__look"
    verdict = _verified(workspace)
    assert verdict["ok"] and verdict["finished"]


def test_a_consent_question_waits_while_the_stream_is_read_to_its_end(
    workspace: Path, dialect: Dialect
) -> None:
    """--early all: the write call is ready as it closes (its item's done; in chat, as the
    next call starts), so the terminal asks then; the question stays unanswered until the
    transcript holds the whole streamed response (every later event, the answer's end, the
    model_response): a prompt that held the reading of the stream would never get there.
    Then "y", and the call runs."""
    write = {"name": "honest__write", "arguments": {"text": "hello"}}
    echo = {"name": "honest__echo", "arguments": {"text": "and this"}}
    script = {"turns": [{"calls": [write, echo], "after_calls": "Writing it now.", "tokens_per_second": 200},
                        {"message": "written"}]}
    (workspace / "script.json").write_text(json.dumps(script))
    config = {"mcpServers": {"honest": {"command": sys.executable, "args": [str(HONEST_SERVER)]}}}
    (workspace / "mcp.json").write_text(json.dumps(config))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    command = [sys.executable, "-m", "toolrelay", "run", "write hello", "--model", "offline", "--script",
               "script.json", "--config", "mcp.json", "--transcript", "t.jsonl", "--early", "all",
               "--api", dialect.api]
    terminal, its_end = os.openpty()
    try:
        with spawned(command, cwd=workspace, stdin=its_end, stdout=subprocess.PIPE, stderr=its_end,
                     env=env) as process:
            os.close(its_end)
            its_end = -1
            deadline = time.monotonic() + 60
            _read_until(terminal, b"[N]o: ", deadline=deadline)  # the consent question
            _wait_for_record(workspace / "t.jsonl", "model_response", deadline=deadline)
            os.write(terminal, b"y\n")
            assert process.stdout is not None
            printed = process.stdout.read()
            assert process.wait(60) == 0
    finally:
        os.close(terminal)
        if its_end >= 0:
            os.close(its_end)
    assert printed.decode() == "Writing it now.\nwritten\n"
    records = _records(workspace, dialect)
    parsed = next(r["seq"] for r in records if r["kind"] == "call_parsed")
    completed = next(r["seq"] for r in records if _ending(r) == "completed")
    answered = next(r["seq"] for r in records if r["kind"] == "model_response")
    sent = next(r["seq"] for r in records if r["kind"] == "mcp_request" and r["method"] == "tools/call"
                and '"write"' in json.dumps(r))
    assert parsed < completed < answered < sent  # asked mid-stream; run only after the answer "y"
    outcomes = {r["outcome"]["alias"]: r["outcome"]["status"] for r in records if r["kind"] == "call_outcome"}
    assert outcomes == {"honest__write": "ok", "honest__echo": "ok"}
    _verified(workspace)


def _wait_for_record(path: Path, kind: str, *, deadline: float) -> None:
    """Until the transcript holds a complete line of ``kind`` (it is written as the run goes)."""
    while time.monotonic() < deadline:
        complete = path.read_text().split("\n")[:-1] if path.exists() else []  # not the line being written
        if any(json.loads(line)["kind"] == kind for line in complete):
            return
        time.sleep(0.01)
    raise AssertionError(f"no {kind} in the transcript while the consent question waited")


def test_an_early_call_is_shown_starting_and_ending_while_its_response_is_open(
    workspace: Path, dialect: Dialect
) -> None:
    """The stand-in holds the answer's end until a test creates a file, and the test does
    so only once stderr shows the first call's start line (marked early) and its end line:
    both are printed as they happen, before the turn's ``←`` line."""
    release = workspace / "release"
    args, _ = _files(workspace, [{"calls": LOOKS, "hold_completed_until_file": str(release)},
                                 {"message": "seen"}], dialect)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    with spawned([sys.executable, "-m", "toolrelay", "run", "look", *args], cwd=workspace,
                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env) as process:
        assert process.stderr is not None
        seen = _read_until(process.stderr.fileno(), "  call touch__look → ".encode(),
                           deadline=time.monotonic() + 20)  # the stand-in gives up holding after 30 s
        release.touch()
        rest = process.stderr.read()
        assert process.wait(60) == 0
    assert "turn 1 ←" not in seen.decode()  # the response was still open
    lines = (seen + rest).decode().splitlines()
    turn = lines[lines.index("turn 1 → model offline"):]
    assert turn[1] == "  call touch__look started early, while the response streams"
    ended = next(n for n, line in enumerate(turn) if line.startswith("  call touch__look → "))
    assert turn[ended].startswith("  call touch__look → touch/look · early · mcp id ")
    assert turn[ended].endswith(" · ok")
    assert ended < next(n for n, line in enumerate(turn) if line.startswith("turn 1 ← HTTP 200 in "))
