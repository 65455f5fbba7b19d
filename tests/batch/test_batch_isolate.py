"""``"toolrelay": {"isolate": true}``: in a batch, that server is started once per task (its
start-up recorded in the task's transcript) while the other servers stay shared."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from batch_helpers import ledger_runs, reading_tasks, results, toolrelay, write_tasks

from testkit.servers import LEDGER_SERVER, MINIMAL_ECHO_SERVER
from toolrelay.verify import load_run, verify


def test_an_isolated_server_gets_one_instance_per_task_and_the_others_stay_shared(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    servers = {
        "ledger": {"command": sys.executable, "args": [str(LEDGER_SERVER), "--ledger", str(ledger)],
                   "toolrelay": {"isolate": True}},
        "echo": {"command": sys.executable, "args": [str(MINIMAL_ECHO_SERVER)]},
    }
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    tasks = write_tasks(tmp_path / "tasks.jsonl", reading_tasks(4))
    done = toolrelay("batch", str(tasks), "--out", "out", "--model", "offline", "--config", "mcp.json",
                     "-j", "2", "--yes", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert len({row["pid"] for row in rows}) == 4  # a server process of its own for each task
    assert ledger_runs(ledger) == {f"t{i}.txt": 1 for i in range(1, 5)}
    for line in results(tmp_path / "out"):
        assert line["status"] == "completed"
        path = tmp_path / "out" / line["transcript"]
        verdict = verify(load_run(path))
        assert verdict.ok and verdict.finished, verdict
        events = [json.loads(text) for text in path.read_text().splitlines()]
        started = [e["server"] for e in events if e["kind"] == "server_starting"]
        assert sorted(started) == ["echo", "ledger"]  # the shared one's start-up too, and its own


def test_isolate_must_be_true_or_false(tmp_path: Path) -> None:
    server = {"command": sys.executable, "args": [str(MINIMAL_ECHO_SERVER)], "toolrelay": {"isolate": "yes"}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"echo": server}}))
    tasks = write_tasks(tmp_path / "tasks.jsonl", reading_tasks(1))
    done = toolrelay("batch", str(tasks), "--out", "out", "--model", "offline", "--config", "mcp.json",
                     cwd=tmp_path)
    assert done.returncode == 2
    assert "server 'echo', toolrelay.isolate: must be true or false, got 'yes'" in done.stderr
