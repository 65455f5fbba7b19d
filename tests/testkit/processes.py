"""Processes a test starts end with the test, and a check that none outlives its module.

``spawn`` / ``spawned`` start a process in a session of its own (its own process group);
``kill_tree`` ends it and everything it started: the descendants are found first (a
server toolrelay started sits in a session of its own, so killing the group of the run
alone would orphan it), then every group is sent SIGKILL. ``run`` is ``subprocess.run``
that does the same when its timeout passes. The ``processes`` fixture (tests/conftest.py)
kills whatever a test spawned through it at teardown.

``LeftoverCheck`` is the net under all of it (a pytest plugin that tests/conftest.py
registers): pytest becomes a child subreaper (Linux), so a process orphaned by its parent
is re-parented to pytest instead of init and stays visible. When a module's last test has
been torn down, any child still running that was not there when the module began is
killed, and that teardown errors naming the process and the test that started it.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "LeftoverCheck",
    "ProcessKeeper",
    "kill_tree",
    "live_children",
    "run",
    "spawn",
    "spawned",
]

_PR_SET_CHILD_SUBREAPER = 36
LEFTOVER_GRACE = 3.0
"""Seconds a leftover child gets to exit on its own (a server still shutting down)."""


def _stat(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()
    except OSError:
        return None


def is_running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    fields = _stat(pid)
    return fields is not None and fields[0] not in (b"Z", b"X")


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def live_children(parent: int | None = None) -> set[int]:
    """The running direct children of ``parent`` (default: this process, every thread)."""
    if parent is None:
        found: set[int] = set()
        for path in glob.glob("/proc/self/task/*/children"):
            with contextlib.suppress(OSError):
                found.update(int(pid) for pid in Path(path).read_text().split())
        return {pid for pid in found if is_running(pid)}
    return {pid for pid in descendants(parent, depth=1) if is_running(pid)}


def descendants(root: int, *, depth: int = 64) -> list[int]:
    """Every process below ``root`` (children first), from one walk of /proc."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(int(entry))) is not None:
            parents.setdefault(int(fields[1]), []).append(int(entry))
    found, level = [], [root]
    for _ in range(depth):
        level = [child for pid in level for child in parents.get(pid, [])]
        if not level:
            break
        found.extend(level)
    return found


def _kill_group_or_process(pid: int) -> None:
    """SIGKILL the group ``pid`` is in (never pytest's own group), and ``pid`` itself."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        group = os.getpgid(pid)
        if group != os.getpgrp():
            os.killpg(group, signal.SIGKILL)
        os.kill(pid, signal.SIGKILL)


def _kill_group(group: int) -> None:
    if group != os.getpgrp():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)


def kill_tree(proc: subprocess.Popen[Any]) -> None:
    """SIGKILL a process started by ``spawn``, its process group, and every descendant's
    group; reap the process."""
    if proc.poll() is not None:
        # Already reaped: its pid may name another process by now, but a group id is never
        # reused while the group has members, so what is left of its group is still ours.
        _kill_group(proc.pid)
        return
    below = descendants(proc.pid)  # before the kill: once the parent is gone they are orphans
    for pid in [proc.pid, *below]:
        _kill_group_or_process(pid)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(10)


def spawn(args: Sequence[str | os.PathLike[str]], **popen: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen`` in a new session, so ``kill_tree`` can end its whole group."""
    return subprocess.Popen(args, start_new_session=True, **popen)


@contextlib.contextmanager
def spawned(args: Sequence[str | os.PathLike[str]], **popen: Any) -> Iterator[subprocess.Popen[Any]]:
    """``spawn``, then ``kill_tree`` on the way out (whatever the test did to it meanwhile);
    its pipes are closed too."""
    proc = spawn(args, **popen)
    try:
        yield proc
    finally:
        kill_tree(proc)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def run(
    args: Sequence[str | os.PathLike[str]], *, timeout: float, input: str | bytes | None = None, **popen: Any
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(args, capture_output=True, ...)`` in a new session: when ``timeout``
    passes, the process and everything it started are killed before TimeoutExpired is raised."""
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    if input is None:
        popen.setdefault("stdin", subprocess.DEVNULL)
    else:
        popen["stdin"] = subprocess.PIPE
    with spawn(args, **popen) as proc:
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_tree(proc)
            proc.communicate()
            raise
        _kill_group(proc.pid)  # anything of its group it left running
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


class ProcessKeeper:
    """The processes one test started (the ``processes`` fixture); all killed at teardown."""

    def __init__(self) -> None:
        self._started: list[subprocess.Popen[Any]] = []

    def spawn(self, args: Sequence[str | os.PathLike[str]], **popen: Any) -> subprocess.Popen[Any]:
        proc = spawn(args, **popen)
        self._started.append(proc)
        return proc

    def kill_all(self) -> None:
        for proc in reversed(self._started):
            kill_tree(proc)
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
        self._started.clear()


def become_subreaper() -> bool:
    """Make orphaned descendants this process's children (Linux ``PR_SET_CHILD_SUBREAPER``)."""
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    return False


class LeftoverCheck:
    """pytest plugin: a test module that leaves a child process running errors at its
    last teardown (the process is killed first). Linux only (/proc, the subreaper)."""

    def __init__(self, *, grace: float = LEFTOVER_GRACE) -> None:
        self._grace = grace
        self._module: str | None = None
        self._before_module: set[int] = set()
        self._started_by: dict[int, str] = {}

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Any:
        module = item.nodeid.split("::")[0]
        if module != self._module:
            self._module, self._before_module = module, live_children()
        return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        failed = True
        try:
            result = yield
            failed = False
            return result
        finally:
            self._after_teardown(item, nextitem, raise_on_leftovers=not failed)

    def _after_teardown(
        self, item: pytest.Item, nextitem: pytest.Item | None, *, raise_on_leftovers: bool
    ) -> None:
        new = live_children() - self._before_module
        for pid in new:
            self._started_by.setdefault(pid, item.nodeid)
        module = item.nodeid.split("::")[0]
        if nextitem is not None and nextitem.nodeid.split("::")[0] == module:
            return  # module-scoped fixtures may still hold their processes
        deadline = time.monotonic() + self._grace
        while new and time.monotonic() < deadline:
            time.sleep(0.05)
            new = {pid for pid in new if is_running(pid)}
        if not new:
            return
        report = [f"pid {pid} ({command_line(pid)}), running since {self._started_by.get(pid, '?')}"
                  for pid in sorted(new)]
        for pid in new:
            _kill_group_or_process(pid)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
        message = f"{module} left {len(new)} child process(es) running (now killed): " + "; ".join(report)
        if raise_on_leftovers:
            raise pytest.fail.Exception(message, pytrace=False)
        sys.stderr.write(f"\n{message}\n")
