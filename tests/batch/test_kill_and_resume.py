"""The proof: a batch killed mid-way (kill -9, Ctrl-C) and run again finishes every task,
and the MCP server's own ledger shows that no call whose result was recorded ran twice;
a call sent without a recorded answer is never sent again (its task ends ``uncertain``).
Also: each tools/call request is in the transcript before the server receives it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
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

import toolrelay as toolrelay_api
from testkit.processes import kill_tree, spawned
from toolrelay.batches import BatchOptions
from toolrelay.errors import BatchFolderInUse
from toolrelay.runner import RunOptions
from toolrelay.transcript.reader import read_transcript
from toolrelay.verify import load_run, verify

TASKS = 40


def wait_for_results(out: Path, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = out / "results.jsonl"
        if done.exists() and done.read_text().count("\n") >= count:
            return
        time.sleep(0.02)
    raise AssertionError(f"fewer than {count} tasks finished in {timeout} s")


ONE_CALL = "one call each"
WORKLOADS = (ONE_CALL, f"three calls each, {CALL_IDS[1]}")
"""The tasks of the batch: the stand-in's one call each (``call_offline_0001`` in every
task), or three calls each on the one shared server, their call_ids the same in every task."""


def task_paths(workload: str, task_id: str) -> list[str]:
    """The ledger paths of a task's calls."""
    return [f"{task_id}.txt"] if workload == ONE_CALL else multi_call_paths(task_id)


def batch_command(tmp_path: Path, ledger: Path, workload: str = ONE_CALL) -> list[str]:
    rows = reading_tasks(TASKS) if workload == ONE_CALL else \
        multi_call_tasks(tmp_path, TASKS, workload.removeprefix("three calls each, "))
    tasks = write_tasks(tmp_path / "tasks.jsonl", rows)
    config = ledger_config(tmp_path, ledger, delay=0.05)
    return [sys.executable, "-m", "toolrelay", "batch", str(tasks), "--out", "out", "--model", "offline",
            "--config", str(config), "--yes", "-j", "8"]


def check_the_whole_batch(tmp_path: Path, ledger: Path, workload: str = ONE_CALL) -> Counter[str]:
    """Every task has exactly one result line and a transcript verify accepts; no call ran
    twice, and none was lost: a completed task's calls each ran once."""
    out = tmp_path / "out"
    lines = results(out)
    assert sorted(line["id"] for line in lines) == sorted(f"t{i}" for i in range(1, TASKS + 1))
    runs = ledger_runs(ledger)
    assert max(runs.values()) == 1, f"a call ran twice: {runs.most_common(3)}"
    for line in lines:
        verdict = verify(load_run(out / line["transcript"]))
        assert verdict.ok, (line["id"], verdict.broken)
        paths = task_paths(workload, line["id"])
        if line["status"] == "completed":
            assert verdict.finished and [runs[path] for path in paths] == [1] * len(paths)
        else:  # sent before the kill, its answer never recorded: not sent again
            assert line["status"] == "uncertain", line
            assert "sent, its answer never recorded" in line["error"]
            assert "ledger__read_text_file" in line["error"]
    return Counter(line["status"] for line in lines)


