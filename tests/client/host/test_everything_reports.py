"""server-everything (npm, pinned 2026.8.31) reporting while it works: its long-running
tool's progress keeps a call alive past the idle limit and is shown; its simulated
logging reaches stderr at the level asked (logging/setLevel); both from ``toolrelay call``
and from a scripted offline ``toolrelay run`` whose transcript verifies with each report
attached to its call."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import PYTHON
from testkit import everything

LONG = ("ev__trigger-long-running-operation", {"duration": 1, "steps": 5})
"""5 progress notifications, 0.2 s apart: longer in all than the 0.6 s idle limit used."""
LOGGING = ("ev__toggle-simulated-logging", {})
"""One log message at a random level at once (then every 5 s, after these tests)."""
SCRIPT = {"turns": [{"calls": [{"name": LONG[0], "arguments": LONG[1]}]},
                    {"calls": [{"name": LOGGING[0], "arguments": {}}]},
                    {"message": "Done."}]}
SIMULATED = re.compile(r"^\[ev\] \w+: \w+.level.message$", re.MULTILINE)
"""Its words: "Info-level message", "Alert level-message"."""


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory, everything_server: list[str]) -> Path:
    folder = tmp_path_factory.mktemp("everything")
    path = folder / "mcp.json"
    path.write_text(json.dumps(everything.stdio_config(everything_server, [str(folder)])), encoding="utf-8")
    return path


def toolrelay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "toolrelay", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def test_progress_keeps_the_long_operation_alive_and_is_shown(config: Path) -> None:
    proc = toolrelay("call", LONG[0], json.dumps(LONG[1]), "--config", str(config), "--timeout", "0.6",
                     cwd=config.parent)
    assert proc.returncode == 0, proc.stderr
    assert "Long running operation completed. Duration: 1 seconds, Steps: 5." in proc.stdout
    assert "  … ev/trigger-long-running-operation [####################] 5/5" in proc.stderr


def test_simulated_logging_is_shown_at_the_level_asked(config: Path) -> None:
    proc = toolrelay("call", LOGGING[0], "--config", str(config), "--server-log-level", "debug", "--wire",
                     cwd=config.parent)
    assert proc.returncode == 0, proc.stderr
    assert '"method":"logging/setLevel","params":{"level":"debug"}' in proc.stdout
    assert SIMULATED.search(proc.stderr), proc.stderr


def test_a_scripted_run_records_each_report_with_its_call(config: Path) -> None:
    folder = config.parent
    (folder / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    proc = toolrelay("run", "use the everything server", "--config", str(config), "--model", "offline",
                     "--script", "script.json", "--yes", "--server-log-level", "debug",
                     "--call-timeout", "0.6", "--transcript", "run.jsonl", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Done."
    assert SIMULATED.search(proc.stderr), proc.stderr
    verdict = toolrelay("verify", "run.jsonl", "--all", cwd=folder)
    assert verdict.returncode == 0, verdict.stdout
    assert ("call_offline_0001: during its tools/call the server sent 5 progress notification(s) "
            "(last 5/5)") in verdict.stdout
    assert "call_offline_0002: during its tools/call the server sent 1 log message(s)" in verdict.stdout
