"""``toolrelay batch`` end to end on the stand-in: every task run and recorded, the
servers shared, the summary, the progress lines, the exit codes, a second run skipping
what is finished. The first test runs in both model dialects (``--api chat``: flat only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from batch_helpers import (
    CALL_IDS,
    ledger_config,
    ledger_runs,
    multi_call_paths,
    multi_call_tasks,
    reading_tasks,
    results,
    toolrelay,
    write_tasks,
)

from testkit.dialect import Dialect
from toolrelay.verify import load_run, verify


def first_tools(transcript: Path, dialect: Dialect) -> list[dict[str, object]]:
    """The tools array of the transcript's first request, its body checked against the types."""
    events = (json.loads(line) for line in transcript.read_text().splitlines())
    first = next(e for e in events if e["kind"] == "model_request")
    assert first["dialect"] == dialect.api
    dialect.check(first["body"])
    tools: list[dict[str, object]] = dialect.request(first["body"])["tools"]
    return tools


FIELDS = {"id", "status", "answer", "turns", "calls", "failed_calls", "usage", "duration", "error",
          "transcript"}


@pytest.mark.parametrize(("declare", "dialect"), [("flat", "responses"), ("namespaces", "responses"),
                                                  ("flat", "chat")], indirect=["dialect"])
def test_every_task_is_run_once_recorded_and_verifiable(
    tmp_path: Path, declare: str, dialect: Dialect
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    tasks = write_tasks(tmp_path / "tasks.jsonl", reading_tasks(6))
    done = toolrelay("batch", str(tasks), "--out", "out", "--model", "offline", "--config",
                     str(ledger_config(tmp_path, ledger)), "-j", "3", "--yes", "--declare", declare,
                     "--api", dialect.api, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    lines = results(out)
    assert sorted(line["id"] for line in lines) == [f"t{i}" for i in range(1, 7)]
    for line in lines:
        assert set(line) == FIELDS
        assert line["status"] == "completed" and line["turns"] == 2 and line["calls"] == 1
        assert line["answer"] == f"The tool returned:\ncontents of {line['id']}.txt"
        assert line["usage"]["total_tokens"] > 0 and line["error"] is None
        verdict = verify(load_run(out / line["transcript"]))
        assert verdict.ok and verdict.finished, verdict
        tools = first_tools(out / line["transcript"], dialect)
        assert {tool["type"] for tool in tools} == {"namespace" if declare == "namespaces" else "function"}
    # one server process served every task, each call ran once
    runs = [json.loads(row) for row in ledger.read_text().splitlines()]
    assert len({row["pid"] for row in runs}) == 1
    assert ledger_runs(ledger) == {f"t{i}.txt": 1 for i in range(1, 7)}
    assert done.stdout.splitlines()[0] == "tasks: 6 (6 completed)"
    assert "tool calls: 6 (0 failed)" in done.stdout
    progress = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert len(progress) == 6 and progress[-1].startswith("[6/6] t")
    assert " completed · 2 turns, 1 call · " in progress[-1]


@pytest.mark.parametrize("call_ids", CALL_IDS)
def test_tasks_sharing_one_server_each_record_their_own_answers(tmp_path: Path, call_ids: str) -> None:
    """Eight tasks at once, three calls each, on one stdio server: answers arrive on the one
    connection, their call_ids the same in every task; each goes to its own transcript."""
    ledger = tmp_path / "ledger.jsonl"
    tasks = write_tasks(tmp_path / "tasks.jsonl", multi_call_tasks(tmp_path, 16, call_ids))
    done = toolrelay("batch", str(tasks), "--out", "out", "--model", "offline", "--config",
                     str(ledger_config(tmp_path, ledger, delay=0.02)), "-j", "8", "--yes", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = results(tmp_path / "out")
    assert len(lines) == 16
    for line in lines:
        verdict = verify(load_run(tmp_path / "out" / line["transcript"]))
        assert verdict.ok and verdict.finished, (line["id"], verdict.broken)
        assert line["status"] == "completed" and line["calls"] == 3, line
        assert line["answer"].endswith(f"contents of {multi_call_paths(line['id'])[2]}")
    assert ledger_runs(ledger) == {path: 1 for line in lines for path in multi_call_paths(line["id"])}
    checked = toolrelay("verify", str(tmp_path / "out" / lines[-1]["transcript"]), cwd=tmp_path)
    assert checked.returncode == 0 and ", completed\nok: " in checked.stdout, checked.stdout


def test_running_it_again_skips_finished_tasks_and_restart_starts_over(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    tasks = write_tasks(tmp_path / "tasks.jsonl", reading_tasks(3))
    command = ("batch", str(tasks), "--out", "out", "--model", "offline", "--config",
               str(ledger_config(tmp_path, ledger)), "--yes")
    assert toolrelay(*command, cwd=tmp_path).returncode == 0
    again = toolrelay(*command, cwd=tmp_path)
    assert again.returncode == 0 and "resuming out: 3 of 3 tasks already finished" in again.stderr
    assert len(results(tmp_path / "out")) == 3 and sum(ledger_runs(ledger).values()) == 3
    restarted = toolrelay(*command, "--restart", cwd=tmp_path)
    assert restarted.returncode == 0 and "resuming" not in restarted.stderr
    assert len(results(tmp_path / "out")) == 3 and sum(ledger_runs(ledger).values()) == 6


def test_exit_1_when_a_task_does_not_complete_or_a_line_is_skipped(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    tasks = write_tasks(tmp_path / "tasks.jsonl", [
        {"id": "short", "task": "Read the first 2 lines of a.txt", "max_turns": 1},
        {"id": "refused", "task": "Read the first 2 lines of b.txt"},
    ])
    done = toolrelay("batch", str(tasks), "--out", "out", "--model", "offline", "--config",
                     str(ledger_config(tmp_path, ledger)), cwd=tmp_path)
    assert done.returncode == 1
    by_id = {line["id"]: line for line in results(tmp_path / "out")}
    assert by_id["short"]["status"] == "max_turns" and "--max-turns 1" in by_id["short"]["error"]
    # without --yes a tool that is not read-only is refused (the model is told), never run
    assert by_id["refused"]["status"] == "completed" and by_id["refused"]["failed_calls"] == 1
    assert ledger_runs(ledger) == {}
    assert "tasks: 2 (1 completed, 1 max_turns)" in done.stdout
    skipping = write_tasks(tmp_path / "more.jsonl", [{"id": "ok", "task": "hi"}, "[1, 2]"])
    skipped = toolrelay("batch", str(skipping), "--out", "out2", "--model", "offline", cwd=tmp_path)
    assert skipped.returncode == 1
    assert f"{skipping}:2: expected an object" in skipped.stderr and "skipped: 1 line(s)" in skipped.stdout


def test_usage_errors_exit_2_and_servers_that_cannot_start_exit_3(tmp_path: Path) -> None:
    twice = write_tasks(tmp_path / "twice.jsonl", [{"id": "a", "task": "x"}, {"id": "a", "task": "y"}])
    duplicate = toolrelay("batch", str(twice), "--out", "out", "--model", "offline", cwd=tmp_path)
    assert duplicate.returncode == 2 and "task id 'a' is on line 1 and line 2" in duplicate.stderr
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "mine.txt").write_text("keep me")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "a", "task": "x"}])
    busy = toolrelay("batch", str(tasks), "--out", "busy", "--model", "offline", "--restart", cwd=tmp_path)
    assert busy.returncode == 2 and "holds files that are not a batch's" in busy.stderr
    assert (tmp_path / "busy" / "mine.txt").exists()
    (tmp_path / "blocked" / "batch.lock").mkdir(parents=True)  # the lock file cannot be made
    blocked = toolrelay("batch", str(tasks), "--out", "blocked", "--model", "offline", cwd=tmp_path)
    assert blocked.returncode == 2
    assert blocked.stderr == "toolrelay batch: error: cannot lock the batch folder blocked: Is a directory\n"
    config = tmp_path / "broken.json"
    config.write_text(json.dumps({"mcpServers": {"gone": {"command": "/nonexistent/server"}}}))
    broken = toolrelay("batch", str(tasks), "--out", "out3", "--model", "offline", "--config", str(config),
                       cwd=tmp_path)
    assert broken.returncode == 3, broken.stderr


def test_a_task_can_name_its_own_script_next_to_the_tasks_file(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    script = {"turns": [{"calls": [{"name": "ledger__peek", "arguments": {"path": "own.txt"}}]}]}
    (tmp_path / "scripts" / "peek.json").write_text(json.dumps(script))
    ledger = tmp_path / "ledger.jsonl"
    tasks = write_tasks(tmp_path / "tasks.jsonl", [
        {"id": "scripted", "task": "anything", "script": "scripts/peek.json"},
        {"id": "seed", "task": "Read the first 2 lines of seed.txt"},
    ])
    done = toolrelay("batch", str(tasks), "--out", "out", "--model", "offline", "--yes", "--config",
                     str(ledger_config(tmp_path, ledger)), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    by_id = {line["id"]: line for line in results(tmp_path / "out")}
    assert by_id["scripted"]["answer"] == "The tool returned:\ncontents of own.txt"
    assert by_id["seed"]["answer"] == "The tool returned:\ncontents of seed.txt"
