"""Shared test set-up: peers the tests drive, the skip-or-fail rule for missing tools, and
no process left behind.

A test that needs a tool this machine may lack (npm, Chromium) installs it here or skips
with the reason; under TOOLRELAY_REQUIRE_ALL=1 (set by .ci/run) it fails instead.

A test that starts a process uses the ``processes`` fixture (or ``testkit.processes``:
``spawned``, ``run``), which kills it and everything it started at teardown. Under all of
it, ``LeftoverCheck`` errors the module that leaves a child process running.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from testkit import conformance, everything, npm
from testkit.dialect import DIALECTS, Dialect
from testkit.processes import LeftoverCheck, ProcessKeeper, become_subreaper

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
    # Pins and sign-ins never go to the user's ~/.local/state (each test gets its own: below).
    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="toolrelay-test-state-")
    # Tables are as wide as a pipe's (120), as a user's `| less` sees them: pytest-xdist's
    # workers set COLUMNS=80, which would cut them (and their expected lines) short.
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)
    # Orphans (a server whose parent was killed) become pytest's children, so the check sees them.
    if become_subreaper():
        config.pluginmanager.register(LeftoverCheck(), "toolrelay-leftover-processes")


def require_or_skip(reason: str) -> None:
    """Skip with ``reason`` -- or fail, when TOOLRELAY_REQUIRE_ALL=1 demands every test run."""
    if os.environ.get("TOOLRELAY_REQUIRE_ALL") == "1":
        pytest.fail(f"required under TOOLRELAY_REQUIRE_ALL=1: {reason}")
    pytest.skip(reason)


def _install_node_fs_server() -> Path | str:
    """Install the Node reference file server once; its dist/index.js, or why not."""
    if shutil.which("node") is None:
        return "node not found on PATH: cannot run the Node reference file server"
    index = "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
    installed = npm.install(CACHE / "npm", [NODE_FS_PACKAGE], [index])
    return installed / index if isinstance(installed, Path) else installed


@pytest.fixture(scope="session")
def everything_server() -> list[str]:
    """The command that starts server-everything (append ``stdio`` or ``streamableHttp``),
    installed once per session."""
    found = everything.install(CACHE)
    if isinstance(found, str):
        require_or_skip(found)
    assert isinstance(found, list)
    return found


@pytest.fixture(scope="session")
def modern_conformance_suite() -> list[str]:
    """The command that runs the conformance suite's 2026-07-28 pin (0.2.0-alpha.12)."""
    found = conformance.install(CACHE, conformance.MODERN_CONFORMANCE_PACKAGE)
    if isinstance(found, str):
        require_or_skip(found)
    assert isinstance(found, list)
    return found


@pytest.fixture(scope="session")
def node_fs_server() -> list[str]:
    """Command prefix that starts the Node reference file server (append root dirs)."""
    found = _install_node_fs_server()
    if isinstance(found, str):
        require_or_skip(found)
    assert isinstance(found, Path)
    return [shutil.which("node") or "node", str(found)]


@pytest.fixture(scope="module", autouse=True)
def module_state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A state folder (``$XDG_STATE_HOME``) for the module's own module-scoped fixtures:
    every run pins its servers' tools there (``--pins enforce`` is the default)."""
    state = tmp_path_factory.mktemp("module-state")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_STATE_HOME", str(state))
        yield state


@pytest.fixture(autouse=True)
def private_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A state folder of the test's own: no test sees the pins (or sign-ins) of another."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return state


@pytest.fixture
def processes() -> Iterator[ProcessKeeper]:
    """``processes.spawn(args, **popen)``: a process of the test's, killed at teardown with
    everything it started (its process group and every descendant's)."""
    keeper = ProcessKeeper()
    try:
        yield keeper
    finally:
        keeper.kill_all()


@pytest.fixture
def toolrelay_cmd() -> list[str]:
    """How tests start the toolrelay CLI as a real subprocess."""
    return [PYTHON, "-m", "toolrelay"]


@pytest.fixture(params=DIALECTS)
def dialect(request: pytest.FixtureRequest) -> Dialect:
    """The model dialect the test runs in (``--api responses`` / ``--api chat``): a test that
    takes it runs once per dialect and reads the bodies with it (``testkit.dialect``)."""
    return Dialect(request.param)
