"""Resume from every point a run can be stopped at: the transcript of a finished task cut
after each line (the last one half written, as a kill leaves it), then the batch run again.
Each time the run goes on and verify accepts the whole transcript, the server runs only
the calls whose answers the cut-off transcript does not hold, and none twice; a call that
is not read-only and was sent without a recorded answer ends the task ``uncertain``. The
replayed run resumes in both model dialects (``--api chat``: every second cut, to stay quick)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from batch_helpers import ledger_config, ledger_runs

import toolrelay
from testkit.dialect import Dialect
from toolrelay.batches import BatchOptions
from toolrelay.offline import OfflineModel, parse_script
from toolrelay.relay.stages.consent import approve_all
from toolrelay.runner import RunOptions
from toolrelay.verify import load_run, verify

SCRIPT = {"turns": [
    {"reasoning": "two files", "calls": [{"name": "ledger__read_text_file", "arguments": {"path": "a"}},
                                         {"name": "ledger__peek", "arguments": {"path": "b"}}]},
    {"calls": [{"name": "ledger__read_text_file", "arguments": {"path": "c"}}]},
    {"message": "done"},
]}
TASK = [{"id": "x", "task": "read a, b and c"}]


def answered_paths(lines: list[str]) -> set[str]:
    """The paths of the calls whose tools/call answer the (cut) transcript holds."""
    events = [json.loads(line) for line in lines if line.endswith("\n")]
    paths = {e["call_id"]: json.loads(e["arguments_text"])["path"]
             for e in events if e["kind"] == "call_parsed"}
    return {paths[e["call_id"]] for e in events
            if e["kind"] == "mcp_response" and e.get("method") == "tools/call" and e["call_id"] in paths}


def run_end_usage(out: Path) -> object:
    events = [json.loads(line) for line in (out / "transcripts" / "x.jsonl").read_text().splitlines()]
    return [e for e in events if e["kind"] == "run_end"][-1]["usage"]


def resume_after_each_line(tmp_path: Path, run: RunOptions, ledger: Path, step: int) -> list[str]:
    finished = list(toolrelay.batch(TASK, BatchOptions(out=tmp_path / "full", run=run)))
    assert finished[0].completed
    lines = (tmp_path / "full" / "transcripts" / "x.jsonl").read_text().splitlines(keepends=True)
    seen: list[str] = []
    for cut in range(0, len(lines), step):  # 0: killed while writing its first line
        out = tmp_path / f"cut{cut}"
        (out / "transcripts").mkdir(parents=True)
        kept = lines[:cut]
        (out / "transcripts" / "x.jsonl").write_text("".join(kept) + lines[cut][: len(lines[cut]) // 2])
        ledger.unlink(missing_ok=True)
        (result,) = toolrelay.batch(TASK, BatchOptions(out=out, run=run))
        ran, before = ledger_runs(ledger), answered_paths(kept)
        verdict = verify(load_run(out / "transcripts" / "x.jsonl"))
        where = f"cut after line {cut} ({json.loads(lines[cut - 1])['kind'] if cut else 'none'})"
        assert verdict.ok, (where, verdict.broken)
        assert all(count == 1 for count in ran.values()), (where, ran)
        assert not set(ran) & before, f"{where}: a call with a recorded answer ran again: {ran}"
        if result.status == "completed":
            assert verdict.finished and set(ran) | before == {"a", "b", "c"}, (where, ran, before)
            # the resumed run's usage goes on from the recorded turns': run_end says the task's
            assert run_end_usage(out) == result.usage != {}, where
        else:
            assert result.status == "uncertain" and not ran, (where, result)
        seen.append(result.status)
        shutil.rmtree(out)
    return seen


def test_a_replayed_run_resumes_from_every_point(tmp_path: Path, dialect: Dialect) -> None:
    ledger = tmp_path / "ledger.jsonl"
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT))
    run = RunOptions(model="offline", script=tmp_path / "script.json", config=ledger_config(tmp_path, ledger),
                     approve=approve_all, api=dialect.api)  # type: ignore[arg-type]
    step = 2 if dialect.chat else 1
    seen = resume_after_each_line(tmp_path, run, ledger, step=step)
    assert seen.count("uncertain") >= (1 if dialect.chat else 2) and seen.count("completed") > 40 / step
    recorded = (tmp_path / "full" / "transcripts" / "x.jsonl").read_text().splitlines()
    full = [json.loads(line) for line in recorded]
    assert {e["dialect"] for e in full if e["kind"] == "model_request"} == {dialect.api}


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_a_chained_run_resumes_from_every_point(tmp_path: Path, stream: bool) -> None:
    """Chain mode continues from the recorded previous_response_id: the endpoint (one
    stand-in outliving the batches here, as a hosted API does) still has it."""
    ledger = tmp_path / "ledger.jsonl"
    with OfflineModel(parse_script(SCRIPT)) as model:
        run = RunOptions(model="stand-in", base_url=model.base_url, chain=True, stream=stream,
                         config=ledger_config(tmp_path, ledger), approve=approve_all)
        seen = resume_after_each_line(tmp_path, run, ledger, step=3 if stream else 1)
    assert "completed" in seen and "uncertain" in seen



def _resumed_once(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """A task stopped after its first response's feedback, resumed: its transcript and events."""
    ledger = tmp_path / "ledger.jsonl"
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT))
    run = RunOptions(model="offline", script=tmp_path / "script.json", config=ledger_config(tmp_path, ledger),
                     approve=approve_all)
    (full,) = toolrelay.batch(TASK, BatchOptions(out=tmp_path / "full", run=run))
    assert full.completed
    lines = (tmp_path / "full" / "transcripts" / "x.jsonl").read_text().splitlines(keepends=True)
    cut = max(n for n, line in enumerate(lines) if json.loads(line)["kind"] == "feedback") + 1
    transcript = tmp_path / "cut" / "transcripts" / "x.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("".join(lines[:cut]))
    (result,) = toolrelay.batch(TASK, BatchOptions(out=tmp_path / "cut", run=run))
    assert result.status == "completed", result
    return transcript, [json.loads(line) for line in transcript.read_text().splitlines()]


