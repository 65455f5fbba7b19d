"""A 2025-11-25 host's own task, run by a 2026-07-28 upstream as a task of the tasks
extension (SEP-2663): the two eras' tasks bridged by the proxy.

A host that declared ``capabilities.tasks`` (2025-11-25) is offered the tools of a
2026-07-28 upstream with ``execution.taskSupport: "optional"`` (in that era the server
alone decides which call becomes a task). Its task-augmented ``tools/call`` goes upstream
as a plain call declaring the extension (``client/ext_tasks.py`` follows the task), and:

- when the upstream answers ``resultType: "task"``, the host is given a task of the
  proxy's (``BridgedTask``, never the upstream's id) whose state is the upstream task's
  latest (``as_2025_task``: the same status names; ``ttlSeconds`` as ``ttl`` in ms);
- when it answers plainly, that is the host's answer, as a 2025-11-25 server may.

Then, for the host that owns it: ``tasks/get`` is the latest state the proxy's own
``tasks/get`` polls saw (no request upstream); ``tasks/result`` waits for the task's end
and gives its result (its error for ``failed``) with the related-task meta naming the
host's id; what the task asks (its ``inputRequests``) is asked of the host as 2025 server
requests while a ``tasks/result`` waits, naming the host's task, and answered upstream in
``tasks/update``; ``tasks/cancel`` sends the extension's ``tasks/cancel`` with the latest
``requestState`` and answers the task ``cancelled``. Each answer is recorded with the
upstream exchange it rests on (``proxy_route`` decision ``bridged``), so ``verify`` holds
it to that upstream message (``verify/proxy_tasks.py``). Not bridged: ``tasks/list``
does not list these tasks, and no ``notifications/tasks/status`` is sent for them.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import weakref
from dataclasses import dataclass, field
from typing import Any, Final

from ..errors import RpcError, ToolrelayError
from ..protocol import mcp as m
from ..protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JSONObject, Request
from ..protocol.passthrough import passed_on
from ..protocol.peer import Exchange
from ..protocol.tasks_ext import as_2025_task, created_ext_task
from ..protocol.versions import MODERN_VERSIONS
from ..redaction import redact
from ..relay.catalog import Catalog
from ..relay.stages.route import Route
from ..server.app import ServerSession
from .forward import Forwarder, forwarded_meta, tool_error
from .host_calls import HostCall
from .records import ProxyTask

__all__ = ["BridgedTask", "TaskBridge"]

_MAX_KEPT: Final = 1000
"""Bridged tasks remembered at most (the oldest ended one forgotten first)."""
BRIDGED: Final = "bridged"
"""The route decision of a host request answered from a bridged task."""


@dataclass(slots=True, kw_only=True)
class BridgedTask:
    """One host task standing for one upstream extension task."""

    task_id: str
    key: str
    server: str
    connection: int
    upstream_id: str
    owner: weakref.ref[ServerSession]
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

    def shown(self) -> JSONObject:
        """The task as the host is told it now (2025-11-25 ``Task``)."""
        shown = as_2025_task(self.latest.result or {}, self.task_id)
        return {**shown, "status": "cancelled"} if self.cancelled else shown


class TaskBridge:
    """The bridged tasks by the proxy's id."""

    def __init__(self, catalog: Catalog, forwarder: Forwarder) -> None:
        self.catalog = catalog
        self.forwarder = forwarder
        self._tasks: dict[str, BridgedTask] = {}
        self._numbers = itertools.count(1)
        self._salt = secrets.token_hex(4)  # a task id is unguessable: it is all that names a task

    def serves(self, server: str) -> bool:
        """Whether ``server``'s calls may become extension tasks (it speaks 2026-07-28)."""
        connection = self.catalog.connections.get(server)
        return connection is not None and connection.protocol_version in MODERN_VERSIONS

    def takes(self, route: Route | None, params: JSONObject | None) -> bool:
        """Whether a task-augmented host ``tools/call`` is bridged (its server is 2026-07-28)."""
        asked = isinstance((params or {}).get("task"), dict)
        return route is not None and asked and self.serves(route.server)

    def owns(self, task_id: str, session: ServerSession | None) -> BridgedTask | None:
        task = self._tasks.get(task_id)
        return task if task is not None and session is not None and task.owner() is session else None

    # -- the host's task-augmented tools/call ------------------------------------------------

    async def create(self, alias: str, route: Route, arguments: JSONObject, request: Request,
                     version: str | None, session: ServerSession) -> JSONObject:
        forwarder = self.forwarder
        key, host = forwarder.new_key(), forwarder.calls.number_of(session)
        forwarder.host_in(key, request, version, host)
        try:
            result = await self._create(key, alias, route, arguments, request, version, session, host)
        except RpcError as exc:
            said = {"jsonrpc": "2.0", "id": request.id,
                    "error": {"code": exc.code, "message": exc.rpc_message,
                              **({"data": exc.data} if exc.data is not None else {})}}
            forwarder.host_out(key, request, said, version, host)
            raise
        answered = {"jsonrpc": "2.0", "id": request.id, "result": result}
        forwarder.host_out(key, request, answered, version, host)
        return result

    async def _create(self, key: str, alias: str, route: Route, arguments: JSONObject, request: Request,
                      version: str | None, session: ServerSession, host: int | None) -> JSONObject:
        forwarder = self.forwarder
        refusal = await forwarder.refusal(key, route, arguments)
        if refusal is not None:
            forwarder.route(key, request, alias, "denied", route=route, reason=refusal)
            return tool_error(f"toolrelay proxy: {route.server}/{route.tool} was not called: {refusal}")
        connection = self.catalog.connections[route.server]
        task_id = f"toolrelay-b{next(self._numbers)}-{self._salt}"
        call = HostCall(key=key, request=request, protocol_version=version, session=session,
                        capabilities=session.client_capabilities, server=route.server, host=host,
                        task_id=task_id, ready=asyncio.Event())
        forwarder.calls.add(call)
        created: asyncio.Future[Exchange] = asyncio.get_running_loop().create_future()
        seen: dict[str, Exchange] = {}
        sent: list[Exchange] = []

        def on_task(exchange: Exchange) -> None:
            if exchange.method == m.TASKS_CANCEL:
                seen["cancel"] = exchange
            elif exchange.result is not None and (exchange.method == m.TASKS_GET
                                                  or created_ext_task(exchange.result) is not None):
                seen["state"] = exchange
            if not created.done():
                created.set_result(exchange)

        runner = asyncio.ensure_future(connection.call_tool(
            route.tool, arguments, call_id=key, meta=forwarded_meta(request.params), on_sent=sent.append,
            on_task=on_task))
        runner.add_done_callback(lambda _: forwarder.calls.remove(key))
        try:
            await asyncio.wait({runner, created}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the host cancelled, or went away: cancelled upstream too
            runner.cancel()
            forwarder.route(key, request, alias, "cancelled", route=route, reason="the host cancelled the "
                            "call or disconnected", sent=[(e, connection.number) for e in sent])
            raise
        if not created.done():  # the upstream answered plainly: that is the answer
            return self._plain(key, alias, route, request, runner, sent, connection.number)
        first = created.result()
        assert first.result is not None
        upstream_id = str(first.result.get("taskId"))
        task = BridgedTask(task_id=task_id, key=key, server=route.server, connection=connection.number,
                           upstream_id=upstream_id, owner=weakref.ref(session), host=host, call=call,
                           runner=runner, latest=first, seen=seen)
        runner.add_done_callback(lambda _: self._settled(task))
        self._keep(task)
        forwarder.route(key, request, alias, BRIDGED, route=route, sent=[(first, connection.number)])
        return {"task": task.shown()}

    def _plain(self, key: str, alias: str, route: Route, request: Request, runner: asyncio.Future[Exchange],
               sent: list[Exchange], number: int) -> JSONObject:
        forwarder = self.forwarder
        exc = runner.exception()
        if isinstance(exc, ToolrelayError):
            said = redact(str(exc), self.catalog.secrets)
            forwarder.route(key, request, alias, "failed", route=route, reason=said,
                            sent=[(e, number) for e in sent])
            return tool_error(f"toolrelay proxy: server {route.server} did not answer: {said}")
        exchange = runner.result()
        forwarder.route(key, request, alias, "forwarded", route=route, sent=[(exchange, number)])
        if exchange.error is not None:
            raise RpcError(exchange.error.code, exchange.error.message, exchange.error.data)
        assert exchange.result is not None
        return passed_on(exchange.result)

    def _settled(self, task: BridgedTask) -> None:
        """The task's latest state: the last ``tasks/get`` its follower saw (and its cancel)."""
        task.latest = task.seen.get("state", task.latest)
        task.cancel = task.seen.get("cancel", task.cancel)

    def _keep(self, task: BridgedTask) -> None:
        if self.forwarder.events.active:
            self.forwarder.events.emit(ProxyTask(
                key=task.key, task_id=task.task_id, server=task.server, connection=task.connection,
                upstream_task_id=task.upstream_id, host=task.host))
        while len(self._tasks) >= _MAX_KEPT:
            oldest = next((t for t in self._tasks.values() if t.runner.done()), None)
            if oldest is None:
                break
            del self._tasks[oldest.task_id]
        self._tasks[task.task_id] = task

    # -- the host's tasks/get, tasks/result, tasks/cancel -------------------------------------

    async def answer(self, key: str, request: Request, task: BridgedTask) -> JSONObject:
        self._settled(task)
        if request.method == m.TASKS_GET:
            self._route(key, request, task, task.latest)
            return task.shown()
        if request.method == m.TASKS_CANCEL:
            return await self._cancel(key, request, task)
        return await self._result(key, request, task)

    def _route(self, key: str, request: Request, task: BridgedTask, exchange: Exchange | None,
               decision: str = BRIDGED, reason: str = "") -> None:
        sent = [(exchange, task.connection)] if exchange is not None else []
        self.forwarder.route_to(key, request, task.task_id, decision, target=(task.server, task.upstream_id),
                                sent=sent, reason=reason)

    async def _result(self, key: str, request: Request, task: BridgedTask) -> JSONObject:
        call = task.call
        assert call.ready is not None
        call.request, call.key = request, key  # what the task asks now belongs to this request
        call.ready.set()
        try:
            await asyncio.wait({task.runner})  # the host leaving does not end its task
        except asyncio.CancelledError:
            self._route(key, request, task, None, "cancelled",
                        "the host cancelled the request or disconnected")
            raise
        finally:
            call.ready.clear()
        self._settled(task)
        if task.cancelled:
            self._route(key, request, task, task.cancel)
            raise RpcError(INVALID_PARAMS, f"task {task.task_id} was cancelled")
        exc = task.runner.exception()
        if exc is not None:
            said = redact(str(exc), self.catalog.secrets)
            self._route(key, request, task, None, "failed", said)
            raise RpcError(INTERNAL_ERROR,
                           f"toolrelay proxy: server {task.server}'s task gave no result: {said}")
        self._route(key, request, task, task.latest)
        exchange = task.runner.result()
        if exchange.error is not None:
            raise RpcError(exchange.error.code, exchange.error.message, exchange.error.data)
        result = passed_on(exchange.result or {})
        result["_meta"] = {**(result.get("_meta") or {}), m.RELATED_TASK: {"taskId": task.task_id}}
        return result

    async def _cancel(self, key: str, request: Request, task: BridgedTask) -> JSONObject:
        if task.runner.done():
            status = task.shown().get("status")
            self._route(key, request, task, None, "failed", f"the task already ended ({status})")
            raise RpcError(INVALID_PARAMS, f"Cannot cancel task: already in terminal status '{status}'")
        task.runner.cancel()  # the follower sends tasks/cancel, with the latest requestState
        await asyncio.wait({task.runner})
        self._settled(task)
        if task.cancel is None:
            self._route(key, request, task, None, "failed", "the upstream did not answer tasks/cancel")
            raise RpcError(INTERNAL_ERROR,
                           f"toolrelay proxy: server {task.server} did not answer tasks/cancel")
        task.cancelled = True
        self._route(key, request, task, task.cancel)
        return task.shown()


def shown_with_task_support(tool: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 upstream's tool as a task-taking 2025 host is offered it."""
    return {**tool, "execution": {"taskSupport": "optional"}}