@pytest.mark.parametrize("workload", WORKLOADS)
def test_a_batch_killed_mid_way_resumes_without_running_a_recorded_call_twice(
    tmp_path: Path, workload: str
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    command = batch_command(tmp_path, ledger, workload)
    with spawned(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as batch:
        wait_for_results(tmp_path / "out", 10)
        kill_tree(batch)  # kill -9: the batch and its server, mid-way
    before = results(tmp_path / "out")
    assert 10 <= len(before) < TASKS
    again = toolrelay(*command[3:], cwd=tmp_path)
    assert again.returncode in (0, 1), again.stderr
    assert f"resuming out: {len(before)} of {TASKS} tasks already finished" in again.stderr
    statuses = check_the_whole_batch(tmp_path, ledger, workload)
    assert statuses["completed"] >= TASKS - 8  # at most the tasks in flight are uncertain
    assert again.returncode == (0 if statuses["uncertain"] == 0 else 1)


def test_ctrl_c_stops_a_batch_that_the_same_command_resumes(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    command = batch_command(tmp_path, ledger)
    with spawned(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as batch:
        wait_for_results(tmp_path / "out", 5)
        os.killpg(batch.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole group
        assert batch.wait(60) == 130
    aborted = [line for line in (tmp_path / "out" / "transcripts").glob("*.jsonl")
               if '"status": "aborted"' in line.read_text()]
    assert aborted, "the tasks in flight record their interruption"
    again = toolrelay(*command[3:], cwd=tmp_path)
    assert again.returncode in (0, 1), again.stderr
    check_the_whole_batch(tmp_path, ledger)


def test_a_tools_call_is_in_the_transcript_before_its_server_receives_it(tmp_path: Path) -> None:
    transcript = tmp_path / "out" / "transcripts" / "look.jsonl"
    call = {"name": "ledger__recorded", "arguments": {"transcript": str(transcript)}}
    script = {"turns": [{"calls": [call]}]}
    (tmp_path / "script.json").write_text(json.dumps(script))
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "look", "task": "x", "script": "script.json"}])
    done = toolrelay("batch", str(tasks), "--out", "out", "--model", "offline", "--config",
                     str(ledger_config(tmp_path, tmp_path / "ledger.jsonl")), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (line,) = results(tmp_path / "out")
    assert line["answer"] == "The tool returned:\n1"  # the server found its own request on disk


def test_what_came_in_is_in_the_transcript_before_the_next_request_goes_out(tmp_path: Path) -> None:
    """A batch task's transcript holds back what came in (answers, outcomes) until the next
    line that must be on disk at once: each request going out takes them to disk first."""
    transcript = tmp_path / "out" / "transcripts" / "look.jsonl"
    def recorded(**kind: str) -> dict[str, object]:
        return {"name": "ledger__recorded", "arguments": {"transcript": str(transcript), **kind}}

    turns = [recorded(), recorded(kind="call_outcome"), recorded(kind="feedback")]
    script = {"turns": [{"calls": [call]} for call in turns]}
    (tmp_path / "script.json").write_text(json.dumps(script))
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "look", "task": "x", "script": "script.json"}])
    done = toolrelay("batch", str(tasks), "--out", "out", "--model", "offline", "--config",
                     str(ledger_config(tmp_path, tmp_path / "ledger.jsonl")), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    answers = [line["message"]["result"]["content"][0]["text"] for line in read_transcript(transcript).events
               if line["kind"] == "mcp_response" and line["method"] == "tools/call"]
    assert answers == ["1", "1", "2"]  # its own request; the outcome, the feedback of the calls before


def wait_for_ledger(ledger: Path, path: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ledger_runs(ledger)[path]:
            return
        time.sleep(0.02)
    raise AssertionError(f"the call on {path} did not reach the server in {timeout} s")


def test_a_second_batch_on_the_same_folder_is_refused_until_the_first_is_gone(tmp_path: Path) -> None:
    """While a batch runs, another on its --out (even --restart) exits 2 naming it and
    touches nothing, and the library raises the same; once the first is killed -9, the
    folder is free and the same command resumes it."""
    ledger = tmp_path / "ledger.jsonl"
    rows = []
    for task_id, tool in (("quick", "peek"), ("held", "read_text_file"), ("last", "peek")):
        call = {"name": f"ledger__{tool}", "arguments": {"path": f"{task_id}.txt"}}
        script = {"turns": [{"calls": [call]}]}
        (tmp_path / f"{task_id}.json").write_text(json.dumps(script))
        rows.append({"id": task_id, "task": "x", "script": f"{task_id}.json"})
    tasks = write_tasks(tmp_path / "tasks.jsonl", rows)
    config = ledger_config(tmp_path, ledger, delay=30)  # the held call stays in the server
    command = ["batch", str(tasks), "--out", "out", "--model", "offline", "--config", str(config), "--yes",
               "-j", "1"]
    with spawned([sys.executable, "-m", "toolrelay", *command], cwd=tmp_path, stdout=subprocess.DEVNULL,
                 stderr=subprocess.DEVNULL) as first:
        wait_for_ledger(ledger, "held.txt")  # "quick" is finished, "held" is in its call
        second = toolrelay(*command, "--restart", cwd=tmp_path)
        assert second.returncode == 2
        assert second.stderr == (f"toolrelay batch: error: out is in use by another batch (pid {first.pid}); "
                                 "wait for it or use another --out\n")
        assert [line["id"] for line in results(tmp_path / "out")] == ["quick"]  # not deleted, not trimmed
        options = BatchOptions(out=tmp_path / "out", run=RunOptions(model="offline", config=config))
        with pytest.raises(BatchFolderInUse, match=r"/out is in use by another batch \(pid \d+\)") as refused:
            list(toolrelay_api.batch(tasks, options))
        assert refused.value.pid == first.pid
        assert first.poll() is None
        kill_tree(first)  # kill -9: its lock goes with it
    again = toolrelay(*command, cwd=tmp_path)
    assert again.returncode == 1, again.stderr  # "held" was sent, its answer never recorded
    assert "toolrelay batch: resuming out: 1 of 3 tasks already finished\n" in again.stderr
    by_id = {line["id"]: line for line in results(tmp_path / "out")}
    assert {task_id: line["status"] for task_id, line in by_id.items()} == \
        {"quick": "completed", "held": "uncertain", "last": "completed"}
    assert ledger_runs(ledger) == {"quick.txt": 1, "held.txt": 1, "last.txt": 1}  # the refused ran none
    for line in by_id.values():
        assert verify(load_run(tmp_path / "out" / line["transcript"])).ok
