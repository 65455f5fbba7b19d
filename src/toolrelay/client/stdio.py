"""The stdio transport: a server as a child process speaking JSON lines on its pipes.

The child runs in its own process group (``start_new_session``) with the minimal
environment of ``environment.py``. Its stdout is a pipe of our own, read as soon as it
is readable straight into a ``LineFramer`` (no 64 KiB ``readline`` limit; oversized
lines are never buffered): asyncio's subprocess pipes would hand every chunk over one
event loop turn later, a third of the loop's work per call. stderr goes to the server's
``ServerLog``. Stopping follows the MCP lifecycle: close stdin, wait, SIGTERM the group,
wait, SIGKILL -- then any process left in the group (a grandchild such as ``npx``'s
``node``) gets the same treatment. No process is left behind when toolrelay itself is
told to stop or exits: ``shutdown.py`` keeps every group until it is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from ..errors import ServerExited, TransportError
from ..protocol import jsonrpc
from ..protocol.framing import LineFramer
from ..protocol.jsonrpc import JSONObject
from ..protocol.param_headers import Annotations
from .config import ServerConfig
from .environment import child_environment, redact
from .shutdown import forget_group, group_alive, kill_live_groups, signal_group, track_group, wait_group_gone
from .stderr_log import ServerLog
from .transport import ChannelEnd, Inbox

__all__ = ["StdioTransport", "kill_live_groups"]

log = logging.getLogger("toolrelay.client")

_SETTLE: Final = 0.5  # after an exit, how long the last stdout/stderr bytes may take to arrive
_KILL_WAIT: Final = 5.0  # after SIGKILL, how long to wait for the kernel to reap
_EXIT_TAIL_LINES: Final = 10  # stderr lines quoted when a server dies
_READ_SIZE: Final = 64 * 1024  # below malloc's mmap threshold (128 KiB)


class _StdoutReader:
    """The child's stdout, read as it becomes readable, each line to the inbox at once.

    Not asyncio's read-pipe transport: it reads 256 KiB at a time, a buffer that malloc
    serves with mmap, mremap and munmap on every read (measured here: 17 us per read of
    a 300-byte answer, against 1.5 us for a 64 KiB read)."""

    def __init__(self, fd: int, framer: LineFramer, inbox: Inbox, server: str) -> None:
        self._loop = asyncio.get_running_loop()
        self._fd = fd
        self._framer = framer
        self._inbox = inbox
        self._server = server
        self.closed: asyncio.Future[None] = self._loop.create_future()
        os.set_blocking(fd, False)
        self._loop.add_reader(fd, self._readable)

    def _readable(self) -> None:
        try:
            data = os.read(self._fd, _READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            log.warning("server %s: reading its stdout failed: %s", self._server, exc)
            data = b""
        if not data:  # end of file: the server closed its stdout
            self.close()
            return
        received = self._inbox.received
        for line in self._framer.feed(data):
            try:
                received(line)
            except Exception:  # a failing hook or subscriber must not drop the lines after it
                log.exception("server %s: handling a message failed", self._server)

    def close(self) -> None:
        if self._fd < 0:
            return
        self._loop.remove_reader(self._fd)
        os.close(self._fd)
        self._fd = -1
        _resolve(self.closed)


class _ChildProtocol(asyncio.SubprocessProtocol):
    """The child's stderr to the log; records when stdin closes and the process exits."""

    def __init__(self, log: ServerLog) -> None:
        loop = asyncio.get_running_loop()
        self._log = log
        self.exited: asyncio.Future[None] = loop.create_future()
        self.stdin_closed: asyncio.Future[None] = loop.create_future()
        self.finished: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self._log.write(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 0:
            _resolve(self.stdin_closed)

    def process_exited(self) -> None:
        _resolve(self.exited)

    def connection_lost(self, exc: Exception | None) -> None:
        _resolve(self.finished)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class StdioTransport:
    """One configured server run as a process; each ``open`` starts a new one."""

    def __init__(self, config: ServerConfig, *, log_dir: Path | None = None) -> None:
        self.config = config
        self._log = ServerLog(config.name, log_dir)
        self._child: _Child | None = None

    @property
    def pid(self) -> int | None:
        """The process id of the current (or last) process."""
        return self._child.pid if self._child is not None else None

    @property
    def log(self) -> ServerLog:
        """The server's stderr: one log file across restarts, and the last lines in memory."""
        return self._log

    async def open(self, inbox: Inbox, *, connection: int) -> None:
        """Spawn the server; TransportError naming the command if it cannot start."""
        config = self.config
        warning = self._log.open(f"starting server {config.name} (connection {connection}): {config.target}")
        if warning is not None:
            inbox.notice(f"server {config.name}: {warning}; stderr kept in memory only")
        self._child = _Child(config, self._log, inbox)
        await self._child.spawn()

    def send(self, message: JSONObject) -> None:
        """Write one message line to the server's stdin."""
        child = self._child
        if child is None:
            raise TransportError(f"server {self.config.name} is not running")
        child.send(message)

    def initialized(self, protocol_version: str) -> None:
        """Nothing to do: a pipe carries no protocol version."""

    def tool_headers(self, marked: Mapping[str, Annotations]) -> None:
        """Nothing to do: a pipe carries no headers."""

    async def close(self) -> None:
        """Stop the server the MCP way and reap everything; safe to call twice."""
        if self._child is not None:
            await self._child.close()
        self._log.close()


class _Child:
    """One server process: spawn, write messages, notice its end, stop it and its group."""

    def __init__(self, config: ServerConfig, server_log: ServerLog, inbox: Inbox) -> None:
        self.config = config
        self._log = server_log
        self._inbox = inbox
        self.pid: int | None = None
        self._transport: asyncio.SubprocessTransport | None = None
        self._protocol: _ChildProtocol | None = None
        self._reader: _StdoutReader | None = None
        self._stdin: asyncio.WriteTransport | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._stopping: asyncio.Task[None] | None = None
        self._stopper: asyncio.Task[None] | None = None
        self._ended = False

    # -- start --------------------------------------------------------------------------

    async def spawn(self) -> None:
        stdout_read, stdout_write = os.pipe()
        try:
            await self._exec(stdout_write)
        except BaseException:
            os.close(stdout_read)
            raise
        finally:
            os.close(stdout_write)  # the child holds its own copy
        framer = LineFramer(self.config.max_message_bytes)
        self._reader = _StdoutReader(stdout_read, framer, self._inbox, self.config.name)
        self._watcher = asyncio.ensure_future(self._watch())

    async def _exec(self, stdout: int) -> None:
        config = self.config
        protocol = _ChildProtocol(self._log)
        try:
            transport, _ = await asyncio.get_running_loop().subprocess_exec(
                lambda: protocol,
                config.command or "",
                *config.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=stdout,
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
        track_group(self.pid)

    # -- messages -----------------------------------------------------------------------

    def send(self, message: JSONObject) -> None:
        stdin = self._stdin
        if stdin is None or self._ended:
            raise TransportError(f"server {self.config.name} is not running")
        if not stdin.is_closing():
            stdin.write(jsonrpc.encode(message) + b"\n")
        if stdin.is_closing() and "id" not in message:  # closed before, or by this write failing
            # A notification has nobody waiting to be told: its sender is, here. (A request
            # dropped so is failed by the watcher, with the exit code and stderr.)
            raise TransportError(f"server {self.config.name} no longer reads its stdin")

    # -- end ----------------------------------------------------------------------------

    async def _watch(self) -> None:
        """Notice the end of the server (exit, or a pipe closed) and clean up after it."""
        protocol, reader = self._protocol, self._reader
        assert protocol is not None and reader is not None
        ends = (protocol.exited, reader.closed, protocol.stdin_closed)
        await asyncio.wait(ends, return_when=asyncio.FIRST_COMPLETED)
        # The last response and stderr lines may still be in the pipes: let them arrive.
        await asyncio.wait((protocol.finished, reader.closed), timeout=_SETTLE)
        if not protocol.exited.done():  # a pipe closed but the process lives on: stop it
            await self._stop()
        self._end()
        await self._sweep_group()

    def _end(self) -> None:
        """Tell the inbox, once, that the process is gone: its exit code and last words."""
        if self._ended:
            return
        self._ended = True
        code = self._transport.get_returncode() if self._transport is not None else None
        tail = redact(self._log.tail(_EXIT_TAIL_LINES), self.config.secrets)
        self._inbox.ended(ChannelEnd(
            error=ServerExited(self.config.name, code, tail),
            reason=f"exited (code {'unknown' if code is None else code})",
            returncode=code,
            stderr_tail=tail,
        ))

    async def close(self) -> None:
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
            self._end()
            await self._sweep_group()
        self._transport.close()
        assert self._protocol is not None and self._reader is not None
        self._reader.close()
        # pipes held open by a stray grandchild
        await asyncio.wait((self._protocol.finished, self._reader.closed), timeout=_SETTLE)

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
        signal_group(self.pid, signal.SIGTERM)
        if await self._wait_exit(grace):
            return
        signal_group(self.pid, signal.SIGKILL)
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
            if group_alive(pgid):
                signal_group(pgid, signal.SIGTERM)
                if not await wait_group_gone(pgid, self.config.shutdown_grace):
                    signal_group(pgid, signal.SIGKILL)
        finally:
            forget_group(pgid)


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
