"""Shared test set-up: peers the tests drive, and the skip-or-fail rule for missing tools.

A test that needs a tool this machine may lack (npm, Chromium) installs it here or skips
with the reason; under TOOLRELAY_REQUIRE_ALL=1 (set by .ci/run) it fails instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

# CI gets one shot, so property tests draw a fixed, reproducible set of examples there
# ("fixed"). To hunt for new counterexamples, run with HYPOTHESIS_PROFILE=explore (fresh
# random examples each run) and add what it finds as a plain test.
hypothesis_settings.register_profile("fixed", derandomize=True, database=None)
hypothesis_settings.register_profile("explore", derandomize=False)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / ".toolrelay-cache"
NODE_FS_PACKAGE = "@modelcontextprotocol/server-filesystem@2026.8.31"
PYTHON = sys.executable


def pytest_configure(config: pytest.Config) -> None:
    # Servers started by tests log their stderr under a temporary folder, not the user's
    # ~/.local/state/toolrelay/logs (subprocesses inherit the variable).
    if "TOOLRELAY_LOG_DIR" not in os.environ:
        os.environ["TOOLRELAY_LOG_DIR"] = tempfile.mkdtemp(prefix="toolrelay-test-logs-")


# Issue 12 is built in two halves: tests marked needs_stream_wire drive the stand-in's
# paced streams, faults and hold-until-file (S1's half) through the loop (S2's). Until both
# are merged they are skipped; the merge removes this hook, and they run like any test.
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    waiting = pytest.mark.skip(reason="needs S1's streaming wire (issue 12): drop this hook once merged")
    for item in items:
        if item.get_closest_marker("needs_stream_wire") is not None:
            item.add_marker(waiting)


def require_or_skip(reason: str) -> None:
    """Skip with ``reason`` -- or fail, when TOOLRELAY_REQUIRE_ALL=1 demands every test run."""
    if os.environ.get("TOOLRELAY_REQUIRE_ALL") == "1":
        pytest.fail(f"required under TOOLRELAY_REQUIRE_ALL=1: {reason}")
    pytest.skip(reason)


def _install_node_fs_server() -> Path | str:
    """Install the Node reference file server once; its dist/index.js, or why not."""
    npm = shutil.which("npm")
    node = shutil.which("node")
    if npm is None or node is None:
        return "npm/node not found on PATH: cannot install the Node reference file server"
    prefix = CACHE / "npm"
    index = prefix / "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
    if index.exists():
        return index
    prefix.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error",
         NODE_FS_PACKAGE],
        capture_output=True, text=True, timeout=300,
    )
    if proc.returncode != 0 or not index.exists():
        return f"npm install {NODE_FS_PACKAGE} failed: {proc.stderr.strip()[-500:]}"
    return index


@pytest.fixture(scope="session")
def node_fs_server() -> list[str]:
    """Command prefix that starts the Node reference file server (append root dirs)."""
    found = _install_node_fs_server()
    if isinstance(found, str):
        require_or_skip(found)
    assert isinstance(found, Path)
    return [shutil.which("node") or "node", str(found)]


@pytest.fixture
def toolrelay_cmd() -> list[str]:
    """How tests start the toolrelay CLI as a real subprocess."""
    return [PYTHON, "-m", "toolrelay"]
