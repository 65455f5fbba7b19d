"""Client-side tasks (2025-11-25): a server's ``sampling/createMessage`` or
``elicitation/create`` carrying ``params.task`` runs in the background, and the server
follows it with ``tasks/get``, ``tasks/result``, ``tasks/list`` and ``tasks/cancel``.

The request is answered at once with a ``CreateTaskResult`` (status ``working``); the
work (approval, model, prompt) goes on as an asyncio task. ``tasks/result`` waits for it
and returns exactly the underlying result, or its JSON-RPC error, with
``_meta["io.modelcontextprotocol/related-task"]``. A finished task is kept for its ``ttl``
(capped), then forgotten; an unknown or forgotten id is -32602. Each task remembers the
model's call during which it was created, so the server's follow-up requests are recorded
with that call too.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, Final

from ...errors import RpcError
from ...protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JSONObject
from ...protocol.mcp import RELATED_TASK

__all__ = ["ClientTasks"]

DEFAULT_TTL_MS: Final = 300_000
MAX_TTL_MS: Final = 3_600_000
POLL_INTERVAL_MS: Final = 500
_TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(slots=True, kw_only=True)
class _Task:
    task_id: str
    call_id: str | None
    ttl: int
    work: asyncio.Task[JSONObject] | None = None
    status: str = "working"
    message: str | None = None
    created: str = field(default_factory=_now)
    updated: str = ""
    result: JSONObject | None = None
    error: RpcError | None = None
    settled: bool = False

    def to_json(self) -> JSONObject:
        task: JSONObject = {"taskId": self.task_id, "status": self.status, "createdAt": self.created,
                            "lastUpdatedAt": self.updated or self.created, "ttl": self.ttl,
                            "pollInterval": POLL_INTERVAL_MS}
        if self.message is not None:
            task["statusMessage"] = self.message
        return task


class ClientTasks:
    """The tasks one connection runs for its server."""

    def __init__(self) -> None:
        self._tasks: dict[str, _Task] = {}

    def call_of(self, params: JSONObject | None) -> str | None:
        """The call during which the task ``params.taskId`` names was created."""
        task = self._tasks.get(str((params or {}).get("taskId")))
        return task.call_id if task is not None else None

    def start(self, work: Awaitable[JSONObject], requested: Any, call_id: str | None) -> JSONObject:
        """Run ``work`` as a task; the ``CreateTaskResult`` to answer with now."""
        ttl = requested.get("ttl") if isinstance(requested, dict) else None
        ttl = min(ttl, MAX_TTL_MS) if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl > 0 \
            else DEFAULT_TTL_MS
        task = _Task(task_id=str(uuid.uuid4()), call_id=call_id, ttl=ttl)
        self._tasks[task.task_id] = task
        task.work = asyncio.ensure_future(work)
        task.work.add_done_callback(lambda done: self._finished(task, done))
        return {"task": task.to_json()}

    def _finished(self, task: _Task, done: asyncio.Task[JSONObject]) -> None:
        """Record how the work ended (once: its done callback, or whoever reads it first)."""
        if task.settled:
            return
        task.settled = True
        if done.cancelled():
            task.status = "cancelled"
        elif isinstance(done.exception(), RpcError):
            error = done.exception()
            assert isinstance(error, RpcError)
            task.status, task.error, task.message = "failed", error, error.rpc_message
        elif done.exception() is not None:
            exc = done.exception()
            task.status, task.message = "failed", f"{type(exc).__name__}: {exc}"
            task.error = RpcError(INTERNAL_ERROR, f"Internal error: {task.message}")
        else:
            task.status, task.result = "completed", done.result()
        task.updated = _now()
        with contextlib.suppress(RuntimeError):  # the loop is closing: nothing to forget then
            asyncio.get_running_loop().call_later(task.ttl / 1000, self._tasks.pop, task.task_id, None)

    def _task(self, params: JSONObject | None) -> _Task:
        task_id = (params or {}).get("taskId")
        task = self._tasks.get(task_id) if isinstance(task_id, str) else None
        if task is None:
            raise RpcError(INVALID_PARAMS, f"Failed to retrieve task: Task not found ({task_id!r})")
        return task

    def get(self, params: JSONObject | None) -> JSONObject:
        """``tasks/get``: the task's state."""
        return self._task(params).to_json()

    async def result(self, params: JSONObject | None) -> JSONObject:
        """``tasks/result``: waits until the task ends; its result or error, marked as the task's."""
        task = self._task(params)
        if task.work is not None:
            if not task.work.done():
                with contextlib.suppress(BaseException):  # its outcome is read below
                    await asyncio.shield(task.work)
            self._finished(task, task.work)  # its done callback may not have run yet
        meta = {RELATED_TASK: {"taskId": task.task_id}}
        if task.error is not None:
            data = task.error.data if isinstance(task.error.data, dict) else {}
            raise RpcError(task.error.code, task.error.rpc_message, {**data, "_meta": meta})
        if task.result is None:
            raise RpcError(INVALID_PARAMS, f"Task {task.task_id} was cancelled: it has no result")
        return {**task.result, "_meta": {**task.result.get("_meta", {}), **meta}}

    def list(self, params: JSONObject | None) -> JSONObject:
        """``tasks/list``: every task still kept (one page)."""
        return {"tasks": [task.to_json() for task in self._tasks.values()]}

    def cancel(self, params: JSONObject | None) -> JSONObject:
        """``tasks/cancel``: stops a task still working; a finished one is -32602."""
        task = self._task(params)
        if task.status in _TERMINAL:
            raise RpcError(INVALID_PARAMS, f"Cannot cancel task {task.task_id}: it is already {task.status}")
        task.status, task.updated = "cancelled", _now()
        if task.work is not None:
            task.work.cancel()
        return task.to_json()

    def close(self) -> None:
        """The connection is over: stop every task still working."""
        for task in self._tasks.values():
            if task.work is not None and not task.work.done():
                task.work.cancel()
        self._tasks.clear()
