"""Helpers for the client tests: configs for the test servers, an event recorder, process checks.

Async tests run through ``run(...)`` (asyncio.run with a deadline); every connection a
test opens is closed by ``open_connection`` so no process outlives its test.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from testkit.processes import spawned
from testkit.servers import SDK_SERVER, SERVERS
from toolrelay.client.config import ServerConfig
from toolrelay.client.connection import Connection
from toolrelay.events import MCP_REQUEST, Event, EventStream, McpMessage, Notice

HERE = Path(__file__).resolve().parent
PYTHON = sys.executable
T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T], timeout: float = 60.0) -> T:
    """Run one async test body with a deadline."""

    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


def stdio_config(script: str, *args: str, name: str = "t", **fields: Any) -> ServerConfig:
    """A stdio ServerConfig for one of the test servers (testkit/servers/)."""
    return ServerConfig(name=name, transport="stdio", command=PYTHON,
                        args=(str(SERVERS / script), *args), **fields)


class Recorder:
    """Subscribes to an EventStream and keeps every event."""

    def __init__(self) -> None:
        self.events = EventStream()
        self.seen: list[Event] = []
        self.events.subscribe(self.seen.append)

    def kinds(self) -> list[str]:
        return [event.event_kind for event in self.seen]

    def of(self, kind: str) -> list[Any]:
        return [event for event in self.seen if event.event_kind == kind]

    def notices(self) -> list[str]:
        return [event.text for event in self.seen if isinstance(event, Notice)]

    async def sent(self, tool: str, timeout: float = 5.0) -> None:
        """Until a ``tools/call`` of ``tool`` has been sent (its ``mcp_request`` event)."""

        def found() -> bool:
            return any(isinstance(event, McpMessage) and event.role == MCP_REQUEST
                       and event.method == "tools/call" and event.message["params"]["name"] == tool
                       for event in self.seen)

        assert await async_wait_until(found, timeout), f"no tools/call of {tool} was sent"


@contextlib.asynccontextmanager
async def open_connection(
    config: ServerConfig, log_dir: Path, recorder: Recorder | None = None, *, start: bool = True, **kw: Any
) -> AsyncIterator[Connection]:
    connection = Connection(config, (recorder or Recorder()).events, log_dir=log_dir, **kw)
    try:
        if start:
            await connection.start()
        yield connection
    finally:
        await connection.close()


def process_running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            state = stat.read().rpartition(b")")[2].split()[0]
    except OSError:
        return False
    return state not in (b"Z", b"X")


def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


async def async_wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.02)
    return predicate()


async def elapsed(awaitable: Awaitable[T]) -> tuple[float, T | BaseException]:
    """How long ``awaitable`` took, and its result or the exception it raised."""
    started = time.monotonic()
    try:
        outcome: T | BaseException = await awaitable
    except Exception as exc:
        outcome = exc
    return time.monotonic() - started, outcome


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_port(port: int, process: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    """Block until something listens on ``port`` (or the process died)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode} before listening")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port} after {timeout} s")


@contextlib.contextmanager
def sdk_http_server(mode: str = "http", *options: str, script: Path = SDK_SERVER) -> Any:
    """An SDK test server (``script``: sdk_server.py, or another taking ``MODE PORT
    [OPTIONS]``) on a free loopback port; yields its /mcp URL."""
    port = free_port()
    with spawned([PYTHON, str(script), mode, str(port), *options],
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as process:
        wait_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
