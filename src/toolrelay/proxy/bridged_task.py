"""One bridged task of ``task_bridge.py``: a host's task standing for an upstream task of
the other era, and how it reads now (what its host is shown, what that rests on)."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

from ..client.task_rules import created_task
from ..protocol import mcp as m
from ..protocol.exchange import Exchange
from ..protocol.jsonrpc import JSONObject
from ..protocol.tasks_ext import as_2025_task, as_ext_task, ended_ext_task, with_locked_names
from ..server.app import ServerSession
from .host_calls import HostCall

__all__ = ["BridgedTask", "abandoned_as", "fetching_end", "final_of", "host_left", "rests_on", "told"]

_NOT_PASSED: Final = frozenset({"resultType", "requestState", "inputRequests", "_meta"})
"""An upstream task state's keys that are its own leg's (the host gets the proxy's)."""


@dataclass(slots=True, kw_only=True)
class BridgedTask:
    """One host task standing for one upstream task of the other era (an extension task, or
    a 2025-11-25 server's: ``legacy``)."""

    task_id: str
    key: str
    server: str
    connection: int
    upstream_id: str
    owner: weakref.ref[ServerSession] | None
    """The 2025 host's session; None for a 2026-07-28 host (its task id is all that names it)."""
    host: int | None
    call: HostCall
    runner: asyncio.Future[Exchange]
    """The proxy's own following of the upstream task: the call's answer once it ends."""
    latest: Exchange
    """The latest upstream task state: the ``CreateTaskResult``, then each ``tasks/get``'s."""
    cancel: Exchange | None = None
    """The upstream ``tasks/cancel`` the host's ``tasks/cancel`` sent, once answered."""
    cancelled: bool = False
    seen: dict[str, Exchange] = field(default_factory=dict)
    """What the follower saw last: ``state`` (a task state), ``cancel`` (its tasks/cancel)."""
    told: tuple[Any, Any] = (None, None)
    """The (status, statusMessage) its 2025 host was last told (created, or a status notice)."""
    states: int = 0
    """The ``requestState``s a 2026-07-28 host was given (each task message a new one)."""
    pending: dict[str, tuple[str, JSONObject, asyncio.Future[JSONObject]]] = field(default_factory=dict)
    """What the task asks a 2026-07-28 host, by input key: (method, params, its answer:
    ``{"result": ...}``, or the proxy's own once it gives up)."""
    replying: dict[str, tuple[Any, asyncio.Task[Any]]] = field(default_factory=dict)
    """A 2025 server's asks by input key: (its request id, the task answering it, which sends
    the reply upstream as it ends: ``_decline_asks`` waits for it)."""
    declined: dict[str, Any] = field(default_factory=dict)
    """The asks the proxy answered itself, giving up (their host would not): input key →
    the upstream's id of its request."""
    echoed: Any = None
    """The ``requestState`` the 2026-07-28 host's latest ``tasks/update`` echoed."""
    timer: asyncio.TimerHandle | None = None
    given_up: str | None = None
    """Why the proxy is cancelling it upstream itself (``TaskBridge._give_up``); None: it is not."""
    giving_up: asyncio.Future[None] | None = None
    """That give-up, until the task's end is known (a ``tasks/get`` meanwhile waits for it)."""
    legacy: bool = False
    """The upstream is a 2025-11-25 server's task (``_follow_2025``): its states are 2025
    ``Task``s, its end the ``tasks/result`` the runner gives."""
    lost: JSONObject | None = None
    """A 2025 server's task it lost (its ``tasks/get`` answered an error): the error the
    task ends with for its host (``lost_task_error``, redacted)."""
    cancel_2025: Callable[[], Awaitable[None]] | None = None
    """Sends a 2025 server's task its ``tasks/cancel`` (the answer lands in ``seen``)."""

    def status(self) -> Any:
        """The upstream task's latest status (what the follower saw last)."""
        result = self.seen.get("state", self.latest).result or {}
        return (created_task(result) or result).get("status")

    def _state(self) -> JSONObject:
        """The upstream task's latest state in the extension's terms (its own leg's keys off; an
        older draft's names said as the locked spec's)."""
        raw = self.latest.result or {}
        if not self.legacy:
            return {k: v for k, v in with_locked_names(raw).items() if k not in _NOT_PASSED}
        state = as_ext_task(created_task(raw) or raw, self.task_id)
        final = final_of(self)
        ended = {"error": self.lost} if self.lost is not None else final.response if final is not None \
            and final.method == m.TASKS_RESULT else None
        if ended is not None and not self.cancelled:
            state = ended_ext_task(state, ended)  # its end, as tasks/result gave it (or its loss)
        return state

    def shown(self) -> JSONObject:
        """The task as the host is told it now (2025-11-25 ``Task``)."""
        shown = as_2025_task(self.latest.result or {}, self.task_id)
        return {**shown, "status": "cancelled"} if self.cancelled else shown

    def shown_modern(self, result_type: str) -> JSONObject:
        """The task as a 2026-07-28 host is told it now: the upstream task's latest state,
        with the proxy's id, the proxy's own ``requestState`` and its own input requests."""
        out = self._state()
        out["taskId"] = self.task_id
        if self.cancelled:
            out = {k: v for k, v in out.items() if k not in ("result", "error")} | {"status": "cancelled"}
        if out.get("status") == "input_required":
            out["inputRequests"] = {key: {"method": method, "params": params}
                                    for key, (method, params, _) in self.pending.items()}
        self.states += 1
        out["requestState"] = f"{self.task_id}-state-{self.states}"
        out["resultType"] = result_type
        return out


def told(state: JSONObject) -> tuple[Any, Any]:
    return state.get("status"), state.get("statusMessage")


def abandoned_as(task: BridgedTask) -> str:
    """How a task given up ended (``ProxyTaskAbandoned.outcome``)."""
    if task.cancel is None:
        return "unanswered"
    if task.cancel.error is None:
        return "cancelled"
    return "ended" if final_of(task) is not None else "refused"


def final_of(task: BridgedTask) -> Exchange | None:
    """A 2025 server's task's ``tasks/result``, once its follower got it (or the ``tasks/get``
    error that ended its following: the server lost the task)."""
    runner = task.runner
    if not task.legacy or not runner.done() or runner.cancelled() or runner.exception() is not None:
        return None
    final = runner.result()
    lost = final.method == m.TASKS_GET and final.error is not None
    return final if final.method == m.TASKS_RESULT or lost else None


def rests_on(task: BridgedTask) -> Exchange:
    """The upstream message a 2026-07-28 host's ``tasks/get`` rests on: a 2025 server's
    ended task's ``tasks/result``, else the latest state."""
    return final_of(task) or task.latest


def fetching_end(task: BridgedTask) -> bool:
    """Whether a 2025 server said the task ended and the follower is still getting its
    ``tasks/result``: a 2026-07-28 host's ``completed`` must carry the result."""
    return task.legacy and not task.runner.done() and task.status() in ("completed", "failed")


def host_left(task: BridgedTask) -> bool:
    """Whether the 2025 host that owns ``task`` has gone (its session ended)."""
    if task.owner is None:
        return False
    session = task.owner()
    return session is None or session.peer.closed is not None
