"""``toolrelay.batch(tasks, options)``: results as they finish, the same folder as the CLI's;
closing the iterator early stops the batch."""

from __future__ import annotations

from pathlib import Path

from batch_helpers import ledger_config, ledger_runs, reading_tasks, results

import toolrelay
from toolrelay.batches import BatchOptions
from toolrelay.relay.stages.consent import approve_all
from toolrelay.runner import RunOptions


def test_the_library_yields_each_result_as_it_finishes(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    run = RunOptions(model="offline", config=ledger_config(tmp_path, ledger), approve=approve_all)
    options = BatchOptions(out=tmp_path / "out", run=run, concurrency=2)
    finished = list(toolrelay.batch(reading_tasks(4), options))
    assert sorted(result.id for result in finished) == ["t1", "t2", "t3", "t4"]
    assert all(result.completed and result.calls == 1 for result in finished)
    assert [line["id"] for line in results(tmp_path / "out")] == [result.id for result in finished]
    assert sum(ledger_runs(ledger).values()) == 4


def test_closing_the_iterator_early_stops_the_batch(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    run = RunOptions(model="offline", config=ledger_config(tmp_path, ledger), approve=approve_all)
    options = BatchOptions(out=tmp_path / "out", run=run, concurrency=1)
    with_results = toolrelay.batch(reading_tasks(50), options)
    first = next(with_results)
    with_results.close()  # the server is stopped before close() returns (the leftover check sees)
    assert first.completed
    assert len(results(tmp_path / "out")) < 50
