"""The progress of a batch: one redrawn bar on a terminal, a line per task elsewhere."""

from __future__ import annotations

import io

from toolrelay.batches import TaskResult, TaskSpec
from toolrelay.cli.batch_progress import BatchProgress


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
