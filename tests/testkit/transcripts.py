"""A transcript's events as tests read them: every model request's body whole.

The writer records a request after a run's first as what changed (``transcript/delta.py``);
``read_transcript`` rebuilds the bodies. Each event here is its own copy (the rebuilt
bodies share their items), so a test that edits one event edits nothing else.
"""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

from toolrelay.client.config import builtin_file_server
from toolrelay.relay.loop import RunLimits
from toolrelay.runner import RunOptions, run_async
from toolrelay.transcript.reader import read_transcript
from toolrelay.transcript.writer import TranscriptWriter

__all__ = ["FIVE_READS", "read_call", "replay_run", "transcript_events", "whole_copy"]


def transcript_events(path: Path) -> list[dict[str, Any]]:
    """The events of the transcript at ``path``, bodies whole, none sharing a value."""
    return [copy.deepcopy(event) for event in read_transcript(path).events]


def whole_copy(source: Path, target: Path) -> Path:
    """The transcript at ``source`` written again to ``target`` with every request body whole
    (``request_bodies="full"``: as transcripts were written before deltas)."""
    transcript = read_transcript(source)
    writer = TranscriptWriter(target, transcript.run_id or "run", request_bodies="full")
    for event in transcript.events:
        writer.write_record({key: value for key, value in event.items() if key != "run"})
    writer.close()
    return target


def read_call(n: int, **more: Any) -> dict[str, Any]:
    """A scripted ``fs__read_text_file`` call of the first ``n`` lines of notes.txt."""
    return {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": n, **more}}


FIVE_READS: list[dict[str, Any]] = [
    {"calls": [read_call(1), read_call(2)]}, {"calls": [read_call(3)]},
    {"calls": [read_call(1), read_call(3)]}, {"message": "Read five times."},
]
"""Four turns: two, one and two reads of notes.txt, then the answer."""


def replay_run(root: Path, turns: list[dict[str, Any]] = FIVE_READS) -> Path:
    """One real replay-mode run in ``root`` (the offline model following ``turns``, the
    built-in file server reading a three-line notes.txt): its transcript."""
    (root / "notes.txt").write_text("line 1\nline 2\nline 3\n", encoding="utf-8")
    (root / "script.json").write_text(json.dumps({"turns": turns}), encoding="utf-8")
    options = RunOptions(model="offline", script=root / "script.json", config=[builtin_file_server(root)],
                         transcript=root / "run.jsonl", stream=False, limits=RunLimits(max_turns=6))
    result = asyncio.run(run_async("Read notes.txt", options))
    calls = sum(len(turn.get("calls", [])) for turn in turns)
    assert result.status == "completed" and len(result.calls) == calls, result.reason
    return root / "run.jsonl"
