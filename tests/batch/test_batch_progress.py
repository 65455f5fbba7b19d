"""The progress of a batch: one redrawn bar on a terminal, a line per task elsewhere."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from batch_helpers import ledger_config, reading_tasks

import toolrelay
from toolrelay.batches import BatchOptions, TaskResult, TaskSpec
from toolrelay.cli.batch_progress import BatchProgress
from toolrelay.relay.stages.consent import approve_all
from toolrelay.runner import RunOptions


def test_a_terminal_gets_one_redrawn_line_with_counts_rate_and_eta() -> None:
    shown = io.StringIO()
    progress = BatchProgress(3, shown, bar=True)
    for n in range(3):
        progress.started(TaskSpec(id=f"t{n}", task="x"))
    progress.finished(TaskResult(id="t0", status="completed", duration=0.1))
    progress.finished(TaskResult(id="t1", status="max_turns", duration=0.1))
    progress.finished(TaskResult(id="t2", status="completed", duration=0.1))
    progress.close()
    text = shown.getvalue()
    assert "\n" not in text.rstrip("\n")  # redrawn in place (\r), never a new line per task
    last = text.rsplit("\r", 1)[1]
    assert "3/3 done · 1 not completed · 0 running" in last and "/s · in 0:0" in last


def test_elsewhere_each_task_gets_a_line_saying_how_it_ended() -> None:
    shown = io.StringIO()
    progress = BatchProgress(2, shown, bar=False)
    progress.finished(TaskResult(id="a", status="completed", turns=2, calls=1, duration=0.25))
    progress.finished(TaskResult(id="b", status="error", turns=1, duration=1.5, error="unreachable\nmore"))
    assert shown.getvalue().splitlines() == [
        "[1/2] a completed · 2 turns, 1 call · 0.25 s",
        "[2/2] b error · 1 turn, 0 calls · 1.50 s · unreachable",
    ]


def test_the_running_count_never_passes_j(tmp_path: Path) -> None:
    """The count the bar shows, fed by a real batch at -j 2: a worker's next task is told
    started only after its last one was told finished (it once showed "3 running")."""
    progress = BatchProgress(8, io.StringIO(), bar=True)
    shown: list[int] = []

    def started(spec: TaskSpec) -> None:
        progress.started(spec)
        shown.append(progress.running)

    async def drive() -> None:
        run = RunOptions(model="offline", config=ledger_config(tmp_path, tmp_path / "ledger.jsonl"),
                         approve=approve_all)
        options = BatchOptions(out=tmp_path / "out", run=run, concurrency=2, on_started=started)
        async for result in toolrelay.batch_async(reading_tasks(8), options):
            progress.finished(result)

    asyncio.run(drive())
    assert progress.done == 8 and progress.running == 0
    assert max(shown) == 2, shown
