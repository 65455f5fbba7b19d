"""``toolrelay.batch(tasks, options)``: results as they finish, the same folder as the CLI's;
closing the iterator early stops the batch; the run options' ``on_event`` hears each task's
events with its task id (the Ray engine says it cannot)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from batch_helpers import ledger_config, ledger_runs, reading_tasks, results, transcript

import toolrelay
from toolrelay.batches import BatchOptions
from toolrelay.errors import UsageError
from toolrelay.relay.run_events import RunEvent
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


def test_the_runs_on_event_hears_every_tasks_events_with_its_task_id(tmp_path: Path) -> None:
    """Two tasks at once: each event carries its task's id, and each task's events are its
    own (its call reads its own file and is its transcript's call, its RunFinished is its result)."""
    ledger = tmp_path / "ledger.jsonl"
    heard: list[RunEvent] = []
    run = RunOptions(model="offline", config=ledger_config(tmp_path, ledger), approve=approve_all,
                     on_event=heard.append)
    finished = {r.id: r for r in toolrelay.batch(reading_tasks(2), BatchOptions(out=tmp_path / "out", run=run,
                                                                                concurrency=2))}
    assert {event.task_id for event in heard} == {"t1", "t2"}
    for task_id, result in finished.items():
        mine = [event for event in heard if event.task_id == task_id]
        [started] = [e for e in mine if isinstance(e, toolrelay.CallStarted)]
        assert json.loads(started.arguments)["path"] == f"{task_id}.txt"
        [ended] = [e for e in mine if isinstance(e, toolrelay.CallFinished)]
        events = transcript(tmp_path / "out", task_id)
        recorded = [e["outcome"] for e in events if e["kind"] == "call_outcome"]
        assert [(o["call_id"], o["status"]) for o in recorded] == [(ended.outcome.call_id, "ok")]
        last = mine[-1]
        assert isinstance(last, toolrelay.RunFinished) and last.result.final_text == result.answer
        assert [e.turn for e in mine if isinstance(e, toolrelay.TurnFinished)] == [1, 2]


def test_the_ray_engine_says_it_cannot_deliver_on_event(tmp_path: Path) -> None:
    run = RunOptions(model="offline", on_event=lambda event: None)
    with pytest.raises(UsageError) as refused:
        list(toolrelay.batch(reading_tasks(1), BatchOptions(out=tmp_path / "out", run=run), engine="ray"))
    assert str(refused.value) == (
        "RunOptions.on_event is not told the events of tasks run by Ray workers (they run in other "
        "processes): use the local engine to watch them as they happen, or read each task's transcript "
        "and results.jsonl")
    assert not list((tmp_path / "out" / "transcripts").iterdir())  # refused before any task ran
