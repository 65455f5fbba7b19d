"""One real ``toolrelay demo`` for the module (a subprocess, the offline model and the
built-in file server); tests read it or tamper with copies."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from testkit.processes import run

REPO = Path(__file__).resolve().parent.parent.parent
EXAMPLES = REPO / "src" / "toolrelay" / "examples"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """(the demo folder, the finished ``toolrelay demo --out`` process)."""
    out = tmp_path_factory.mktemp("demo") / "toolrelay-demo"
    proc = run(
        [sys.executable, "-m", "toolrelay", "demo", "--out", str(out)],
        text=True,
        timeout=60,
        cwd=tmp_path_factory.getbasetemp(),
    )
    return out, proc


@pytest.fixture
def demo_folder(demo: tuple[Path, subprocess.CompletedProcess[str]]) -> Path:
    folder, proc = demo
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return folder


def run_example(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """One of the seed's standalone checks, run without site-packages (-S): the standard library
    only, so toolrelay cannot be imported even by accident."""
    return subprocess.run(
        [sys.executable, "-S", str(EXAMPLES / script), *args],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
