"""Tool calls a 2026-07-28 server runs as tasks of the extension ``io.modelcontextprotocol/tasks``
(SEP-2663), client side.

toolrelay declares the extension in every 2026-07-28 request's capabilities (it can run
tasks), so the server may answer any ``tools/call`` with ``resultType: "task"``: the server
alone decides, and the call is otherwise a plain one. toolrelay then polls ``tasks/get``
at the task's ``pollIntervalMs`` (within ``MIN_POLL``..``MAX_POLL``; an older draft's
``pollIntervalMilliseconds`` is honoured too) until the task ends. While it is
``input_required`` its ``inputRequests`` are answered by the host's handlers exactly as an
``input_required`` answer's are (each key once: a key already answered is not answered
again) and sent back in ``tasks/update``. The locked spec's ``tasks/*`` params are the
``taskId`` alone (and ``inputResponses``); a ``requestState`` is sent only when the latest
task message gave one (an older draft's servers do), echoed as given. ``completed`` gives
the task's ``result`` and ``failed`` its JSON-RPC ``error``
(``protocol.tasks_ext.settled_answer``): the returned ``Exchange`` is the ``tools/call``
request answered by that, so the normal result path judges it. A task
that ends without either (``cancelled`` by the server, or a result that is not one) is a
malformed answer to the call, a protocol error saying why.

The call's timeout covers the whole task; when it passes, or the caller is cancelled,
toolrelay sends ``tasks/cancel`` (echoing the state) before giving up, as on the 2025 path
(``tool_tasks.py``). Every message is tagged with the model's call.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ProtocolError, RequestTimeout, RpcError, ToolrelayError
from ..protocol import mcp as m
from ..protocol.exchange import Exchange, Sent
from ..protocol.jsonrpc import JSONObject
from ..protocol.peer import Peer
from ..protocol.tasks_ext import POLL_MS, TASKS_UPDATE, no_result_reason, settled_answer, with_locked_names
from .host.input_required import answer_inputs
from .host.requests import ServerRequests
from .refusals import malformed_answer_message
from .task_rules import CANCEL_WAIT, DEFAULT_POLL, poll_seconds
from .tool_tasks import late_reason, time_left

__all__ = ["ExtensionTaskCall"]


@dataclass(slots=True, kw_only=True)
class ExtensionTaskCall:
    """One ``tools/call`` the server answered with a task, followed to its end."""

    peer: Peer
    requests: ServerRequests
    """The host's handlers: they answer the task's input requests."""
    envelope: Callable[[JSONObject], JSONObject]
    """Adds the 2026-07-28 ``_meta`` (version, our capabilities) to a request's params."""
    server: str
    tool: str
    call_id: str | None
    limit: float | None
    """The call's timeout: it covers the whole task."""
    request_timeout: float
    on_sent: Sent | None = None
    on_task: Sent | None = None
    """Given the call's ``CreateTaskResult`` exchange and each ``tasks/*`` exchange after it,
    answered (a proxy shows its host the task's latest state: ``proxy/task_bridge.py``)."""
    _deadline: float | None = None
    _task_id: str = ""
    _state: Any = None
    """The latest ``requestState`` (None: the latest task message had none)."""
    _answered: set[str] = field(default_factory=set)

    async def run(self, created: Exchange, started: float) -> Exchange:
        """The tools/call exchange answered by its task's end (``created``: the exchange
        answered ``resultType: "task"``; ``started``: loop time the call began). Raises like
        ``Peer.call`` (naming the tools/call) when no result can come."""
        assert created.result is not None
        self._deadline = None if self.limit is None else started + self.limit
        task_id = created.result.get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise ProtocolError(f"server {self.server} answered tools/call {self.tool} with a task "
                                "without a taskId").for_request(created.mcp_id, created.request)
        self._task_id = task_id
        if self.on_task is not None:
            self.on_task(created)
        try:
            last = await self._follow(created.result)
        except RequestTimeout as exc:
            late = self._late(exc)
            await self._cancel()
            raise RequestTimeout(f"tools/call {self.tool} (task {task_id}) {late}; toolrelay cancelled the "
                                 "task (tasks/cancel)").for_request(created.mcp_id, created.request) from None
        except asyncio.CancelledError:
            if self.on_sent is not None:  # the call, not its last poll, is what was abandoned
                self.on_sent(Exchange(created.mcp_id, m.CALL_TOOL, created.request, started=created.started))
            with contextlib.suppress(BaseException):  # best effort: the run is stopping
                await asyncio.shield(asyncio.ensure_future(self._cancel()))
            raise
        except ToolrelayError as exc:
            raise exc.for_request(created.mcp_id, created.request) from None
        return self._answered_by(created, last)

    def _answered_by(self, created: Exchange, last: Exchange) -> Exchange:
        assert last.response is not None
        answer = settled_answer(created.mcp_id, last.response)
        if isinstance(answer, str):  # verify reads it so too (outcomes.recorded_exchange)
            said = malformed_answer_message(self.server, m.CALL_TOOL, created.mcp_id,
                                            no_result_reason(self._task_id, answer))
            raise ProtocolError(said).for_request(created.mcp_id, created.request)
        exchange = Exchange(created.mcp_id, m.CALL_TOOL, created.request, started=created.started)
        exchange.settle(answer)
        exchange.elapsed = time.monotonic() - created.started
        return exchange

    async def _follow(self, task: JSONObject) -> Exchange:
        """Poll (answering input) until the task ends; the ``tasks/get`` that showed it ended."""
        self._state = task.get("requestState")
        status, interval = task.get("status"), poll_seconds(with_locked_names(task), DEFAULT_POLL, POLL_MS)
        last: Exchange | None = None
        while last is None or status not in m.TERMINAL_TASK_STATUSES:
            if status == "input_required" and last is not None:
                await self._give_input(last.result or {})
            await asyncio.sleep(min(interval, self._remaining(interval)))
            last = await self._ask(m.TASKS_GET)
            try:
                state = last.raise_for_error()
            except RpcError as exc:
                raise ProtocolError(f"server {self.server} answered tasks/get for task {self._task_id} "
                                    f"with error {exc.code}: {exc.rpc_message}") from None
            self._state = state.get("requestState")
            status, interval = state.get("status"), poll_seconds(with_locked_names(state), interval, POLL_MS)
        return last

    async def _give_input(self, task: JSONObject) -> None:
        """Answer the task's input requests not answered yet, in one ``tasks/update``."""
        asked = task.get("inputRequests")
        if not isinstance(asked, dict):
            raise ProtocolError(f"server {self.server} showed task {self._task_id} input_required "
                                "without inputRequests (an object)")
        fresh = {key: value for key, value in asked.items() if key not in self._answered}
        if not fresh:
            return
        what = f"tools/call {self.tool} (task {self._task_id})"
        responses = await answer_inputs(fresh, self.requests, call_id=self.call_id, what=what)
        self._answered.update(fresh)
        got = await self._ask(TASKS_UPDATE, inputResponses=responses)
        if got.error is not None:
            raise ProtocolError(f"server {self.server} answered tasks/update for task {self._task_id} "
                                f"with error {got.error.code}: {got.error.message}")

    def _late(self, exc: RequestTimeout) -> str:
        return late_reason(self.limit, self._deadline, exc)

    def _remaining(self, otherwise: float) -> float:
        return time_left(self._deadline, self._task_id, otherwise)

    async def _ask(self, method: str, timeout: float | None = None, **more: Any) -> Exchange:
        params: JSONObject = {"taskId": self._task_id, **more}
        if self._state is not None:
            params["requestState"] = self._state  # as given: opaque to the client
        wait = timeout if timeout is not None else min(self.request_timeout,
                                                       self._remaining(self.request_timeout))
        return await self.peer.call(method, self.envelope(params), timeout=wait, tag=self.call_id,
                                    on_answer=self._take_in)

    def _take_in(self, exchange: Exchange) -> None:
        """A ``tasks/*`` answer, as it is read: its ``requestState`` is the latest (what a cancel
        sent next echoes), and ``on_task`` sees it before anything read after it (a proxy's host
        is shown no state older than the transcript's)."""
        if exchange.method == m.TASKS_GET and isinstance(exchange.result, dict):
            self._state = exchange.result.get("requestState")
        if self.on_task is not None:
            self.on_task(exchange)

    async def _cancel(self) -> None:
        """``tasks/cancel``, acknowledged or not."""
        with contextlib.suppress(ToolrelayError):
            await self._ask(m.TASKS_CANCEL, min(self.request_timeout, CANCEL_WAIT))
