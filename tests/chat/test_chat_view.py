"""The trace view draws a chat run: each stream chunk named by what it carries, the
answer's calls by name, and the text the chunks wrote."""

from __future__ import annotations

import json
from pathlib import Path

from chat_helpers import run_dialect

from toolrelay.view.rows import describe

READ = {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 2}}
SCRIPT = {"turns": [{"calls": [READ]}, {"message": "all done here"}]}


def test_chat_stream_chunks_and_answers_are_drawn_by_what_they_carry(tmp_path: Path) -> None:
    run = run_dialect(tmp_path, SCRIPT, api="chat", stream=True)
    records = [json.loads(line) for line in run.transcript.read_text().splitlines()]
    model_side = [r for r in records if r["kind"] in ("model_stream", "model_response")]
    rows = [describe(r, records[0]["time"]) for r in model_side]
    labels = [row.label for row in rows]
    assert labels[:3] == ["role", "tool_calls[0] start", "tool_calls[0] arguments"]
    assert "finish" in labels and "usage" in labels and "[DONE]" in labels and "content" in labels
    start = next(row for row in rows if row.label == "tool_calls[0] start")
    assert start.detail == "call_offline_0001 fs__read_text_file"
    responses = [row for row in rows if row.stage == "response"]
    assert "fs__read_text_file" in responses[0].detail and "all done" in responses[1].detail
    assert all(row.state == "ok" for row in rows)
