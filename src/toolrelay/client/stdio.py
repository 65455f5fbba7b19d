"""The stdio transport: a server as a child process speaking JSON lines on its pipes.

The child runs in its own process group (``start_new_session``) with the minimal
environment of ``environment.py``. stdout is read by an asyncio protocol straight into
a ``LineFramer`` (no 64 KiB ``readline`` limit; oversized lines are never buffered);
stderr goes to the server's ``ServerLog``. Stopping follows the MCP lifecycle: close
stdin, wait, SIGTERM the group, wait, SIGKILL -- then any process left in the group
(a grandchild such as ``npx``'s ``node``) gets the same treatment. No process is left
behind: an ``atexit`` hook and a SIGTERM handler kill groups still alive when
toolrelay itself is interrupted.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Any, Final

from ..errors import TransportError
from ..protocol import jsonrpc
from ..protocol.framing import LineFramer, Oversized
from ..protocol.jsonrpc import JSONObject
from .config import ServerConfig
from .environment import child_environment
from .serverlog import ServerLog

__all__ = ["StdioTransport", "kill_live_groups"]

LineHandler = Callable[[bytes | Oversized], None]
log = logging.getLogger("toolrelay.client")

_SETTLE: Final = 0.5  # after an exit, how long the last stdout/stderr bytes may take to arrive
_KILL_WAIT: Final = 5.0  # after SIGKILL, how long to wait for the kernel to reap


class _ChildProtocol(asyncio.SubprocessProtocol):
    """Routes the child's stdout to the framer and stderr to the log; records its end."""

    def __init__(self, framer: LineFramer, on_line: LineHandler, log: ServerLog) -> None:
        loop = asyncio.get_running_loop()
        self._framer = framer
        self._on_line = on_line
        self._log = log
        self.exited: asyncio.Future[None] = loop.create_future()
        self.stdin_closed: asyncio.Future[None] = loop.create_future()
        self.stdout_closed: asyncio.Future[None] = loop.create_future()
        self.finished: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd != 1:
            self._log.write(data)
            return
        for line in self._framer.feed(data):
            try:
                self._on_line(line)
            except Exception:  # a failing hook or subscriber must not drop the lines after it
                log.exception("server %s: handling a message failed", self._log.server)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 0:
            _resolve(self.stdin_closed)
        elif fd == 1:
            _resolve(self.stdout_closed)

    def process_exited(self) -> None:
        _resolve(self.exited)

    def connection_lost(self, exc: Exception | None) -> None:
        _resolve(self.finished)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class StdioTransport:
    """One server process: spawn, write messages, stop it and everything it started."""

    def __init__(self, config: ServerConfig, on_line: LineHandler, log: ServerLog) -> None:
        self.config = config
        self._on_line = on_line
        self._log = log
        self._transport: asyncio.SubprocessTransport | None = None
        self._protocol: _ChildProtocol | None = None
        self._stdin: asyncio.WriteTransport | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._stopping: asyncio.Task[None] | None = None
        self._stopper: asyncio.Task[None] | None = None
        self.pid: int | None = None
        self.ended: asyncio.Future[int | None] | None = None
        """Resolves with the exit code (None if unknown) once the server cannot answer."""

    # -- start --------------------------------------------------------------------------

    async def start(self) -> None:
        """Spawn the server; TransportError naming the command if it cannot start."""
        loop = asyncio.get_running_loop()
        config = self.config
        install_backstop()
        framer = LineFramer(config.max_message_bytes)
        protocol = _ChildProtocol(framer, self._on_line, self._log)
        try:
            transport, _ = await loop.subprocess_exec(
                lambda: protocol,
                config.command or "",
                *config.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=child_environment(config.env),
                cwd=config.cwd,
                start_new_session=True,  # its own group: we can stop it and its children together
            )
        except OSError as exc:
            raise TransportError(_spawn_failure(config, exc)) from None
        self._transport, self._protocol = transport, protocol
        self.pid = transport.get_pid()
        stdin = transport.get_pipe_transport(0)
        assert isinstance(stdin, asyncio.WriteTransport)
        self._stdin = stdin
        _GROUPS.add(self.pid)
        self.ended = loop.create_future()
        self._watcher = asyncio.ensure_future(self._watch())

    # -- messages -----------------------------------------------------------------------

    def send(self, message: JSONObject) -> None:
        """Write one message line to the server's stdin."""
        stdin = self._stdin
        if stdin is None or (self.ended is not None and self.ended.done()):
            raise TransportError(f"server {self.config.name} is not running")
        if stdin.is_closing():
            return  # it stopped reading (it is exiting): the watcher fails what is pending
        stdin.write(jsonrpc.encode(message) + b"\n")

    @property
    def returncode(self) -> int | None:
        return self._transport.get_returncode() if self._transport is not None else None

    # -- end ----------------------------------------------------------------------------

    async def _watch(self) -> None:
        """Notice the end of the server (exit, or a pipe closed) and clean up after it."""
        protocol, ended = self._protocol, self.ended
        assert protocol is not None and ended is not None
        ends = (protocol.exited, protocol.stdout_closed, protocol.stdin_closed)
        await asyncio.wait(ends, return_when=asyncio.FIRST_COMPLETED)
        # The last response and stderr lines may still be in the pipes: let them arrive.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(protocol.finished), _SETTLE)
        if not protocol.exited.done():  # a pipe closed but the process lives on: stop it
            await self._stop()
        _resolve_code(ended, self.returncode)
        await self._sweep_group()

    async def close(self) -> None:
        """Stop the server the MCP way and reap everything; safe to call twice."""
        if self._transport is None:
            return
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._close())
        await asyncio.shield(self._stopping)

    async def _close(self) -> None:
        assert self._transport is not None and self._watcher is not None
        if self._protocol is not None and not self._protocol.exited.done():
            await self._stop()
        await asyncio.wait([self._watcher])
        if self._watcher.cancelled():  # asyncio.run's shutdown cancels every task: do its job
            assert self.ended is not None
            _resolve_code(self.ended, self.returncode)
            await self._sweep_group()
        self._transport.close()
        assert self._protocol is not None
        with contextlib.suppress(TimeoutError):  # pipes held open by a stray grandchild
            await asyncio.wait_for(asyncio.shield(self._protocol.finished), _SETTLE)

    async def _stop(self) -> None:
        """Run the shutdown sequence once, whoever asks first (close() or the watcher)."""
        if self._stopper is None:
            self._stopper = asyncio.ensure_future(self._stop_process())
        await asyncio.shield(self._stopper)

    async def _stop_process(self) -> None:
        """Close stdin, wait, SIGTERM the group, wait, SIGKILL (the MCP shutdown order)."""
        assert self._stdin is not None and self.pid is not None
        grace = self.config.shutdown_grace
        self._stdin.close()
        if await self._wait_exit(grace):
            return
        _signal_group(self.pid, signal.SIGTERM)
        if await self._wait_exit(grace):
            return
        _signal_group(self.pid, signal.SIGKILL)
        await self._wait_exit(_KILL_WAIT)

    async def _wait_exit(self, timeout: float) -> bool:
        assert self._protocol is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._protocol.exited), timeout)
        return self._protocol.exited.done()

    async def _sweep_group(self) -> None:
        """The leader is gone; stop whatever else is left in its process group."""
        pgid = self.pid
        assert pgid is not None
        try:
            if _group_alive(pgid):
                _signal_group(pgid, signal.SIGTERM)
                if not await _wait_group_gone(pgid, self.config.shutdown_grace):
                    _signal_group(pgid, signal.SIGKILL)
        finally:
            _GROUPS.discard(pgid)


