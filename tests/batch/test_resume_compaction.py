"""A batch task stopped right after a response whose ``compaction`` item later inputs start
from: the resumed run applies the compaction (its next request starts from the item) and
writes the ``compaction`` record the stopped run never did, once (a run stopped after the
record does not write it again); the whole transcript verifies, ``explain`` shows the
boundary and ``view`` draws it. A copy without the record is rejected: every boundary must
be recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from batch_helpers import ledger_config, ledger_runs

import toolrelay
from toolrelay.batches import BatchOptions
from toolrelay.relay.stages.consent import approve_all
from toolrelay.runner import RunOptions
from toolrelay.verify import load_run, verify
from toolrelay.verify.explain import explain
from toolrelay.view.build import build_trace

SCRIPT = {"turns": [
    {"calls": [{"name": "ledger__read_text_file", "arguments": {"path": "a"}}]},
    {"calls": [{"name": "ledger__read_text_file", "arguments": {"path": "b"}}], "compact": True},
    {"calls": [{"name": "ledger__read_text_file", "arguments": {"path": "c"}}]},
    {"message": "done"},
]}
TASK = [{"id": "x", "task": "read a, b and c"}]


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _full_run(tmp_path: Path) -> tuple[RunOptions, list[str], Path]:
    ledger = tmp_path / "ledger.jsonl"
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    run = RunOptions(model="offline", script=tmp_path / "script.json", config=ledger_config(tmp_path, ledger),
                     approve=approve_all, compact_at=100_000)
    (done,) = toolrelay.batch(TASK, BatchOptions(out=tmp_path / "full", run=run))
    assert done.completed
    recorded = tmp_path / "full" / "transcripts" / "x.jsonl"
    lines = recorded.read_text(encoding="utf-8").splitlines(keepends=True)
    return run, lines, ledger


def _line_of(lines: list[str], kind: str, turn: int) -> int:
    return next(n for n, line in enumerate(lines)
                if (e := json.loads(line))["kind"] == kind and e.get("turn") == turn)


@pytest.mark.parametrize("after", ["model_response", "compaction"])
def test_a_task_resumed_after_its_compacting_response_records_the_compaction_once(
    tmp_path: Path, after: str
) -> None:
    run, lines, ledger = _full_run(tmp_path)
    cut = _line_of(lines, after, 2) + 1  # killed right after this line
    out = tmp_path / "cut"
    (out / "transcripts").mkdir(parents=True)
    (out / "transcripts" / "x.jsonl").write_text("".join(lines[:cut]), encoding="utf-8")
    ledger.unlink()
    (result,) = toolrelay.batch(TASK, BatchOptions(out=out, run=run))
    assert result.status == "completed", result
    assert set(ledger_runs(ledger)) == {"b", "c"}  # the recorded turn 2 is finished, not asked again
    events = _events(out / "transcripts" / "x.jsonl")
    records = [(e["turn"], e["dropped"]) for e in events if e["kind"] == "compaction"]
    assert records == [(2, 3)]
    resumed = next(n for n, e in enumerate(events) if e["kind"] == "run_resumed")
    request_3 = next(e for e in events if e["kind"] == "model_request" and e.get("turn") == 3)
    assert request_3["body"]["input"][0]["type"] == "compaction"
    if after == "model_response":  # written by the resumed run, before its first request
        [at] = [n for n, e in enumerate(events) if e["kind"] == "compaction"]
        assert resumed < at < events.index(request_3)
    transcript = out / "transcripts" / "x.jsonl"
    verdict = verify(load_run(transcript))
    assert verdict.ok, [f.message for f in verdict.broken_findings()]
    assert "compaction at turn 2, 3 items dropped (request 3 starts from the compaction item)" \
        in explain(load_run(transcript), verdict)
    drawn = [row.label for row in build_trace(events).rows() if row.stage == "compaction"]
    assert drawn == ["compaction at turn 2, 3 items dropped"]


def test_a_copy_without_its_compaction_record_is_rejected(tmp_path: Path) -> None:
    _, lines, _ = _full_run(tmp_path)
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(line for line in lines if json.loads(line)["kind"] != "compaction"),
                        encoding="utf-8")
    failed = [f.message for f in verify(load_run(tampered)).broken_findings()]
    assert ("request 3 leaves out 3 item(s) at the compaction of turn 2, but no compaction record says "
            "so: the run must record each boundary") in failed, failed
