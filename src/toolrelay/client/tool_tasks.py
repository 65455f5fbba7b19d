"""Tool calls run as MCP tasks (2025-11-25): the path of a tool whose
``execution.taskSupport`` is ``"required"``.

The ``tools/call`` carries ``params.task: {ttl}`` and the server answers at once with a
``CreateTaskResult``. toolrelay then polls ``tasks/get`` at the server's ``pollInterval``
(bounded by ``MIN_POLL`` and ``MAX_POLL``) until the task ends, or until it needs input
(``input_required``: ``tasks/result`` is asked at once, and the server's elicitation or
sampling requests, which carry the task's ``related-task`` meta, are answered as during
any call, tagged with the model's call). ``tasks/result`` gives the tool's own result or
error, which goes through the normal result path: the returned ``Exchange`` is the
``tools/call`` request answered by that response. Every message is tagged with the call.

The call's timeout covers the whole task; when it passes, or the caller is cancelled
(Ctrl-C), toolrelay sends ``tasks/cancel`` before giving up. A task that ends
``failed`` or ``cancelled`` is never a success (``settled_problem``).

A required tool is offered only where tasks can run (``tasks_unavailable``): a
2025-11-25 connection to a server declaring ``tasks.requests.tools.call``. In
2026-07-28 tasks moved to the extension ``io.modelcontextprotocol/tasks``, where the server
decides which calls become tasks (``ext_tasks.py``) and no call asks for one, so such tools
are hidden there. ``optional`` tools are called plainly.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, Final

from ..errors import ProtocolError, RequestTimeout, RpcError, ToolrelayError
from ..protocol import mcp as m
from ..protocol.exchange import Exchange, Sent
from ..protocol.jsonrpc import JSONObject, RequestId
from ..protocol.peer import Peer
from .task_rules import CANCEL_WAIT, DEFAULT_POLL, TASK_TTL_MS, created_task, poll_seconds, settled_problem

__all__ = ["ToolTaskCall", "late_reason", "time_left"]

_CLOCK_SLACK: Final = 0.05  # a timer may fire a clock tick before its deadline


def late_reason(limit: float | None, deadline: float | None, exc: RequestTimeout) -> str:
    """What ran out for a task call with ``limit`` (ending at ``deadline``, loop time): the
    call's time, or one poll's (a server that stopped answering). Both task kinds use it."""
    left = None if deadline is None else deadline - asyncio.get_running_loop().time()
    if limit is not None and left is not None and left < _CLOCK_SLACK:
        return f"did not end within {limit:g} s"
    return f"stalled: {exc}"


def time_left(deadline: float | None, task_id: str | None, otherwise: float) -> float:
    """Seconds left of a task call's time (``otherwise`` without a limit); RequestTimeout
    once it is spent."""
    if deadline is None:
        return otherwise
    left = deadline - asyncio.get_running_loop().time()
    if left <= 0:
        raise RequestTimeout(f"the task {task_id} ran out of time")
    return left


@dataclass(slots=True, kw_only=True)
class ToolTaskCall:
    """One ``tools/call`` run as a task, from creation to its result (or cancellation)."""

    peer: Peer
    server: str
    tool: str
    call_id: str | None
    limit: float | None
    """The call's timeout: it covers the whole task."""
    request_timeout: float
    owners: dict[str, tuple[str | None, RequestId]] = field(default_factory=dict)
    """taskId → (call_id, the tools/call's MCP id) for the task's duration: how a server
    request carrying the task's related-task meta is told to belong to the call."""
    on_sent: Sent | None = None
    """Told the tools/call once it is on the wire (and, cancelled, the call as abandoned)."""
    _deadline: float | None = None
    _task_id: str = ""

    async def run(self, params: JSONObject) -> Exchange:
        """The tools/call exchange, answered by the task's ``tasks/result``; raises like
        ``Peer.call`` (naming the tools/call) when no result can come."""
        loop = asyncio.get_running_loop()
        self._deadline = None if self.limit is None else loop.time() + self.limit
        sent = {**params, "task": {"ttl": TASK_TTL_MS}}
        created = await self.peer.call(m.CALL_TOOL, sent, timeout=self.limit, tag=self.call_id,
                                       on_sent=self.on_sent)
        task = created_task(created.result)
        if created.error is not None or task is None:
            return created  # an error, or a plain result: the normal path judges it
        task_id = task.get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise ProtocolError(f"server {self.server} answered tools/call {self.tool} with a task "
                                "without a taskId").for_request(created.mcp_id, created.request)
        self._task_id = task_id
        self.owners[task_id] = (self.call_id, created.mcp_id)
        try:
            status, final = await self._follow(task)
        except RequestTimeout as exc:
            late = self._late(exc)
            await self._cancel()
            raise RequestTimeout(f"tools/call {self.tool} (task {task_id}) {late}; toolrelay cancelled the "
                                 "task (tasks/cancel)").for_request(created.mcp_id, created.request) from None
        except asyncio.CancelledError:
            # the call, not its last poll, is what was abandoned (the cancelled outcome names it)
            if self.on_sent is not None:  # sent, not answered: its creation is no answer
                self.on_sent(Exchange(created.mcp_id, m.CALL_TOOL, created.request, started=created.started))
            with contextlib.suppress(BaseException):  # best effort: the run is stopping
                await asyncio.shield(asyncio.ensure_future(self._cancel()))
            raise
        except ToolrelayError as exc:
            raise exc.for_request(created.mcp_id, created.request) from None
        finally:
            self.owners.pop(task_id, None)
        problem = settled_problem(self.server, self.tool, task_id, status, final)
        if problem is not None:
            raise ProtocolError(problem).for_request(created.mcp_id, created.request)
        return _answered_by(created, final)

    async def _follow(self, task: dict[str, Any]) -> tuple[Any, Exchange]:
        """Poll until the task ends or needs input; its last status and ``tasks/result``."""
        status, interval = task.get("status"), poll_seconds(task, DEFAULT_POLL)
        while status not in m.TERMINAL_TASK_STATUSES and status != "input_required":
            await asyncio.sleep(min(interval, self._remaining(interval)))
            wait = min(self.request_timeout, self._remaining(self.request_timeout))
            got = await self._ask(m.TASKS_GET, wait)
            try:
                state = got.raise_for_error()
            except RpcError as exc:
                raise ProtocolError(f"server {self.server} answered tasks/get for task {self._task_id} "
                                    f"with error {exc.code}: {exc.rpc_message}") from None
            status, interval = state.get("status"), poll_seconds(state, interval)
        final = await self._ask(m.TASKS_RESULT, None if self._deadline is None else self._remaining(0))
        return status, final

    def _late(self, exc: RequestTimeout) -> str:
        return late_reason(self.limit, self._deadline, exc)

    def _remaining(self, otherwise: float) -> float:
        return time_left(self._deadline, self._task_id, otherwise)

    async def _ask(self, method: str, timeout: float | None) -> Exchange:
        return await self.peer.call(method, {"taskId": self._task_id}, timeout=timeout, tag=self.call_id)

    async def _cancel(self) -> None:
        """``tasks/cancel``, answered or not (a task that already ended refuses it)."""
        with contextlib.suppress(ToolrelayError):
            await self._ask(m.TASKS_CANCEL, min(self.request_timeout, CANCEL_WAIT))


def _answered_by(created: Exchange, final: Exchange) -> Exchange:
    """The tools/call exchange as the call's result path reads it: its request, answered by
    the task's ``tasks/result`` response."""
    exchange = Exchange(created.mcp_id, m.CALL_TOOL, created.request, started=created.started)
    exchange.response, exchange.result, exchange.error = final.response, final.result, final.error
    exchange.elapsed = time.monotonic() - created.started
    return exchange
