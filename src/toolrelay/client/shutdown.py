"""How servers are stopped when toolrelay itself is told to stop, and at exit.

A stdio server runs in its own process group (``stdio.py``), so a signal to toolrelay does
not reach it. This module keeps the groups of servers not yet stopped and the connections
that may have requests in flight, and installs, once per process, the backstop:

- **SIGTERM / SIGHUP** to toolrelay: on the event loop (never inside whatever code the
  signal interrupted), every connection first cancels its requests in flight, each with
  ``notifications/cancelled`` (recorded; one that could not be written says so); then
  toolrelay exits through the normal unwinding (``SystemExit``), which stops each server
  the MCP way: stdin closed after those cancellations, then SIGTERM, then SIGKILL.
- **While servers stop** (``stopping_servers``), a further SIGINT, SIGTERM or SIGHUP does
  not break the stopping off (that is how a server was left behind): it hurries it,
  SIGKILL to every group left, and is delivered again once the servers are stopped.
- **At exit** (``atexit``), any group still alive gets SIGTERM, then SIGKILL; from then on
  SIGINT, SIGTERM and SIGHUP are ignored, so a last Ctrl-C cannot cut that short (or turn
  the exit into a traceback).
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
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

__all__ = [
    "InFlight",
    "forget_group",
    "forget_in_flight",
    "group_alive",
    "install_backstop",
    "kill_live_groups",
    "signal_group",
    "stopping_servers",
    "track_group",
    "track_in_flight",
    "wait_group_gone",
]

log = logging.getLogger("toolrelay.client")

# By name: a platform without one (Windows has no SIGHUP) simply lacks it.
_STOP_SIGNALS: Final = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                             if hasattr(signal, name))
_TERMINATING: Final = tuple(s for s in _STOP_SIGNALS if s != signal.SIGINT)
_LOOP_LATE: Final = 1.0  # an event loop that has not run a callback for this long is stuck


class InFlight(Protocol):
    """A connection that can give up on its requests in flight before its server stops."""

    def cancel_in_flight(self, reason: str) -> None: ...


_GROUPS: set[int] = set()  # process groups of servers not yet fully stopped
_IN_FLIGHT: weakref.WeakKeyDictionary[InFlight, asyncio.AbstractEventLoop] = weakref.WeakKeyDictionary()


@dataclass
class _State:
    """What the signal handlers have seen (one process, one set of handlers)."""

    backstop_installed: bool = False
    terminate_scheduled: float | None = None
    """When SIGTERM / SIGHUP handed the cancellations to the event loop (monotonic time)."""
    terminate_ran: bool = False
    stopping_depth: int = 0
    """How many ``stopping_servers`` blocks are open (servers may stop concurrently)."""
    saved_handlers: dict[int, Any] = field(default_factory=dict)
    caught: list[int] = field(default_factory=list)
    """Signals that arrived while servers stopped, to deliver again afterwards."""


_STATE = _State()


# -- registries --------------------------------------------------------------------------


def track_group(pgid: int) -> None:
    """A server's process group, to stop if toolrelay is stopped before it is."""
    install_backstop()
    _GROUPS.add(pgid)


def forget_group(pgid: int) -> None:
    _GROUPS.discard(pgid)


def track_in_flight(connection: InFlight) -> None:
    """A connection whose requests in flight are cancelled first when toolrelay is told to
    stop (kept weakly; on the running event loop, the one it is used from)."""
    install_backstop()
    _IN_FLIGHT[connection] = asyncio.get_running_loop()


def forget_in_flight(connection: InFlight) -> None:
    _IN_FLIGHT.pop(connection, None)


# -- process groups ----------------------------------------------------------------------


def signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def group_alive(pgid: int) -> bool:
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


async def wait_group_gone(pgid: int, timeout: float) -> bool:
    """Poll until no process of the group runs (there is no event to wait on for that)."""
    deadline = time.monotonic() + timeout
    while group_alive(pgid):
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def _hurry() -> None:
    """SIGKILL every server group not yet stopped: asked to stop again while stopping."""
    for pgid in list(_GROUPS):
        signal_group(pgid, signal.SIGKILL)


