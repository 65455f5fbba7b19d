"""What servers ask during calls, drawn inside the call: a sampling request with its prompt
and the model's answer, a form with its message and the values sent back."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import PYTHON
from testkit.servers import ASKING_SERVER
from toolrelay.view.build import build_trace

from .helpers import read_events

DEFAULTED_FORM = {  # every required field has a default: --elicit defaults accepts it
    "type": "object",
    "properties": {"age": {"type": "integer", "default": 30}, "color": {"type": "string", "default": "red"}},
    "required": ["age"],
}
SCRIPT = {
    "turns": [
        {"calls": [{"name": "ask__sample", "arguments": {"prompt": "Say hi"}}]},
        {"calls": [{"name": "ask__elicit", "arguments": {"schema": DEFAULTED_FORM}}]},
        {"message": "Done."},
    ],
    "sampling": {"message": "Hi there."},
}


def test_sampling_and_a_form_are_drawn_inside_their_calls(tmp_path: Path) -> None:
    config = {"mcpServers": {"ask": {"command": PYTHON, "args": [str(ASKING_SERVER)]}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    proc = subprocess.run(
        [PYTHON, "-m", "toolrelay", "run", "ask me", "--config", "mcp.json", "--model", "offline", "--script",
         "script.json", "--yes", "--elicit", "defaults", "--quiet", "--transcript", "run.jsonl"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    trace = build_trace(read_events(tmp_path / "run.jsonl"), None, source="run.jsonl")
    calls = {c.call_id: c for g in trace.groups for c in g.calls()}
    def asks(call_id: str) -> list[tuple[str, str, str]]:
        return [(r.stage, r.label, r.detail) for r in calls[call_id].rows if r.stage in ("ask", "reply")]

    sampled = asks("call_offline_0001")
    assert sampled == [("ask", "sampling/createMessage", "“Say hi” · maxTokens 50"),
                       ("reply", "reply · offline", "“Hi there.”")]
    asked = asks("call_offline_0002")
    assert asked == [("ask", "elicitation/create · form", "“Tell me about you.”"),
                     ("reply", "reply · accept", '{"age":30,"color":"red"}')]
