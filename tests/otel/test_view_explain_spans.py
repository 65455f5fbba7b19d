"""A traced run's transcript drawn and explained with its spans: ``view`` puts each call's
``call_span`` row (its span id, its trace id) inside that call's group, ``explain`` names
them under the call, so a reader goes from a call to the trace a viewer shows. A run of the
real CLI; the page model read as ``view`` builds it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from toolrelay.view.build import build_trace
from toolrelay.view.model import Row

SCRIPT = {"turns": [{"calls": [{"name": "fs__read_text_file", "arguments": {"path": "a.txt"}},
                               {"name": "fs__read_text_file", "arguments": {"path": "b.txt"}}]},
                    {"message": "done"}]}


def test_each_call_shows_its_span_and_trace(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.txt").write_text(f"{name}\n", encoding="utf-8")
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))}
    toolrelay = [sys.executable, "-m", "toolrelay"]
    ran = subprocess.run([*toolrelay, "run", "read both", "--model", "offline", "--script", "script.json",
                          "--transcript", "run.jsonl", "--otel-file", "spans.jsonl", "--quiet"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    events = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    named = {e["call_id"]: e for e in events if e["kind"] == "call_span"}
    assert len(named) == 2
    trace = build_trace(events, None, source="run.jsonl")
    calls = {call.call_id: call for group in trace.groups for call in group.calls()}
    for call_id, span in named.items():
        [row] = [r for r in calls[call_id].rows if isinstance(r, Row) and r.kind == "call_span"]
        assert row.stage == "trace" and span["span_id"] in row.label and span["trace_id"] in row.detail
    explained = subprocess.run([*toolrelay, "explain", "run.jsonl", "--all"], cwd=tmp_path, env=env,
                               capture_output=True, text=True, timeout=60)
    assert explained.returncode == 0, explained.stderr
    blocks = explained.stdout.split("  call ")[1:]
    for call_id, span in named.items():
        [block] = [b for b in blocks if b.startswith(call_id)]
        assert f"· span {span['span_id']} in trace {span['trace_id']}" in block