def _with_resume(transcript: Path, events: list[dict[str, Any]], **changed: Any) -> Path:
    edited = transcript.with_name("edited.jsonl")
    edited.write_text("".join(json.dumps({**e, **changed} if e["kind"] == "run_resumed" else e) + "\n"
                              for e in events))
    return edited


def test_where_a_run_went_on_is_judged(tmp_path: Path) -> None:
    """verify names the turn a resumed run went on at, and rejects a resume record that says
    it went on past the turns the run had reached, or before the run began."""
    transcript, events = _resumed_once(tmp_path)
    [resumed] = [e for e in events if e["kind"] == "run_resumed"]
    seq, turn = resumed["seq"], resumed["turn"]
    asked = max(e["turn"] for e in events if e["kind"] == "model_request" and e["seq"] < seq)
    [held] = [f for f in verify(load_run(transcript)).findings if f.check == "resumes"]
    assert held.ok and held.message.startswith(f"the run was stopped and went on at turn {turn} (seq {seq})")

    too_far = verify(load_run(_with_resume(transcript, events, turn=asked + 2)))
    assert [f.message for f in too_far.broken_findings() if f.check == "resumes"] == [
        f"run_resumed at seq {seq} goes on at turn {asked + 2}, but the run had asked turn {asked} at most"]
    before = min(e["seq"] for e in events if e["kind"] == "run_start") - 1
    early = verify(load_run(_with_resume(transcript, events, seq=before)))
    said = [f.message for f in early.broken_findings() if f.check == "resumes"]
    assert said == [f"run_resumed at seq {before} comes before the run began (no run_start before it)"], said
