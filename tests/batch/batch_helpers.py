"""Helpers for the batch tests: a workspace, tasks files, configs, and reading a batch folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from testkit.processes import run
from testkit.servers import LEDGER_SERVER, TOOLBOX_SERVER


def toolrelay(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it: no model key, no terminal."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AZURE_OPENAI_", "RAY_"))}
    return run([sys.executable, "-m", "toolrelay", *args], cwd=cwd, text=True, timeout=timeout, env=env)


def write_tasks(path: Path, rows: list[dict[str, Any] | str]) -> Path:
    """A tasks file: each row a JSON line (a string is written as it is, for bad lines)."""
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows))
    return path


def reading_tasks(count: int, *, prefix: str = "t") -> list[dict[str, Any]]:
    """Tasks the stand-in answers with one read_text_file call each, on the task's own file."""
    return [{"id": f"{prefix}{i}", "task": f"Read the first 2 lines of {prefix}{i}.txt"}
            for i in range(1, count + 1)]


CALL_IDS = ("stand-in ids", "call_1 in every task")
"""How the multi-call tasks' calls are named: the stand-in numbers each task's calls from
``call_offline_0001`` (so ids repeat across tasks), or every task's script says ``call_1``,
``call_2``, ``call_3``, as a real endpoint may."""


def multi_call_tasks(folder: Path, count: int, call_ids: str) -> list[dict[str, Any]]:
    """Tasks of three ledger calls each (two at once, then one), each task its own script;
    their paths are ``multi_call_paths(id)``."""
    rows = []
    for i in range(1, count + 1):
        task_id = f"t{i}"
        calls = [{"name": "ledger__read_text_file", "arguments": {"path": path}}
                 for path in multi_call_paths(task_id)]
        if call_ids != CALL_IDS[0]:
            for number, call in enumerate(calls, 1):
                call["call_id"] = f"call_{number}"
        script = {"turns": [{"calls": calls[:2]}, {"calls": calls[2:]}]}  # then it quotes the last output
        (folder / f"{task_id}.script.json").write_text(json.dumps(script))
        rows.append({"id": task_id, "task": f"Read the files of {task_id}",
                     "script": f"{task_id}.script.json"})
    return rows


def multi_call_paths(task_id: str) -> list[str]:
    return [f"{task_id}-{part}.txt" for part in ("a", "b", "c")]


def ledger_config(folder: Path, ledger: Path, *, delay: float = 0.0) -> Path:
    """A config with the ledger server (``testkit/servers/ledger_server.py``) alone."""
    args = [str(LEDGER_SERVER), "--ledger", str(ledger), "--delay", str(delay)]
    config = folder / "ledger.json"
    config.write_text(json.dumps({"mcpServers": {"ledger": {"command": sys.executable, "args": args}}}))
    return config


def toolbox_config(folder: Path) -> Path:
    config = folder / "toolbox.json"
    config.write_text(json.dumps({"mcpServers": {"toolbox": {"command": sys.executable,
                                                             "args": [str(TOOLBOX_SERVER)]}}}))
    return config


def ledger_runs(ledger: Path) -> Counter[str]:
    """How many times the server ran each path's call."""
    if not ledger.exists():
        return Counter()
    return Counter(json.loads(line)["path"] for line in ledger.read_text().splitlines() if line)


def results(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def transcript(out: Path, task_id: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "transcripts" / f"{task_id}.jsonl").read_text().splitlines()]