def kill_live_groups(wait: float = 0.5) -> None:
    """SIGTERM every server group still alive, then SIGKILL what remains after ``wait``;
    signals are ignored meanwhile (it is toolrelay's last act: nothing may cut it short)."""
    with _signals_ignored():
        groups = [pgid for pgid in _GROUPS if group_alive(pgid)]
        for pgid in groups:
            signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + wait
        while groups and time.monotonic() < deadline:
            groups = [pgid for pgid in groups if group_alive(pgid)]
            time.sleep(0.02)
        for pgid in groups:
            signal_group(pgid, signal.SIGKILL)
        _GROUPS.clear()


def _at_exit() -> None:
    """toolrelay is exiting: nothing may interrupt it any more, then no server may outlive it."""
    if threading.current_thread() is threading.main_thread():
        for signum in _STOP_SIGNALS:
            if signal.getsignal(signum) is not None:
                signal.signal(signum, signal.SIG_IGN)
    kill_live_groups()


@contextlib.contextmanager
def _signals_ignored() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in _STOP_SIGNALS}
    for signum in previous:
        signal.signal(signum, signal.SIG_IGN)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            if handler is not None:
                signal.signal(signum, handler)


# -- stopping ----------------------------------------------------------------------------


@contextlib.contextmanager
def stopping_servers() -> Iterator[None]:
    """Around stopping servers: a SIGINT, SIGTERM or SIGHUP meanwhile hurries the stop
    (SIGKILL to every group left) instead of breaking it off, and is delivered again, to
    the handler it was meant for, once the last such block is over."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only
        return
    if _STATE.stopping_depth == 0:
        _STATE.saved_handlers = {s: signal.getsignal(s) for s in _STOP_SIGNALS}
        for signum, handler in _STATE.saved_handlers.items():
            if handler is not None:  # None: set outside Python, cannot be put back
                signal.signal(signum, _hurry_instead)
    _STATE.stopping_depth += 1
    try:
        yield
    finally:
        _STATE.stopping_depth -= 1
        if _STATE.stopping_depth == 0:
            _restore_and_deliver()


def _hurry_instead(signum: int, frame: Any) -> None:
    _STATE.caught.append(signum)
    _hurry()


def _restore_and_deliver() -> None:
    for signum, handler in _STATE.saved_handlers.items():
        if handler is not None:
            signal.signal(signum, handler)
    caught, _STATE.caught = list(dict.fromkeys(_STATE.caught)), []
    for signum in caught:
        signal.raise_signal(signum)  # its own handler runs now: KeyboardInterrupt, SystemExit...


def _on_terminate(signum: int, frame: Any) -> None:
    """SIGTERM / SIGHUP: cancel what is in flight on the event loop, then exit (see the
    module docstring). A second one while that runs hurries the servers' stop; with no
    event loop running (or one stuck for a second without getting to it), the servers get
    the signal and toolrelay exits at once."""
    if _STATE.terminate_ran:
        _hurry()
        return
    if _STATE.terminate_scheduled is not None and time.monotonic() - _STATE.terminate_scheduled < _LOOP_LATE:
        return  # a burst (SIGHUP then SIGTERM): the loop is about to do it
    loop = None
    with contextlib.suppress(RuntimeError):
        loop = asyncio.get_running_loop()
    if loop is None or _STATE.terminate_scheduled is not None:
        for pgid in list(_GROUPS):
            signal_group(pgid, signal.SIGTERM)
        raise SystemExit(128 + signum)
    _STATE.terminate_scheduled = time.monotonic()
    loop.call_soon_threadsafe(_terminate, signum, loop)


def _terminate(signum: int, loop: asyncio.AbstractEventLoop) -> None:
    _STATE.terminate_ran = True
    reason = f"toolrelay is stopping ({signal.Signals(signum).name})"
    for connection, its_loop in list(_IN_FLIGHT.items()):
        if its_loop is loop:
            try:
                connection.cancel_in_flight(reason)
            except Exception:  # one connection's failure must not keep the others' cancellations
                log.exception("cancelling the requests in flight failed")
    raise SystemExit(128 + signum)


def install_backstop() -> None:
    """Once per process: stop leftover servers at exit, and take SIGTERM / SIGHUP (unless
    the application handles them itself)."""
    if _STATE.backstop_installed:
        return
    _STATE.backstop_installed = True
    atexit.register(_at_exit)
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in _TERMINATING:
        if signal.getsignal(signum) is signal.SIG_DFL:  # never replace an application's handler
            signal.signal(signum, _on_terminate)
