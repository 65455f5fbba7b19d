"""Without tracing asked for, no OpenTelemetry module is imported (start-up time is a goal):
not by importing toolrelay and its CLI, not by a whole offline run, even with the extra
installed (it is, in the test environment)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def test_the_extra_is_installed_here() -> None:
    import opentelemetry.sdk.trace  # the test extra carries it: the checks below mean something

    assert opentelemetry.sdk.trace.TracerProvider is not None


def test_importing_toolrelay_imports_no_opentelemetry() -> None:
    code = ("import sys, toolrelay, toolrelay.cli.main, toolrelay.runner, toolrelay.cli.run_cmd; "
            "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"


BATCH = ["batch", "tasks.jsonl", "--out", "out", "--model", "offline", "--quiet"]


@pytest.mark.parametrize("verb", [["run", "read notes.txt", "--model", "offline", "--quiet"], ["tools"],
                                  BATCH], ids=["run", "tools", "batch"])
def test_a_command_without_otel_imports_none_of_it(verb: list[str], tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hi\n", encoding="utf-8")
    (tmp_path / "tasks.jsonl").write_text('{"id": "t1", "task": "read notes.txt"}\n', encoding="utf-8")
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "toolrelay", *verb],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
    assert len(imported) > 100  # -X importtime reported the imports
    assert not [line for line in imported if "opentelemetry" in line]
