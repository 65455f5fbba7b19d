"""Progress and log messages from `toolrelay call`: a server that reports progress and logs
while it works (``testkit/servers/progress_server.py``, which notes every request it
gets). Progress restarts the idle limit up to --call-max-time; log messages reach stderr
from warning up, or from --server-log-level (which wins over the config's logLevel, as
--call-max-time wins over maxCallTime)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import toolrelay, write_json

from testkit.servers import PROGRESS_SERVER


def config(folder: Path, **settings: Any) -> Path:
    entry: dict[str, Any] = {"command": sys.executable,
                             "args": [str(PROGRESS_SERVER), "--requests", str(folder / "requests.jsonl")]}
    if settings:
        entry["toolrelay"] = settings
    return write_json(folder / "mcp.json", {"mcpServers": {"pr": entry}})


def received(folder: Path, method: str) -> list[dict[str, Any]]:
    """The requests of ``method`` the server got, in order."""
    lines = (folder / "requests.jsonl").read_text(encoding="utf-8").splitlines()
    return [m for m in map(json.loads, lines) if m.get("method") == method]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    config(tmp_path)
    return tmp_path


def test_progress_and_warnings_are_shown(folder: Path) -> None:
    proc = toolrelay("call", "pr__work", '{"steps": 4, "interval": 0.02}', "--config", "mcp.json", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done after 4 steps\n"
    assert '[pr] warning: worker: {"step":3,"of":4}' in proc.stderr
    assert '[pr] error: worker: {"step":4,"of":4}' in proc.stderr
    assert "info:" not in proc.stderr and "debug:" not in proc.stderr  # below warning: not shown
    assert "  … pr/work [####################] 4/4 · step 4" in proc.stderr  # the last one always
    assert received(folder, "logging/setLevel") == []  # nothing asked without the flag
    [call] = received(folder, "tools/call")
    assert call["params"]["_meta"] == {"progressToken": "call-1"}


def test_progress_restarts_the_idle_limit(folder: Path) -> None:
    # 6 steps of 0.15 s: 0.9 s in all, more than the 0.4 s idle limit, never idle that long
    proc = toolrelay("call", "pr__work", '{"steps": 6, "interval": 0.15}', "--config", "mcp.json",
                     "--timeout", "0.4", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done after 6 steps\n"


def test_the_maximum_time_cuts_a_call_that_keeps_reporting_progress(tmp_path: Path) -> None:
    config(tmp_path, timeout=0.4, maxCallTime=0.6)  # idle limit and maximum from the config
    by_config = toolrelay("call", "pr__work", '{"steps": 40, "interval": 0.05}', "--config", "mcp.json",
                          cwd=tmp_path)
    assert by_config.returncode == 3, by_config.stderr
    assert "was still running after its maximum of 0.6 s (a cancellation was sent); --call-max-time " \
           "(or the config's maxCallTime) sets the maximum" in by_config.stderr
    by_flag = toolrelay("call", "pr__work", '{"steps": 40, "interval": 0.05}', "--config", "mcp.json",
                        "--call-max-time", "0.5", cwd=tmp_path)
    assert "was still running after its maximum of 0.5 s" in by_flag.stderr  # the flag wins


def test_the_level_flag_asks_the_server_and_wins_over_the_config(tmp_path: Path) -> None:
    config(tmp_path, logLevel="error")
    by_config = toolrelay("call", "pr__work", '{"steps": 4, "interval": 0.01}', "--config", "mcp.json",
                          cwd=tmp_path)
    assert [r["params"] for r in received(tmp_path, "logging/setLevel")] == [{"level": "error"}]
    assert "[pr] error:" in by_config.stderr and "warning:" not in by_config.stderr
    by_flag = toolrelay("call", "pr__work", '{"steps": 4, "interval": 0.01}', "--config", "mcp.json",
                        "--server-log-level", "info", cwd=tmp_path)
    assert by_flag.returncode == 0, by_flag.stderr
    assert [r["params"] for r in received(tmp_path, "logging/setLevel")][1:] == [{"level": "info"}]
    assert '[pr] info: worker: {"step":2,"of":4}' in by_flag.stderr
    assert "debug:" not in by_flag.stderr


def test_a_bad_level_is_a_usage_error_naming_the_levels(tmp_path: Path) -> None:
    proc = toolrelay("tools", "--server-log-level", "loud", cwd=tmp_path)
    assert proc.returncode == 2
    assert ("argument --server-log-level: must be one of debug, info, notice, warning, error, critical, "
            "alert, emergency, not 'loud'") in proc.stderr
    config(tmp_path, logLevel="loud")
    proc = toolrelay("tools", "--config", "mcp.json", cwd=tmp_path)
    assert proc.returncode == 2
    assert ("server 'pr', toolrelay.logLevel: must be one of debug, info, notice, warning, error, critical, "
            "alert, emergency, not 'loud'") in proc.stderr
