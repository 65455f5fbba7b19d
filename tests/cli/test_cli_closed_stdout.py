"""A reader that closes after a few lines (``| head -3``): every command ends at once,
quietly (0, or 141 when it was still at work), and no server it started outlives it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import config, make_workspace, toolrelay

from testkit.processes import is_running, spawned

TASK = "Read the first 20 lines of notes.txt"
# The file server, after writing its pid where the test looks for it (exec keeps the pid).
PID_FILE_SERVER = (
    "import os, sys; open(os.path.join(sys.argv[1], str(os.getpid())), 'w').close(); "
    "os.execv(sys.executable, [sys.executable, '-m', 'toolrelay', 'files', sys.argv[2]])"
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_workspace(tmp_path_factory.mktemp("closed-stdout"))
    (root / "pids").mkdir()
    server = {"command": sys.executable, "args": ["-c", PID_FILE_SERVER, str(root / "pids"), str(root)]}
    servers = dict.fromkeys(("fs", "more"), server)  # two: `tools --json` is more than one pipe write
    config(root / "mcp.json", **servers)
    made = toolrelay("run", TASK, "--model", "offline", "--transcript", "run.jsonl", "--quiet", cwd=root)
    assert made.returncode == 0, made.stderr
    return root


COMMANDS = {
    "call --wire": ["call", "fs__list_directory", '{"path": "."}', "--wire", "--config", "mcp.json"],
    "run": ["run", TASK, "--model", "offline", "--config", "mcp.json"],
    "tools --json": ["tools", "--json", "--config", "mcp.json"],
    "explain": ["explain", "run.jsonl", "--all"],
    "view": ["view", "run.jsonl", "-o", "/dev/stdout"],
}
CASES = [("call --wire", 1), ("call --wire", 3), ("run", 2), ("tools --json", 1), ("explain", 3), ("view", 1)]


@pytest.mark.parametrize(("command", "lines"), CASES)
def test_a_reader_that_closes_early_ends_the_command_quietly(
    workspace: Path, command: str, lines: int
) -> None:
    for old in (workspace / "pids").iterdir():
        old.unlink()
    argv = [sys.executable, "-m", "toolrelay", *COMMANDS[command]]
    with spawned(argv, cwd=workspace, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        for _ in range(lines):
            assert proc.stdout.readline()
        proc.stdout.close()
        try:  # a hang is what this guards against: minutes would pass before
            status = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pytest.fail(f"`toolrelay {command}` still runs 20 s after its reader went away")
        stderr = proc.stderr.read().decode()
    assert status in (0, 141), stderr
    for trace in ("Traceback", "Error", "Event loop is closed", "Exception ignored"):
        assert trace not in stderr
    servers = [int(path.name) for path in (workspace / "pids").iterdir()]
    assert bool(servers) == command.startswith(("call", "run", "tools"))
    assert not _running_after(servers, grace=2.0), f"`toolrelay {command}` left its server running"


def _running_after(pids: list[int], *, grace: float) -> list[int]:
    deadline = time.monotonic() + grace
    while (running := [pid for pid in pids if is_running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return running
