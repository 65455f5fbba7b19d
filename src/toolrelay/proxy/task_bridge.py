"""A 2025-11-25 host's own task, run by a 2026-07-28 upstream as a task of the tasks
extension (SEP-2663): the two eras' tasks bridged by the proxy.

A host that declared ``capabilities.tasks`` (2025-11-25) is offered the tools of a
2026-07-28 upstream with ``execution.taskSupport: "optional"`` (in that era the server
alone decides which call becomes a task). Its task-augmented ``tools/call`` goes upstream
as a plain call declaring the extension (``client/ext_tasks.py`` follows the task), and:

- when the upstream answers ``resultType: "task"``, the host is given a task of the
  proxy's (``BridgedTask``, never the upstream's id) whose state is the upstream task's
  latest (``as_2025_task``: the same status names; ``ttlMs`` as ``ttl``, both in ms);
- when it answers plainly, that is the host's answer, as a 2025-11-25 server may.

Then, for the host that owns it: ``tasks/get`` is the latest state the proxy's own
``tasks/get`` polls saw (no request upstream); ``tasks/result`` waits for the task's end
and gives its result (its error for ``failed``) with the related-task meta naming the
host's id; what the task asks (its ``inputRequests``) is asked of the host as 2025 server
requests while a ``tasks/result`` waits, naming the host's task, and answered upstream in
``tasks/update``; ``tasks/cancel`` sends the extension's ``tasks/cancel`` (with the latest
``requestState`` only if the upstream gave one) and answers the task ``cancelled``. Each
answer is recorded with the upstream exchange it rests on (``proxy_route`` decision
``bridged``), so ``verify`` holds it to that upstream message (``verify/proxy_tasks.py``).

A 2026-07-28 host that declared the extension in its request's capabilities gets the same
task in its own era's terms: ``resultType: "task"`` with the proxy's id and a
``requestState`` of the proxy's (toolrelay's extra, which the locked spec's ``Result``
allows; never required: a host that sends none is served, one naming a state the proxy
never gave is refused; the upstream's stays on the upstream leg); ``tasks/get``
is the upstream's latest state, with what the task asks as the proxy's ``inputRequests``
(under the upstream's keys), answered by the host's ``tasks/update``; ``tasks/cancel`` as
above; ``tasks/list`` of a 2025 host lists its bridged tasks too (each as its
``tasks/get`` shows it). What a task asks waits for its host at most ``input_wait`` (``--input-wait``) from
when it became ``input_required``; then the proxy cancels it upstream (the extension's
``tasks/cancel``) and records why (``ProxyTaskAbandoned``).

A 2026-07-28 host that declared the extension, calling a 2025-11-25 server's task tool
(one it lists with ``execution.taskSupport``, where the connection runs tasks), gets the
same kind of task (``BridgedTask.legacy``): the proxy creates the 2025 task upstream
(``params.task``) and follows it itself (``_follow_2025``: ``tasks/get`` at its
``pollInterval``, ``tasks/result`` once it ends or needs input); the host's ``tasks/get``
shows the 2025 state in the extension's terms (``as_ext_task``: ``ttl`` as ``ttlMs``,
``pollInterval`` as ``pollIntervalMs``; its ``tasks/result``'s
result or error once it ends, ``ended_ext_task``); what the server asks during
``tasks/result`` (its related-task meta names the call) is the host's ``inputRequests``,
answered by its ``tasks/update``; cancelling sends the 2025 ``tasks/cancel``; a task the
server lost (its ``tasks/get`` answered an error) is ``failed`` with the proxy's error
quoting the server's (``lost_task_error``). Giving up on such a task (``_give_up_2025``),
the proxy first answers what the server asks itself (an elicitation ``cancel``, anything
else an error; the server may read nothing else while it waits), then sends
``tasks/cancel``: acknowledged, the task is ``cancelled``; refused (the task ended after
the decline), the host is shown that end; a host's own ``tasks/cancel`` goes the same
way. A 2026-07-28 host is sent no status pushes for these tasks (the extension's
``notifications/tasks`` come only on a ``subscriptions/listen`` naming ``taskIds``, which
the proxy does not serve for tasks: the host polls); a 2025 host is sent
``notifications/tasks/status`` for its task whenever a poll of the proxy's sees the upstream
state's status or message change (``_tell_status``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
import weakref
from collections.abc import Awaitable, Coroutine, Mapping
from typing import Any, Final

from ..client.connection import Connection
from ..client.task_rules import CANCEL_WAIT, DEFAULT_POLL, TASK_TTL_MS, created_task, poll_seconds
from ..errors import RpcError, ToolrelayError, TransportError
from ..protocol import mcp as m
from ..protocol.exchange import Exchange, Sent
from ..protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JSONObject, Request
from ..protocol.passthrough import passed_on
from ..protocol.tasks_ext import (
    EXTENSION,
    RESULT_TASK,
    TASKS_UPDATE,
    as_2025_task,
    created_ext_task,
    extension_declared,
    lost_task_error,
)
from ..protocol.versions import MODERN_VERSIONS
from ..redaction import redact
from ..relay.catalog import Catalog
from ..relay.stages.route import Route
from ..server.app import CallContext, ServerSession
from ..server.features import FeatureHandler
from .asks import PROXY_ANSWERED
from .bridged_task import BridgedTask, abandoned_as, fetching_end, final_of, host_left, rests_on, told
from .forward import Forwarder, forwarded_meta, tool_error
from .host_calls import HostCall
from .records import ProxyTask, ProxyTaskAbandoned, ProxyTaskForgotten, ProxyTaskStatus
from .rounds import DEFAULT_WAIT

__all__ = ["BridgedTask", "TaskBridge", "shown_with_task_support"]

_MAX_KEPT: Final = 1000
"""Bridged tasks remembered at most (the oldest ended one forgotten first, recorded)."""
BRIDGED: Final = "bridged"
REFUSED: Final = "refused"
"""A 2026-07-28 host's ``tasks/*`` request naming a ``requestState`` the proxy never gave for the task."""
MODERN_METHODS: Final = (m.TASKS_GET, TASKS_UPDATE, m.TASKS_CANCEL)
"""The extension's methods a 2026-07-28 host asks of its task."""
_LEFT_CHECK: Final = 0.5
"""How often (seconds) a task waiting for its 2025 host's answer looks whether the host has left
(the follower, blocked on the ask, polls no more)."""
_NOT_FOUND: Final = "Failed to retrieve task: Task not found"
_HOST_CANCELLED: Final = "its host cancelled it"
"""Why what a 2025 server's task asks is answered by the proxy once its host cancels it."""
_TASKED: Final = frozenset({"optional", m.TASK_SUPPORT_REQUIRED})
_CALL_LEFT: Final = "the host cancelled the call or disconnected"
"""Why a host's ``tools/call`` of a bridged task went unanswered."""


