"""Consent that remembers, at a real terminal: ``toolrelay run --model offline`` with its
stdin and stderr on a pty. The question shows the arguments and takes ``y``, ``a`` (always
for this tool, this run), ``s`` (always for this tool on this server, saved in the state
folder, 0600 in 0700) or ``n``; a later call an answer stands for is not asked about and
its decision is recorded as remembered; a later run (no terminal at all) reads the saved
approval, and only that one. Every transcript verifies."""

from __future__ import annotations

import json
import os
import select
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from testkit.processes import run, spawned
from testkit.servers import RUG_SERVER
from toolrelay.cli.consent import CALL_QUESTION
from toolrelay.verify import load_run, verify


def _read_until(fd: int, wanted: str, seen: list[str], count: int = 1, timeout: float = 60) -> str:
    """Terminal output until ``wanted`` has shown ``count`` times (all of it kept in ``seen``)."""
    ends = time.monotonic() + timeout
    while "".join(seen).count(wanted) < count:
        ready, _, _ = select.select([fd], [], [], max(0.0, ends - time.monotonic()))
        if not ready:
            raise AssertionError(f"no {wanted!r} on the terminal: {''.join(seen)}")
        seen.append(os.read(fd, 4096).decode(errors="replace"))
    return "".join(seen)


def _write(folder: Path, name: str, *calls: tuple[str, dict[str, Any]]) -> Path:
    turns = [{"calls": [{"name": alias, "arguments": arguments}]} for alias, arguments in calls]
    path = folder / name
    path.write_text(json.dumps({"turns": [*turns, {"message": "done"}]}))
    return path


def _decisions(path: Path) -> list[tuple[str, str, str | None]]:
    events = [json.loads(line) for line in path.read_text().splitlines()]
    return [(e["alias"], e["decision"], e.get("remembered")) for e in events
            if e["kind"] == "policy_decision" and e["stage"] == "call"]


def test_a_and_s_answers_stand_for_later_calls_and_s_for_later_runs(tmp_path: Path) -> None:
    entry = {"command": sys.executable, "args": [str(RUG_SERVER)]}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"notes": entry, "other": entry}}))
    state = tmp_path / "state"
    environment = {**os.environ, "XDG_STATE_HOME": str(state)}
    plan = _write(tmp_path, "first.json", ("notes__write_note", {"name": "n1", "text": "x"}),
                  ("notes__write_note", {"name": "n2", "text": "x"}),
                  ("other__write_note", {"name": "o1", "text": "x"}),
                  ("other__write_note", {"name": "o2", "text": "x"}),
                  ("other__write_note", {"name": "o3", "text": "x"}))
    terminal, attached = os.openpty()
    command = [sys.executable, "-m", "toolrelay", "run", "go", "--config", "mcp.json", "--model", "offline",
               "--script", str(plan), "--transcript", "first.jsonl", "--json"]
    with spawned(command, cwd=tmp_path, env=environment, text=True, stdin=attached, stdout=subprocess.PIPE,
                 stderr=attached) as proc:
        os.close(attached)
        seen: list[str] = []
        shown = _read_until(terminal, CALL_QUESTION, seen)
        assert "The model wants to run write_note on server notes (not marked read-only)" in shown
        assert 'arguments: {"name": "n1", "text": "x"}' in shown
        os.write(terminal, b"s\n")  # notes/write_note: always, saved
        shown = _read_until(terminal, CALL_QUESTION, seen, count=2)
        assert "on server other" in shown.split(CALL_QUESTION)[1]  # n2 was not asked about: saved
        os.write(terminal, b"a\n")  # other/write_note: always, this run
        out, _ = proc.communicate(timeout=60)
        os.close(terminal)
    assert proc.returncode == 0, "".join(seen)
    assert "".join(seen).count(CALL_QUESTION) == 2  # o2 and o3 were not asked about either
    calls = json.loads(out)["calls"]
    assert [call["status"] for call in calls] == ["ok"] * 5
    assert _decisions(tmp_path / "first.jsonl") == [
        ("notes__write_note", "default", None), ("notes__write_note", "default", "saved"),
        ("other__write_note", "default", None), ("other__write_note", "default", "run"),
        ("other__write_note", "default", "run")]
    assert verify(load_run(tmp_path / "first.jsonl")).ok

    (saved,) = (state / "toolrelay" / "approvals").glob("notes-*.json")
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert stat.S_IMODE(saved.parent.stat().st_mode) == 0o700
    assert list(json.loads(saved.read_text())["tools"]) == ["write_note"]

    later = _write(tmp_path, "later.json", ("notes__write_note", {"name": "n3", "text": "x"}),
                   ("other__write_note", {"name": "o4", "text": "x"}))
    done = run([sys.executable, "-m", "toolrelay", "run", "go", "--config", "mcp.json", "--model", "offline",
                "--script", str(later), "--transcript", "later.jsonl", "--json"],
               cwd=tmp_path, env=environment, text=True, timeout=60, stdin=subprocess.DEVNULL)
    calls = json.loads(done.stdout)["calls"]
    assert [call["status"] for call in calls] == ["ok", "not_approved"]  # only the saved answer holds
    assert _decisions(tmp_path / "later.jsonl") == [
        ("notes__write_note", "default", "saved"), ("other__write_note", "default", None)]
    assert verify(load_run(tmp_path / "later.jsonl")).ok


def test_y_approves_one_call_and_n_refuses_one(tmp_path: Path) -> None:
    entry = {"command": sys.executable, "args": [str(RUG_SERVER)]}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"notes": entry}}))
    environment = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    plan = _write(tmp_path, "plan.json", ("notes__write_note", {"name": "a", "text": "x"}),
                  ("notes__write_note", {"name": "b", "text": "x"}))
    terminal, attached = os.openpty()
    command = [sys.executable, "-m", "toolrelay", "run", "go", "--config", "mcp.json", "--model", "offline",
               "--script", str(plan), "--json"]
    with spawned(command, cwd=tmp_path, env=environment, text=True, stdin=attached, stdout=subprocess.PIPE,
                 stderr=attached) as proc:
        os.close(attached)
        seen: list[str] = []
        _read_until(terminal, CALL_QUESTION, seen)
        os.write(terminal, b"y\n")
        shown = _read_until(terminal, CALL_QUESTION, seen, count=2)
        assert '"name": "b"' in shown.split(CALL_QUESTION)[1]
        os.write(terminal, b"n\n")
        out, _ = proc.communicate(timeout=60)
        os.close(terminal)
    assert [(c["status"], c.get("message")) for c in json.loads(out)["calls"]] == [
        ("ok", None), ("not_approved", "the user declined to run write_note on server notes")]
    assert not (tmp_path / "state" / "toolrelay" / "approvals").exists()
