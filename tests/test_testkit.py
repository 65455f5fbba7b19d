"""The test kit keeps its promises: a killed run takes the servers it started with it, a
module that leaves a process running errors and the process is killed, and an npm install
that fails or was interrupted never leaves a folder that later runs trust."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import REPO
from testkit import npm
from testkit.processes import descendants, is_running, kill_tree, run, spawned

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]
# A parent that starts a child in a session of its own (as toolrelay starts its servers)
# and prints the child's pid.
PARENT = [sys.executable, "-c", textwrap.dedent("""
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    print(child.pid, flush=True)
    time.sleep(60)
""")]


def _gone(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while is_running(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not is_running(pid)


def test_kill_tree_ends_the_children_a_process_started_in_their_own_sessions() -> None:
    with spawned(PARENT, stdout=subprocess.PIPE, text=True) as parent:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert child in descendants(parent.pid) and os.getsid(child) == child
        kill_tree(parent)
        assert parent.returncode is not None
        assert _gone(child), "the child of the killed process is still running"


def test_run_kills_the_whole_tree_when_its_timeout_passes(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    script = PARENT[-1].replace(
        "print(child.pid, flush=True)",
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))"
    )
    with pytest.raises(subprocess.TimeoutExpired):
        run([sys.executable, "-c", script], timeout=3)
    assert _gone(int(pid_file.read_text()))


LEAKY_TESTS = '''
import subprocess, sys

def test_leaves_a_sleeper():
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)

def test_orphans_a_grandchild():  # the shell exits at once; its background child lives on
    subprocess.run(["sh", "-c", "sleep 60 >/dev/null 2>&1 &"], check=True)

def test_cleans_up():
    subprocess.run([sys.executable, "-c", "pass"], check=True)
'''


def test_a_module_that_leaves_processes_running_errors_and_they_are_killed(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO / "tests")!r})
        from testkit.processes import LeftoverCheck, become_subreaper

        def pytest_configure(config):
            assert become_subreaper()
            config.pluginmanager.register(LeftoverCheck(grace=0.5), "leftover-check")
    """))
    (tmp_path / "test_leaky.py").write_text(LEAKY_TESTS)
    (tmp_path / "test_tidy.py").write_text("def test_nothing_left():\n    pass\n")
    done = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
               text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "4 passed, 1 error" in done.stdout  # the error is the leaky module's last teardown
    assert "ERROR at teardown of test_cleans_up" in done.stdout
    assert "test_leaky.py left 2 child process(es) running (now killed)" in done.stdout
    assert "running since test_leaky.py::test_leaves_a_sleeper" in done.stdout
    assert "sleep 60), running since test_leaky.py::test_orphans_a_grandchild" in done.stdout


def _fake_npm(folder: Path, *, fail: bool = False) -> dict[str, str]:
    """An ``npm`` on PATH that installs a file per package (or fails), and counts its runs."""
    script = folder / "bin" / "npm"
    script.parent.mkdir()
    script.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        echo run >> {folder / "runs"}
        [ {int(fail)} = 1 ] && {{ echo "npm ERR! ENOTEMPTY: directory not empty" >&2; exit 1; }}
        mkdir -p "$3/node_modules/pkg" && echo ok > "$3/node_modules/pkg/index.js"
    """))
    script.chmod(0o755)
    return {"PATH": f"{script.parent}{os.pathsep}{os.environ['PATH']}"}


def test_npm_installs_once_and_repairs_a_broken_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", _fake_npm(tmp_path)["PATH"])
    prefix = tmp_path / "cache" / "npm"
    prefix.mkdir(parents=True)
    (prefix / "node_modules").mkdir()  # what an interrupted install left: no completion mark
    assert npm.install(prefix, ["pkg@1"], ["node_modules/pkg/index.js"]) == prefix
    assert (prefix / "node_modules/pkg/index.js").read_text() == "ok\n"
    assert npm.install(prefix, ["pkg@1"], ["node_modules/pkg/index.js"]) == prefix
    assert (tmp_path / "runs").read_text().count("run") == 1  # the second call found it whole
    assert [p.name for p in prefix.parent.iterdir() if "staging" in p.name] == []


def test_a_failed_npm_install_leaves_nothing_to_trust(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", _fake_npm(tmp_path, fail=True)["PATH"])
    prefix = tmp_path / "cache" / "npm"
    why = npm.install(prefix, ["pkg@1"], ["node_modules/pkg/index.js"])
    assert why == "npm install pkg@1 failed: npm ERR! ENOTEMPTY: directory not empty"
    assert not prefix.exists()
    assert [p.name for p in prefix.parent.iterdir() if not p.name.endswith(".lock")] == []
