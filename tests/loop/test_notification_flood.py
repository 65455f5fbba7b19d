"""A server flooding toolrelay with 200,000 notifications during a call: the transcript
stays small (a bounded number per server and window, the rest counted in ``mcp_dropped``),
the run still works (a ``tools/list_changed`` past the limit still refreshes the catalog),
and verify and view read the run quickly.

Real processes: ``toolrelay run`` with the offline stand-in model and a stdio server that
floods, then ``toolrelay verify`` and ``toolrelay view`` on the transcript.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from loop_helpers import make_workspace

from testkit.servers import FLOOD_SERVER

NOTIFICATIONS = 200_000
SCRIPT = {
    "turns": [
        {"calls": [{"name": "box__flood", "arguments": {"count": NOTIFICATIONS, "changed": True}}]},
        {"calls": [{"name": "box__added", "arguments": {}}]},  # offered only after the list changed
        {"message": "done"},
    ]
}


def _toolrelay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    return subprocess.run([sys.executable, "-m", "toolrelay", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=110, env=env, stdin=subprocess.DEVNULL)


def test_a_notification_flood_leaves_a_small_transcript_and_a_working_run(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "workspace")
    config = workspace / "flood.json"
    server = {"command": sys.executable, "args": [str(FLOOD_SERVER)]}
    config.write_text(json.dumps({"mcpServers": {"box": server}}))
    script = workspace / "script.json"
    script.write_text(json.dumps(SCRIPT))
    transcript = workspace / "run.jsonl"
    run = _toolrelay("run", "flood", "--model", "offline", "--script", str(script), "--config", str(config),
                     "--transcript", str(transcript), "--quiet", cwd=workspace)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "done\n"
    assert transcript.stat().st_size < 2_000_000  # unbounded, it was over 100 MB
    events = [json.loads(line) for line in transcript.read_text().splitlines()]
    kept = [e for e in events if e["kind"] == "mcp_notification" and e["direction"] == "in"]
    dropped = [e for e in events if e["kind"] == "mcp_dropped"]
    assert dropped and all(e["server"] == "box" and e["limit"] == 200 for e in dropped)
    assert len(kept) + sum(e["count"] for e in dropped) == NOTIFICATIONS + 1  # + tools/list_changed
    assert sum(e["methods"].get("notifications/message", 0) for e in dropped) > NOTIFICATIONS - 1000
    reasons = [e["reason"] for e in events if e["kind"] == "declarations"]
    assert reasons == ["initial", "tools/list_changed from box"]
    outcomes = [e["outcome"]["status"] for e in events if e["kind"] == "call_outcome"]
    assert outcomes == ["ok", "ok"]

    verified = _toolrelay("verify", str(transcript), cwd=workspace)
    assert verified.returncode == 0, verified.stdout
    page = workspace / "run.html"
    viewed = _toolrelay("view", str(transcript), "-o", str(page), cwd=workspace)
    assert viewed.returncode == 0, viewed.stderr
    assert f"toolrelay view: wrote {page} ({len(events)} events" in viewed.stderr
    assert page.stat().st_size < 3_000_000  # unbounded, it was over 180 MB
    assert "unasked messages not recorded (over 200 per 10.0 s)" in page.read_text()
