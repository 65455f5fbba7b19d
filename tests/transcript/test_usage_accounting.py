"""Usage as the endpoint reports it: cached input (the stand-in reports the history a request
continues as cached), cache writes when given, per turn in the transcript and in explain
and view, summed in RunResult.usage and run_end, and held to the responses by verify."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from toolrelay.client.config import builtin_file_server
from toolrelay.relay.loop import RunLimits
from toolrelay.relay.stages.usage import add_counts, token_counts, usage_text
from toolrelay.runner import RunOptions, run_async
from toolrelay.transcript.reader import read_transcript
from toolrelay.verify import load_run, verify
from toolrelay.view.rows import describe


def test_cache_writes_are_counted_when_given_and_named_only_when_there_are_some() -> None:
    usage = {"input_tokens": 900, "input_tokens_details": {"cached_tokens": 640, "cache_write_tokens": 260},
             "output_tokens": 40, "output_tokens_details": {"reasoning_tokens": 12}, "total_tokens": 940}
    counts = token_counts(usage)
    assert counts == {"input_tokens": 900, "output_tokens": 40, "total_tokens": 940,
                      "cached_input_tokens": 640, "cache_write_tokens": 260, "reasoning_tokens": 12}
    assert usage_text(counts) == "900 in (640 cached, 260 written to cache), 40 out (12 reasoning), 940 total"
    assert "written" not in usage_text(add_counts(counts, {"cache_write_tokens": -260}))
    assert "cache_write_tokens" not in token_counts({"input_tokens": 1, "input_tokens_details": {}})


def test_a_run_accounts_each_turns_usage_with_the_cached_history(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("line 1\nline 2\n", encoding="utf-8")
    read = {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 1}}
    (tmp_path / "s.json").write_text(json.dumps({"turns": [{"calls": [read]}, {"message": "ok"}]}))
    transcript = tmp_path / "run.jsonl"
    options = RunOptions(model="offline", script=tmp_path / "s.json", config=[builtin_file_server(tmp_path)],
                         transcript=transcript, stream=False, limits=RunLimits(max_turns=3))
    result = asyncio.run(run_async("Read notes.txt", options))
    events = read_transcript(transcript).events
    turns = [token_counts(e["body"]["usage"]) for e in events if e["kind"] == "model_response"]
    assert turns[0]["cached_input_tokens"] == 0 < turns[1]["cached_input_tokens"] < turns[1]["input_tokens"]
    summed = add_counts(turns[0], turns[1])
    assert result.usage == summed == next(e for e in events if e["kind"] == "run_end")["usage"]
    assert verify(load_run(transcript)).ok
    explained = subprocess.run([sys.executable, "-m", "toolrelay", "explain", str(transcript)],
                               capture_output=True, text=True, check=True).stdout
    for number, counts in enumerate(turns, 1):
        assert f"response_{number}: " in explained
        line = next(line for line in explained.splitlines() if line.startswith(f"  response_{number}: "))
        assert line.endswith(f" · tokens: {usage_text(counts)}")
    badges = [badge.text for row in (describe(event, 0.0) for event in events) for badge in row.badges
              if badge.kind == "tokens"]
    assert badges == [usage_text(counts) for counts in turns]
