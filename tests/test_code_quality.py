"""ruff and mypy --strict are part of the test command: a lint or type error fails CI."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True)


def test_ruff_is_clean() -> None:
    proc = _run("ruff", "check", "src", "tests", "bench", "examples")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict_is_clean() -> None:
    proc = _run("mypy", "--strict", "src/toolrelay")
    assert proc.returncode == 0, proc.stdout + proc.stderr
