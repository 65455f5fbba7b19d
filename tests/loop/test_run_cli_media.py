"""``toolrelay run`` with results the model cannot take whole: the user is warned on stderr
and the call line is marked, instead of an ``ok`` and silence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from loop_helpers import MEDIA

from testkit.processes import run


def toolrelay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    return run([sys.executable, "-m", "toolrelay", *args], cwd=cwd, text=True, timeout=60, env=env)


def write_json(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value))
    return path


def test_an_image_over_the_media_budget_is_warned_about_and_its_call_line_marked(tmp_path: Path) -> None:
    config = write_json(
        tmp_path / "mcp.json", {"mcpServers": {"media": {"command": sys.executable, "args": [str(MEDIA)]}}}
    )
    script = write_json(
        tmp_path / "script.json", {"turns": [{"calls": [{"name": "media__photo", "arguments": {"kb": 300}}]}]}
    )
    proc = toolrelay(
        "run", "Show me the photo", "--model", "offline", "--script", str(script), "--config", str(config),
        "--media-budget", "100000", "--transcript", "run.jsonl", cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    [call_line] = [line for line in lines if line.startswith("  call media__photo →")]
    assert call_line.endswith("· ok · the model did not get all of it")
    warning = "! media__photo: image (image/png, 300000 bytes) dropped: over --media-budget 100000 bytes"
    assert lines[lines.index(call_line) + 1] == warning
    assert "over toolrelay's limit of 100000 bytes" in proc.stdout  # the offline model quotes what it got
    # the run verifies: verify renders the feedback again with the recorded media budget
    verified = toolrelay("verify", "run.jsonl", cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    events = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    [start] = [e for e in events if e["kind"] == "run_start"]
    assert start["media_budget"] == 100_000
