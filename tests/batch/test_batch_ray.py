"""``--engine ray`` on a real local Ray (2 CPUs, loopback only, one for the whole module):
the same batch as the local engine's, transcripts written by the workers or collected by
the driver, and a worker killed mid-call whose tasks go on elsewhere from their
transcripts, the server's ledger showing that no recorded call ran twice. The CLI starts
a Ray of its own and leaves no Ray process behind. Ray is installed when missing
(``testkit.ray_setup``). The collected batch runs in both model dialects (``--api chat``)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from batch_helpers import (
    CALL_IDS,
    ledger_config,
    ledger_runs,
    multi_call_paths,
    multi_call_tasks,
    reading_tasks,
    results,
    write_tasks,
)

import toolrelay
from conftest import CACHE, require_or_skip
from testkit.dialect import Dialect
from testkit.processes import command_line, live_children, spawned
from testkit.processes import run as run_process
from testkit.ray_setup import ensure_ray, start_local_ray
from testkit.transcripts import transcript_events
from toolrelay.batches import BatchOptions, TaskResult, ray_engine
from toolrelay.errors import UsageError
from toolrelay.relay.stages.consent import approve_all
from toolrelay.runner import RunOptions
from toolrelay.verify import load_run, verify


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    why = ensure_ray(CACHE)
    if why is not None:
        require_or_skip(why)
    ray = start_local_ray()
    try:
        yield ray
    finally:
        ray.shutdown()


def ledger_run(tmp_path: Path, *, delay: float = 0.0, api: str = "responses") -> tuple[RunOptions, Path]:
    ledger = tmp_path / "ledger.jsonl"
    return RunOptions(model="offline", config=ledger_config(tmp_path, ledger, delay=delay),
                      approve=approve_all, api=api), ledger  # type: ignore[arg-type]


def one_path(task_id: str) -> list[str]:
    return [f"{task_id}.txt"]


def check_every_task(
    out: Path, ledger: Path, count: int, paths: Callable[[str], list[str]] = one_path
) -> Counter[str]:
    """One result line per task, every transcript verifies, no call ran twice (a completed
    task's ``paths`` each once); statuses."""
    lines = results(out)
    assert sorted(line["id"] for line in lines) == sorted(f"t{i}" for i in range(1, count + 1))
    runs = ledger_runs(ledger)
    assert max(runs.values()) == 1, f"a call ran twice: {runs.most_common(3)}"
    for line in lines:
        verdict = verify(load_run(out / line["transcript"]))
        assert verdict.ok, (line["id"], verdict.broken)
        if line["status"] == "completed":
            assert verdict.finished and all(runs[path] == 1 for path in paths(line["id"]))
        else:  # its call was sent when its worker died, the answer never recorded
            assert line["status"] == "uncertain", line
            assert "ledger__read_text_file" in line["error"]
    return Counter(line["status"] for line in lines)


def test_a_batch_on_ray_runs_every_task_once_at_most_j_at_a_time(local_ray: Any, tmp_path: Path) -> None:
    run, ledger = ledger_run(tmp_path)
    in_flight: list[int] = [0]  # tasks started and not finished, after each start and each result

    async def drive() -> list[TaskResult]:
        options = BatchOptions(out=tmp_path / "out", run=run, concurrency=8, actors=2,
                               on_started=lambda _: in_flight.append(in_flight[-1] + 1))
        finished = []
        async for result in toolrelay.batch_async(reading_tasks(30), options, engine="ray"):
            finished.append(result)
            in_flight.append(in_flight[-1] - 1)
        return finished

    finished = asyncio.run(drive())
    assert len(finished) == 30 and all(result.completed for result in finished)
    assert check_every_task(tmp_path / "out", ledger, 30) == {"completed": 30}
    assert len({json.loads(line)["pid"] for line in ledger.read_text().splitlines()}) == 2  # both workers
    assert max(in_flight) == 8  # -j over both workers: filled, never passed


def test_tasks_sharing_a_worker_s_server_each_record_their_own_answers(
    local_ray: Any, tmp_path: Path
) -> None:
    """One worker, eight tasks at once on its one server, three calls each, named call_1,
    call_2, call_3 in every task: each answer goes to its own task's transcript."""
    run, ledger = ledger_run(tmp_path, delay=0.02)
    tasks = write_tasks(tmp_path / "tasks.jsonl", multi_call_tasks(tmp_path, 16, CALL_IDS[1]))
    options = BatchOptions(out=tmp_path / "out", run=run, concurrency=8, actors=1)
    finished = list(toolrelay.batch(tasks, options, engine="ray"))
    assert len(finished) == 16 and all(result.calls == 3 for result in finished)
    assert check_every_task(tmp_path / "out", ledger, 16, multi_call_paths) == {"completed": 16}


def test_collect_sends_each_transcript_back_to_the_driver(
    local_ray: Any, tmp_path: Path, dialect: Dialect
) -> None:
    run, ledger = ledger_run(tmp_path, api=dialect.api)
    options = BatchOptions(out=tmp_path / "out", run=run, concurrency=4, actors=1, collect=True)
    finished = list(toolrelay.batch(reading_tasks(6), options, engine="ray"))
    assert all(result.completed for result in finished)
    assert check_every_task(tmp_path / "out", ledger, 6) == {"completed": 6}
    for line in results(tmp_path / "out"):
        events = transcript_events(tmp_path / "out" / line["transcript"])
        sent = [e for e in events if e["kind"] == "model_request"]
        assert [e["dialect"] for e in sent] == [dialect.api] * 2, line["id"]
        for event in sent:
            dialect.check(event["body"])


def worker_of_a_running_call(ledger: Path, timeout: float = 60) -> int:
    """The pid of the Ray worker whose MCP server is in a call now (the ledger's first line
    is written as the call arrives; the server then holds it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ledger.exists() and (lines := ledger.read_text().splitlines()):
            server = json.loads(lines[-1])["pid"]
            stat = Path(f"/proc/{server}/stat").read_text().rpartition(")")[2].split()
            return int(stat[1])
        time.sleep(0.02)
    raise AssertionError(f"no call started in {timeout} s")


def test_a_killed_worker_s_tasks_resume_on_another_without_repeating_a_call(
    local_ray: Any, tmp_path: Path
) -> None:
    run, ledger = ledger_run(tmp_path, delay=1.0)  # each call held a second: the kill lands mid-call
    options = BatchOptions(out=tmp_path / "out", run=run, concurrency=6, actors=2)
    finished = toolrelay.batch(reading_tasks(12), options, engine="ray")
    first = next(finished)
    worker = worker_of_a_running_call(ledger)
    os.kill(worker, signal.SIGKILL)
    rest = list(finished)
    assert len([first, *rest]) == 12
    statuses = check_every_task(tmp_path / "out", ledger, 12)
    assert statuses["uncertain"] >= 1, "the calls in flight on the killed worker are not sent again"
    assert statuses["completed"] + statuses["uncertain"] == 12


def test_a_task_whose_worker_keeps_dying_ends_with_an_error(
    local_ray: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ray_engine, "MAX_LOST_WORKERS", 1)  # given up at the first loss
    run, ledger = ledger_run(tmp_path, delay=1.0)
    options = BatchOptions(out=tmp_path / "out", run=run, concurrency=4, actors=1)
    finished: list[TaskResult] = []
    batch = threading.Thread(target=lambda: finished.extend(toolrelay.batch(reading_tasks(4), options,
                                                                             engine="ray")))
    batch.start()
    os.kill(worker_of_a_running_call(ledger), signal.SIGKILL)
    batch.join(120)
    lost = [result for result in finished if result.status == "error"]
    assert lost and all(result.error == "its Ray worker was lost 1 times; run the batch again to resume it"
                        for result in lost)


def test_a_local_ray_that_is_not_on_loopback_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    stopped: list[bool] = []
    fake = SimpleNamespace(
        is_initialized=lambda: False, init=lambda **_: None, shutdown=lambda: stopped.append(True),
        util=SimpleNamespace(get_node_ip_address=lambda: "192.0.2.2"),
    )
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(ray_engine, "import_ray", lambda local=False: fake)
    refused = re.escape("the local Ray did not bind to 127.0.0.1; not running the batch on it")

    async def connect() -> None:
        async with ray_engine.ray_cluster(None):
            pass

    with pytest.raises(UsageError, match=refused):
        asyncio.run(connect())
    assert stopped == [True]


def test_an_address_ray_cannot_use_is_a_usage_error(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", reading_tasks(1))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RAY_"))}
    command = [sys.executable, "-m", "toolrelay", "batch", str(tasks), "--out", "out", "--model", "offline",
               "--engine", "ray", "--ray-address", "not-an-address"]
    done = run_process(command, cwd=tmp_path, env=env, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == ("toolrelay batch: error: cannot connect to Ray at not-an-address: "
                                   "Invalid address format: not-an-address")


def test_without_ray_the_engine_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if it were not installed
    run, _ = ledger_run(tmp_path)
    with pytest.raises(UsageError, match=r"--engine ray needs Ray: pip install 'toolrelay\[ray\]'"):
        list(toolrelay.batch(reading_tasks(1), BatchOptions(out=tmp_path / "out", run=run), engine="ray"))


def test_the_cli_starts_its_own_ray_and_leaves_no_ray_process(local_ray: Any, tmp_path: Path) -> None:
    """... and with --quiet, says nothing on stderr: nor does Ray (its token note)."""
    tasks = write_tasks(tmp_path / "tasks.jsonl", reading_tasks(4))
    ledger = tmp_path / "ledger.jsonl"
    before = live_children()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RAY_"))}
    command = [sys.executable, "-m", "toolrelay", "batch", str(tasks), "--out", "out", "--model", "offline",
               "--config", str(ledger_config(tmp_path, ledger)), "--yes", "--engine", "ray", "--actors", "2",
               "--quiet"]
    with spawned(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                 text=True) as batch:
        out, err = batch.communicate(timeout=180)
        assert batch.returncode == 0, err
        assert err == ""
        assert "tasks: 4 (4 completed)" in out
        # Ray's own start-up is said apart from the tasks' time (the bench's throughput after it)
        assert re.search(r"\nengine start-up: \d+\.\d\d s before the first task started\n", out), out
        deadline = time.monotonic() + 10
        while (left := live_children() - before) and time.monotonic() < deadline:
            time.sleep(0.1)  # orphans come to this process (a subreaper); Ray's take a moment to exit
        assert not left, [command_line(pid) for pid in left]
    assert check_every_task(tmp_path / "out", ledger, 4) == {"completed": 4}