async def _wait_group_gone(pgid: int, timeout: float) -> bool:
    """Poll until no process of the group runs (there is no event to wait on for that)."""
    deadline = time.monotonic() + timeout
    while _group_alive(pgid):
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def _resolve_code(future: asyncio.Future[int | None], code: int | None) -> None:
    if not future.done():
        future.set_result(code)


def _spawn_failure(config: ServerConfig, exc: OSError) -> str:
    command = config.command or ""
    if config.cwd is not None and exc.filename == config.cwd:
        return f"cannot start server {config.name}: cwd {config.cwd}: {exc.strerror}"
    if isinstance(exc, FileNotFoundError):
        hint = ""
        if " " in command.strip() and not config.args:
            hint = ' (the command must name one program; put its arguments in "args")'
        return f"cannot start server {config.name}: command {command!r} not found{hint}"
    if isinstance(exc, PermissionError):
        return f"cannot start server {config.name}: command {command!r} is not executable"
    return f"cannot start server {config.name}: {exc.strerror or exc}"


# -- process groups ----------------------------------------------------------------------

_GROUPS: set[int] = set()  # process groups of servers not yet fully stopped
_BACKSTOP_INSTALLED = False


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _group_alive(pgid: int) -> bool:
    """Whether any process of the group is still running (zombies do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True  # no /proc: trust killpg
    return any(_running_in_group(entry, pgid) for entry in entries if entry.isdigit())


def _running_in_group(pid: str, pgid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
    except OSError:
        return False
    return len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X")


def kill_live_groups(wait: float = 0.5) -> None:
    """SIGTERM every server group still alive, then SIGKILL what remains after ``wait``."""
    groups = [pgid for pgid in _GROUPS if _group_alive(pgid)]
    for pgid in groups:
        _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while groups and time.monotonic() < deadline:
        groups = [pgid for pgid in groups if _group_alive(pgid)]
        time.sleep(0.02)
    for pgid in groups:
        _signal_group(pgid, signal.SIGKILL)
    _GROUPS.clear()


def _on_terminate(signum: int, frame: Any) -> None:
    """SIGTERM/SIGHUP to toolrelay: pass it on to the servers, then exit through the normal
    unwinding so every connection's close() still runs."""
    for pgid in list(_GROUPS):
        _signal_group(pgid, signal.SIGTERM)
    raise SystemExit(128 + signum)


def install_backstop() -> None:
    """Once per process: kill leftover servers at exit, and on SIGTERM / SIGHUP."""
    global _BACKSTOP_INSTALLED
    if _BACKSTOP_INSTALLED:
        return
    _BACKSTOP_INSTALLED = True
    atexit.register(kill_live_groups)
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is signal.SIG_DFL:  # never replace an application's handler
            signal.signal(signum, _on_terminate)
