"""A 2026-07-28 call answered ``input_required`` and retried, drawn inside its call: the
first tools/call, the answer naming what it asks for, the retry with toolrelay's
inputResponses, the result."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import PYTHON
from toolrelay.view.build import build_trace

from .helpers import read_events

SCRIPT = {"turns": [{"calls": [{"name": "files__read_text_file", "arguments": {"path": "a.txt"}}]},
                    {"message": "Done."}]}


def test_the_rounds_of_a_call_are_drawn_inside_it(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n", encoding="utf-8")
    config = {"mcpServers": {"files": {"command": PYTHON, "args": ["-m", "toolrelay", "files", str(root)],
                                       "toolrelay": {"roots": [str(root)]}}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    proc = subprocess.run(
        [PYTHON, "-m", "toolrelay", "run", "read", "--config", "mcp.json", "--model", "offline", "--script",
         "script.json", "--protocol-version", "2026-07-28", "--quiet", "--transcript", "run.jsonl"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    trace = build_trace(read_events(tmp_path / "run.jsonl"), None, source="run.jsonl")
    call = next(c for g in trace.groups for c in g.calls() if c.call_id == "call_offline_0001")
    rows = [(r.stage, r.label, r.detail[:40]) for r in call.rows if r.stage in ("call", "result")]
    sent = ('inputResponses {"roots":{"roots":[{"uri":"' + root.as_uri())[:40]
    assert rows == [
        ("call", "tools/call read_text_file", 'arguments {"path":"a.txt"}'),
        ("result", "input_required", "roots: roots/list"),
        ("call", "tools/call read_text_file · retry", sent),
        ("result", "result", "alpha"),
    ]