class TaskBridge:
    """The bridged tasks by the proxy's id."""

    def __init__(self, catalog: Catalog, forwarder: Forwarder) -> None:
        self.catalog = catalog
        self.forwarder = forwarder
        self._tasks: dict[str, BridgedTask] = {}
        self._numbers = itertools.count(1)
        self._salt = secrets.token_hex(4)  # a task id is unguessable: it is all that names a task
        self.input_wait = DEFAULT_WAIT
        self._giving_up: set[asyncio.Future[None]] = set()
        """How long a task's input request waits for its host (the proxy's ``--input-wait``)."""

    def serves(self, server: str) -> bool:
        """Whether ``server``'s calls may become extension tasks (it speaks 2026-07-28)."""
        connection = self.catalog.connections.get(server)
        return connection is not None and connection.protocol_version in MODERN_VERSIONS

    def takes(self, route: Route | None, params: JSONObject | None) -> bool:
        """Whether a task-augmented host ``tools/call`` is bridged (its server is 2026-07-28)."""
        asked = isinstance((params or {}).get("task"), dict)
        return route is not None and asked and self.serves(route.server)

    def owns(self, task_id: str, session: ServerSession | None) -> BridgedTask | None:
        """The task of that id of this 2025 host's (``session``), or of a 2026-07-28 host (None)."""
        task = self._tasks.get(task_id)
        if task is None or (task.owner is None) != (session is None):
            return None
        return task if task.owner is None or task.owner() is session else None

    def takes_modern(self, route: Route | None, capabilities: JSONObject) -> bool:
        """Whether a 2026-07-28 host's ``tools/call`` may become its task: it declared the
        extension, and the server may make the call a task (it speaks 2026-07-28), or runs
        the tool as a 2025-11-25 task (``runs_2025_task``)."""
        return route is not None and extension_declared(capabilities) and (
            self.serves(route.server) or self.runs_2025_task(route))

    def runs_2025_task(self, route: Route) -> bool:
        """Whether ``route``'s server runs its tool as a 2025-11-25 task: it declares tasks
        for ``tools/call`` and lists the tool's ``execution.taskSupport``."""
        connection = self.catalog.connections.get(route.server)
        if connection is None or connection.tasks_unavailable is not None:
            return False
        execution = self.catalog.listed(route).get("execution")
        return isinstance(execution, dict) and execution.get("taskSupport") in _TASKED

    def extension_capabilities(self) -> JSONObject:
        connections = self.catalog.connections
        tasked = any(self.serves(server) or (server in connections and connections[server].tasks_unavailable
                                             is None) for server in self.catalog.available)
        return {EXTENSION: {}} if tasked else {}

    # -- the host's task-augmented tools/call ------------------------------------------------

    async def create(self, alias: str, route: Route, arguments: JSONObject, request: Request,
                     version: str | None, session: ServerSession | None, *,
                     capabilities: JSONObject | None = None, exchange: int | None = None) -> JSONObject:
        """A task-augmented ``tools/call`` of a 2025 host (``session``), or a ``tools/call``
        of a 2026-07-28 host that declared the extension (``capabilities``: its envelope's;
        ``exchange``: its HTTP exchange's number)."""
        host = self.forwarder.calls.number_of(session)
        declared = session.client_capabilities if session is not None else capabilities or {}
        return await self.forwarder.recorded(
            request, version, host,
            lambda key: self._create(key, alias, route, arguments, request, version, session, host, declared),
            exchange)

    async def _create(self, key: str, alias: str, route: Route, arguments: JSONObject, request: Request,
                      version: str | None, session: ServerSession | None, host: int | None,
                      capabilities: JSONObject) -> JSONObject:
        forwarder = self.forwarder
        refused = await forwarder.refused(key, request, alias, route, arguments)
        if refused is not None:
            return refused
        connection = self.catalog.connections[route.server]
        task_id = f"toolrelay-b{next(self._numbers)}-{self._salt}"
        call = HostCall(key=key, request=request, protocol_version=version, session=session,
                        capabilities=capabilities, server=route.server, host=host, task_id=task_id,
                        ready=asyncio.Event() if session is not None else None,
                        ask=self._ask_modern if session is None else None)
        forwarder.calls.add(call)
        created: asyncio.Future[Exchange] = asyncio.get_running_loop().create_future()
        seen: dict[str, Exchange] = {}
        sent: list[Exchange] = []
        made: list[BridgedTask] = []  # the task, once the upstream made one

        def on_task(exchange: Exchange) -> None:
            if exchange.method == m.TASKS_CANCEL:
                seen["cancel"] = exchange
            elif exchange.result is not None and (exchange.method == m.TASKS_GET
                                                  or created_ext_task(exchange.result) is not None
                                                  or created_task(exchange.result) is not None):
                seen["state"] = exchange
            if not created.done():
                created.set_result(exchange)
            if made:
                self._tell_status(made[0], exchange)
                self._watch(made[0])

        legacy = session is None and self.runs_2025_task(route)  # a 2026 host, a 2025 server's task
        runner = asyncio.ensure_future(
            self._follow_2025(connection, key, route.tool, arguments, request, on_task, seen) if legacy else
            connection.call_tool(route.tool, arguments, call_id=key, meta=forwarded_meta(request.params),
                                 on_sent=sent.append, on_task=on_task))
        runner.add_done_callback(lambda _: forwarder.calls.remove(key))
        try:
            await asyncio.wait({runner, created}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the host cancelled, or went away: cancelled upstream too
            runner.cancel()
            forwarder.route(key, request, alias, "cancelled", route=route, reason=_CALL_LEFT,
                            sent=[(e, connection.number) for e in sent])
            raise
        if not created.done():  # the upstream answered plainly: that is the answer
            return self._plain(key, alias, route, request, runner, sent, connection.number)
        first = created.result()
        assert first.result is not None
        upstream_id = str((created_task(first.result) or first.result).get("taskId"))
        task = BridgedTask(task_id=task_id, key=key, server=route.server, connection=connection.number,
                           upstream_id=upstream_id, host=host, call=call,
                           owner=weakref.ref(session) if session is not None else None,
                           runner=runner, latest=first, seen=seen, legacy=legacy)
        if legacy:
            task.cancel_2025 = lambda: self._send_cancel_2025(connection, key, upstream_id, on_task)
        runner.add_done_callback(lambda _: self._settled(task))
        task.told = told(task.shown())
        self._keep(task)
        made.append(task)
        self._watch(task)
        if fetching_end(task):  # it ended as it was made: said ended only with its result
            try:
                await asyncio.wait({runner})
            except asyncio.CancelledError:
                forwarder.route(key, request, alias, "cancelled", route=route, reason=_CALL_LEFT,
                                sent=[(first, connection.number)])
                raise
            self._settled(task)
        forwarder.route(key, request, alias, BRIDGED, route=route, sent=[(first, connection.number)])
        return task.shown_modern(RESULT_TASK) if session is None else {"task": task.shown()}

    async def _follow_2025(self, connection: Connection, key: str, tool: str, arguments: JSONObject,
                           request: Request, on_task: Sent, seen: Mapping[str, Exchange]) -> Exchange:
        """The proxy's own following of a 2025-11-25 server's task for a 2026-07-28 host: the
        ``tools/call`` with ``task``, ``tasks/get`` at the server's ``pollInterval`` until the
        task ends or needs input, then ``tasks/result`` (what the server asks during it is the
        host's, ``_ask_modern``: its related-task meta names the call). Its answer, or the
        plain answer of a call the server did not make a task, is the runner's; cancelled, it
        sends the 2025 ``tasks/cancel`` first (unless one was sent: ``seen``, the proxy's give-up)."""
        params: JSONObject = {"name": tool, "arguments": arguments, "task": {"ttl": TASK_TTL_MS}}
        meta = forwarded_meta(request.params)
        if meta:
            params["_meta"] = meta
        made = await connection.exchange(m.CALL_TOOL, params, tag=key)
        task = created_task(made.result)
        upstream_id = task.get("taskId") if task is not None else None
        if made.error is not None or task is None or not isinstance(upstream_id, str):
            return made  # answered plainly (or refused): that is the answer
        owners = connection.requests.tool_tasks
        owners[upstream_id] = (key, made.mcp_id)  # its asks are the host call's
        on_task(made)
        status, interval = task.get("status"), poll_seconds(task, DEFAULT_POLL)
        try:
            while status not in m.TERMINAL_TASK_STATUSES and status != "input_required":
                await asyncio.sleep(interval)
                got = await connection.exchange(m.TASKS_GET, {"taskId": upstream_id}, tag=key)
                if got.error is not None:
                    return got  # the server lost the task: its end (TaskBridge._settled)
                state = got.raise_for_error()
                on_task(got)
                status, interval = state.get("status"), poll_seconds(state, interval)
            return await connection.exchange(m.TASKS_RESULT, {"taskId": upstream_id}, tag=key,
                                             timeout=connection.config.call_timeout)
        except asyncio.CancelledError:  # the host's tasks/cancel, or the proxy gave up: cancelled upstream
            if "cancel" not in seen:
                await self._send_cancel_2025(connection, key, upstream_id, on_task)
            raise
        finally:
            if owners.get(upstream_id) == (key, made.mcp_id):
                del owners[upstream_id]

    @staticmethod
    async def _send_cancel_2025(connection: Connection, key: str, upstream_id: str, on_task: Sent) -> None:
        """The 2025 ``tasks/cancel`` of the task, its answer told ``on_task`` (none: not told)."""
        with contextlib.suppress(ToolrelayError):
            wait = min(connection.config.request_timeout, CANCEL_WAIT)
            cancel = asyncio.ensure_future(connection.exchange(m.TASKS_CANCEL, {"taskId": upstream_id},
                                                               tag=key, timeout=wait))
            on_task(await asyncio.shield(cancel))  # answered even if its sender is cancelled meanwhile

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

    def _tell_status(self, task: BridgedTask, exchange: Exchange) -> None:
        """A 2025 host told its task's new state (``notifications/tasks/status``, the spec's
        optional notice) when a poll of the proxy's saw its status (or message) change,
        as ``tasks.py`` passes an upstream's own notice on; recorded with that poll's id."""
        session = task.owner() if task.owner is not None else None
        if session is None or task.legacy or exchange.method != m.TASKS_GET or exchange.result is None:
            return
        params = as_2025_task(exchange.result, task.task_id)
        if told(params) == task.told:
            return
        task.told = told(params)
        if self.forwarder.events.active:
            self.forwarder.events.emit(ProxyTaskStatus(
                task_id=task.task_id, server=task.server, connection=task.connection,
                upstream=exchange.response or {}, host=params, to_host=task.host, mcp_id=exchange.mcp_id))
        with contextlib.suppress(TransportError):  # the host left (its task is given up at the next look)
            session.peer.notify(m.TASK_STATUS, params)

    # -- the bounded wait for the host's input -------------------------------------------

    def _watch(self, task: BridgedTask) -> None:
        """While the upstream task is ``input_required``, a timer of ``input_wait``: a host
        that does not answer (a 2025 host that asks no ``tasks/result``, or does not answer
        the ask; a 2026-07-28 host that sends no ``tasks/update``) gets its task cancelled."""
        if host_left(task):  # seen at each of the follower's polls: a host gone takes its task along
            self._give_up(task, "its host's session ended")
            return
        state = task.status()
        if state == "input_required" and task.timer is None and not task.runner.done():
            self._arm(task, asyncio.get_running_loop().time() + self.input_wait)
        elif state != "input_required" and task.timer is not None:
            task.timer.cancel()
            task.timer = None

    def _arm(self, task: BridgedTask, deadline: float) -> None:
        loop = asyncio.get_running_loop()
        task.timer = loop.call_later(max(0.0, min(_LEFT_CHECK, deadline - loop.time())), self._tick, task,
                                     deadline)

    def _tick(self, task: BridgedTask, deadline: float) -> None:
        task.timer = None
        if host_left(task):
            self._give_up(task, "its host's session ended")
        elif asyncio.get_running_loop().time() >= deadline:
            self._give_up(task, "its host gave no answer to its input request within --input-wait "
                                f"{self.input_wait:g}s")
        else:
            self._arm(task, deadline)

    def _give_up(self, task: BridgedTask, reason: str) -> None:
        if task.runner.done() or task.given_up is not None:
            return
        self._end_upstream(task, reason, self._abandon(task, reason))

    def _end_upstream(self, task: BridgedTask, reason: str, work: Coroutine[Any, Any, None]) -> None:
        """The proxy ends the task upstream (``work``) for ``reason``; a later give-up is none."""
        task.given_up = reason
        if task.timer is not None:
            task.timer.cancel()
            task.timer = None
        giving_up = task.giving_up = asyncio.ensure_future(work)
        self._giving_up.add(giving_up)  # kept until done (the loop holds tasks only weakly)
        giving_up.add_done_callback(self._giving_up.discard)

    async def _abandon(self, task: BridgedTask, reason: str) -> None:
        """Cancel the upstream task (the extension's ``tasks/cancel``, latest ``requestState``;
        a 2025 server's, ``_give_up_2025``); record why and how it ended."""
        if task.legacy:
            await self._give_up_2025(task)
        else:
            await self._cancelled(task)
        if self.forwarder.events.active:
            self.forwarder.events.emit(ProxyTaskAbandoned(
                task_id=task.task_id, server=task.server, connection=task.connection,
                upstream_task_id=task.upstream_id, reason=reason,
                mcp_id=task.cancel.mcp_id if task.cancel is not None else None,
                outcome=abandoned_as(task), declined=list(task.declined.values())))

    async def _give_up_2025(self, task: BridgedTask) -> None:
        """A 2025 server's task given up: what it asks is answered upstream by the proxy (its
        host will not; a server that reads one message at a time reads no ``tasks/cancel``
        while its ask waits), then its ``tasks/cancel`` is sent. Acknowledged, the task is
        ``cancelled`` and its follower stops; refused (it ended meanwhile: completed or failed
        after the decline), its ``tasks/result``, on its way, is the end the host is shown."""
        await self._decline_asks(task)
        assert task.cancel_2025 is not None
        await task.cancel_2025()
        cancel = task.seen.get("cancel")
        if cancel is not None and cancel.error is None:
            task.runner.cancel()  # the follower sends no second tasks/cancel
            await asyncio.wait({task.runner})
        elif cancel is not None:
            await asyncio.wait({task.runner}, timeout=CANCEL_WAIT)
        self._settled(task)
        task.cancelled = cancel is not None and cancel.error is None

    async def _decline_asks(self, task: BridgedTask) -> None:
        """Every pending ask of the task answered by the proxy (``_declined``), and its reply
        sent upstream (the task answering it ended), within ``CANCEL_WAIT``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CANCEL_WAIT
        while True:
            for input_key, (method, _, answer) in list(task.pending.items()):
                if not answer.done():
                    task.declined[input_key] = task.replying.get(input_key, (input_key,))[0]
                    answer.set_result(self._declined(task, method))
            await asyncio.sleep(0)  # an ask received just now reaches _ask_modern (declined there)
            replying = {reply for _, reply in task.replying.values() if not reply.done()}
            if not replying or loop.time() >= deadline:
                return
            await asyncio.wait(replying, timeout=deadline - loop.time())

    @staticmethod
    def _declined(task: BridgedTask, method: str) -> JSONObject:
        """The proxy's own answer to what a task given up asks: an elicitation dismissed
        without a choice (``cancel``), anything else an error saying why."""
        if method == m.ELICIT:
            return {"result": {"action": "cancel"}}
        return {"error": {"code": -1, "message": f"toolrelay proxy: the task was given up: {task.given_up}"}}

    def _settled(self, task: BridgedTask) -> None:
        """The task's latest state: the last ``tasks/get`` its follower saw (and its cancel)."""
        task.latest = task.seen.get("state", task.latest)
        task.cancel = task.seen.get("cancel", task.cancel)
        final = final_of(task)
        if final is not None and final.method == m.TASKS_GET and task.lost is None:
            lost = lost_task_error(task.server, task.upstream_id, (final.response or {}).get("error"))
            task.lost = {**lost, "message": redact(str(lost["message"]), self.catalog.secrets)}
        if task.runner.done() and task.timer is not None:  # ended: nothing more waits for its host
            task.timer.cancel()
            task.timer = None

    def _keep(self, task: BridgedTask) -> None:
        if self.forwarder.events.active:
            self.forwarder.events.emit(ProxyTask(
                key=task.key, task_id=task.task_id, server=task.server, connection=task.connection,
                upstream_task_id=task.upstream_id, host=task.host,
                host_version=task.call.protocol_version))
        while len(self._tasks) >= _MAX_KEPT and self._forget_oldest_ended():
            pass
        self._tasks[task.task_id] = task

    def _forget_oldest_ended(self) -> bool:
        """Forget the oldest task that ended (recorded: no ``tasks/list`` lists it from now on);
        False when none has."""
        oldest = next((t for t in self._tasks.values() if t.runner.done()), None)
        if oldest is None:
            return False
        if self.forwarder.events.active:
            self.forwarder.events.emit(ProxyTaskForgotten(
                task_id=oldest.task_id, kept=_MAX_KEPT,
                reason=f"the proxy keeps at most {_MAX_KEPT} bridged tasks; the oldest ended one is "
                       "forgotten first"))
        del self._tasks[oldest.task_id]
        return True

    # -- the host's tasks/get, tasks/result, tasks/cancel -------------------------------------

    def listed(self, session: ServerSession | None) -> list[JSONObject]:
        """The bridged tasks of this 2025 host's, as its ``tasks/get`` would show each now."""
        mine = [task for task in self._tasks.values()
                if session is not None and task.owner is not None and task.owner() is session]
        for task in mine:
            self._settled(task)
        return [task.shown() for task in mine]

    async def answer(self, key: str, request: Request, task: BridgedTask) -> JSONObject:
        self._settled(task)
        if request.method == m.TASKS_GET:  # a cancelled task's state rests on its tasks/cancel
            self._route(key, request, task, task.cancel if task.cancelled else task.latest)
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
        await self._cancelled(task)
        if task.cancel is None:
            self._route(key, request, task, None, "failed", "the upstream did not answer tasks/cancel")
            raise RpcError(INTERNAL_ERROR,
                           f"toolrelay proxy: server {task.server} did not answer tasks/cancel")
        self._route(key, request, task, task.cancel)
        return task.shown()

    async def _cancelled(self, task: BridgedTask) -> None:
        task.runner.cancel()  # the follower sends tasks/cancel, with the latest requestState
        await asyncio.wait({task.runner})
        self._settled(task)
        task.cancelled = task.cancel is not None and task.cancel.error is None

    # -- a 2026-07-28 host's tasks/get, tasks/update, tasks/cancel (the extension's) ----------

    def modern_methods(self) -> Mapping[str, FeatureHandler]:
        return dict.fromkeys(MODERN_METHODS, self._modern_handler)

    def _modern_handler(self, params: JSONObject | None, context: CallContext) -> Awaitable[JSONObject]:
        request = context.request
        assert request is not None  # every transport gives it
        exchange = context.stream.exchange if context.stream is not None else None
        return self._modern_recorded(request, context.protocol_version, exchange)

    async def _modern_recorded(self, request: Request, version: str | None, exchange: int | None
                               ) -> JSONObject:
        return await self.forwarder.recorded(request, version, None, lambda key: self._modern(key, request),
                                             exchange)

    async def _modern(self, key: str, request: Request) -> JSONObject:
        task_id = m.require_str(request.params, "taskId")
        task = self.owns(task_id, None)
        if task is None:
            self.forwarder.route_to(key, request, task_id, "unknown",
                                    reason="no task of the proxy's has that id")
            if request.method != m.TASKS_GET:  # the SEP: update and cancel are acknowledged all the same
                return {}
            raise RpcError(INVALID_PARAMS, f"{_NOT_FOUND}: {task_id}")
        stale = _unknown_state(task, request)
        if stale is not None:  # a state the proxy never gave for this task: refused, as the SEP lets servers
            self._route(key, request, task, None, REFUSED, stale)
            raise RpcError(INVALID_PARAMS, stale)
        if request.method == m.TASKS_GET and task.legacy and task.giving_up is not None:
            await asyncio.wait({task.giving_up})  # said cancelled, or ended, once the upstream said which
        if request.method == m.TASKS_GET and fetching_end(task):
            await asyncio.wait({task.runner})  # said ended only with its result (or error)
        self._settled(task)
        if request.method == m.TASKS_GET:
            self._route(key, request, task, task.cancel if task.cancelled else rests_on(task))
            return task.shown_modern("complete")
        if request.method == m.TASKS_CANCEL:
            if task.legacy and task.given_up is None and not task.runner.done():
                self._end_upstream(task, _HOST_CANCELLED, self._give_up_2025(task))  # its asks answered first
            if task.giving_up is not None:
                await asyncio.wait({task.giving_up})  # the host's cancel, or the proxy's give-up before it
                self._settled(task)
            if task.runner.done() and not task.cancelled:
                self._route(key, request, task, None, BRIDGED, "the task already ended")
                return {}
            if not task.cancelled:
                await self._cancelled(task)
            self._route(key, request, task, task.cancel)
            return {}
        return await self._update(key, request, task)

    async def _update(self, key: str, request: Request, task: BridgedTask) -> JSONObject:
        """The host's answers to what the task asked: to the follower, which sends them upstream."""
        responses = m.require_object(request.params, "inputResponses", optional=True)
        task.call.key, task.call.request = key, request  # the asks answered are recorded under it
        task.echoed = (request.params or {}).get("requestState")
        for input_key, response in responses.items():
            asked = task.pending.pop(input_key, None)
            if asked is not None and not asked[2].done():
                asked[2].set_result({"result": response})
        self._route(key, request, task, None, BRIDGED, f"{len(responses)} input response(s) taken")
        await asyncio.sleep(0)  # each ask answered is recorded (its own step) before this answer is
        return {}

    async def _ask_modern(self, call: HostCall, method: str, params: JSONObject, upstream_id: Any
                          ) -> tuple[JSONObject, JSONObject]:
        """Ask the 2026-07-28 host of a bridged task (``asks.HostAsks``): its next ``tasks/get``
        shows the ask in ``inputRequests``, under the upstream's own key of it; its
        ``tasks/update`` answers."""
        task = self._tasks.get(str(call.task_id))
        if task is None:
            return {"error": {"code": INTERNAL_ERROR, "message": "toolrelay proxy: the task is gone"}}, {}
        input_key = str(upstream_id)
        replying = asyncio.current_task()
        if task.legacy and replying is not None:  # a 2025 server's request: replied as this ends
            task.replying[input_key] = (upstream_id, replying)
        answer: asyncio.Future[JSONObject] = asyncio.get_running_loop().create_future()
        if task.legacy and task.given_up is not None:  # asked while the proxy gives up: its host won't answer
            task.declined[input_key] = upstream_id
            answer.set_result(self._declined(task, method))
        task.pending[input_key] = (method, params, answer)
        try:
            said = await answer
        finally:
            task.pending.pop(input_key, None)
        if input_key in task.declined:  # recorded as the proxy's own answer, with why
            return said, {PROXY_ANSWERED: task.given_up}
        return said, {"key": input_key, "state": task.echoed}


def _unknown_state(task: BridgedTask, request: Request) -> str | None:
    """Why a 2026-07-28 host's request is refused: it names a ``requestState`` the proxy never
    gave for ``task`` (None: it names none, or one of the task's own)."""
    given = (request.params or {}).get("requestState")
    if given is None:
        return None
    prefix = f"{task.task_id}-state-"
    number = given[len(prefix):] if isinstance(given, str) and given.startswith(prefix) else ""
    if number.isdigit() and str(int(number)) == number and 1 <= int(number) <= task.states:
        return None
    return f"requestState {given!r} is not one the proxy gave for task {task.task_id}"



def shown_with_task_support(tool: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 upstream's tool as a task-taking 2025 host is offered it."""
    return {**tool, "execution": {"taskSupport": "optional"}}
