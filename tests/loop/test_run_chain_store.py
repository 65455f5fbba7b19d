"""``--chain --no-store``: chain mode continues from the stored previous response, and
store: false keeps none. The combination is refused before anything starts (exit 2,
saying why), in the CLI and in the library alike; the endpoint is never blamed for it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import toolrelay
from toolrelay.errors import UsageError


def toolrelay_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AZURE_OPENAI_"))}
    return subprocess.run([sys.executable, "-m", "toolrelay", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)


def test_the_cli_refuses_chain_with_no_store_before_anything_starts(tmp_path: Path) -> None:
    proc = toolrelay_cli("run", "x", "--model", "offline", "--chain", "--no-store", cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr  # no server notice, no model turn: only the reason
    assert lines[0].startswith("toolrelay run: error: ")
    assert "--chain" in lines[0] and "--no-store" in lines[0] and "store: false" in lines[0]
    assert "endpoint does not support" not in proc.stderr


@pytest.mark.parametrize(
    "options",
    [{"chain": True, "store": False}, {"chain": True, "extra_body": {"store": False}}],
    ids=["store=False", "extra_body"],
)
def test_the_library_refuses_the_same_combination(options: dict[str, Any], tmp_path: Path) -> None:
    with pytest.raises(UsageError) as refused:
        toolrelay.run("x", model="offline", config=tmp_path / "never-read.json", **options)
    said = str(refused.value)
    assert "chain=True" in said and "store=False" in said and "store: false" in said
    assert refused.value.exit_code == 2


def test_chain_with_store_true_still_runs(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("line 1\nline 2\n")
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        result = toolrelay.run("Read the first 1 lines of notes.txt", model="offline", chain=True, store=True)
    finally:
        os.chdir(cwd)
    assert result.completed
