"""What servers report during calls, drawn inside the call: each progress notification
(``3/4 · step 3``) and log message (level, logger, data); progress for a token no call
sent stands apart, marked."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import PYTHON
from testkit.servers import PROGRESS_SERVER
from toolrelay.view.build import build_trace

from .helpers import read_events

SCRIPT = {
    "turns": [
        {"calls": [{"name": "pr__work", "arguments": {"steps": 2, "interval": 0.01}}]},
        {"calls": [{"name": "pr__stray", "arguments": {}}]},
        {"message": "Done."},
    ],
}


def test_progress_and_log_messages_are_drawn_inside_their_call(tmp_path: Path) -> None:
    config = {"mcpServers": {"pr": {"command": PYTHON, "args": [str(PROGRESS_SERVER)]}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    proc = subprocess.run(
        [PYTHON, "-m", "toolrelay", "run", "work", "--config", "mcp.json", "--model", "offline", "--script",
         "script.json", "--server-log-level", "debug", "--quiet", "--transcript", "run.jsonl"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    trace = build_trace(read_events(tmp_path / "run.jsonl"), None, source="run.jsonl")
    calls = {c.call_id: c for g in trace.groups for c in g.calls()}
    reported = [(r.label, r.detail, r.state) for r in calls["call_offline_0001"].rows
                if r.label.startswith(("progress", "log"))]
    assert reported == [
        ("log · debug", 'worker: {"step":1,"of":2}', "ok"), ("progress", "1/2 · step 1", "ok"),
        ("log · info", 'worker: {"step":2,"of":2}', "ok"), ("progress", "2/2 · step 2", "ok"),
    ]
    stray = [(r.label, r.detail, r.call_id) for r in trace.rows() if r.label.startswith("progress ·")]
    assert stray == [("progress · no pending call", "token 'not-a-token-of-yours' · 1", None)]
