"""A host's own MCP tasks (2025-11-25), passed through to the upstream server that runs them.

A host that declared ``capabilities.tasks`` in a 2025-11-25 handshake is offered each
tool's ``execution.taskSupport`` as its server listed it, where that server's connection
runs tasks (2025-11-25, ``tasks.requests.tools.call`` declared: ``client/tool_tasks.py``).
Its ``tools/call`` with ``params.task`` goes upstream as a task, and the host is given a
task id of the proxy's (``PassedTask``), never the upstream's: two servers may both say
``task-1``, so a task is found by the proxy's id alone and stands for one (server,
connection, upstream task id). Then, for the host that created it only:

- ``tasks/get``, ``tasks/result``, ``tasks/cancel`` go to that server with its own id,
  and come back with the host's id in the places a task id is said (the task itself,
  the result's related-task meta), the rest unchanged;
- ``tasks/list`` lists the host's tasks across every server (a server's ``tasks/list``
  pages, or ``tasks/get`` of each of the host's tasks where it declares no list), its
  bridged tasks (``task_bridge.py``, their latest state), and nothing of another host's
  or of the proxy's own;
- an upstream ``notifications/tasks/status`` reaches the owning host with its id; the
  task's progress, where the host's ``tools/call`` gave a ``progressToken`` (valid until
  the task ends), reaches it with that token (upstream the proxy's own, ``KEY-task``); what
  the upstream asks during the task (its related-task meta) reaches that host too, naming
  the host's task (``asks.py``): on the stream of its request about the task pending then
  (the latest, if several), recorded under its key; while none is, asked of the host as no
  request's (over HTTP: on its session's GET stream) and recorded under the task itself
  (``proxy_ask`` with ``task_id``, no key).

A task id the host does not own is -32602, as an unknown one; a task whose server
restarted since is lost (-32602 naming why). Any other host (2025-06-18, no ``tasks``
declared, a 2026-07-28 host that declares no tasks extension) keeps what ``forward.py``
does: a task tool is run as a task by the proxy and answered plainly. A host's task on a
2026-07-28 server, and a 2026-07-28 host's task on this 2025-11-25 kind, are bridged
between the eras (``task_bridge.py``). Each step is recorded (``ProxyTask``, ``ProxyTaskStatus`` and
every request's ``proxy_host`` / ``proxy_route``), so ``verify`` holds each answer to the
upstream task it came from (``verify/proxy_tasks.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..client.connection import Connection
from ..client.task_rules import TASKS_VERSION, created_task
from ..errors import RpcError, ToolrelayError, TransportError
from ..protocol import mcp as m
from ..protocol.exchange import Exchange
from ..protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    JSONObject,
    Notification,
    Request,
    RequestId,
)
from ..protocol.passthrough import passed_on, with_task_id
from ..redaction import redact
from ..relay.catalog import Catalog
from ..relay.stages.route import Route
from ..server.app import CallContext, ServerSession
from ..server.features import FeatureHandler
from .forward import Forwarder, forwarded_meta, tool_error
from .host_calls import HostCall
from .records import ProxyRelayed, ProxyTask, ProxyTaskForgotten, ProxyTaskStatus
from .task_bridge import TaskBridge

__all__ = ["TASK_METHODS", "PassedTask", "TaskRelay", "host_takes_tasks"]

TASK_METHODS: Final = (m.TASKS_GET, m.TASKS_RESULT, m.TASKS_LIST, m.TASKS_CANCEL)
_TASKED: Final = frozenset({"optional", m.TASK_SUPPORT_REQUIRED})
_MAX_KEPT: Final = 1000
"""Tasks remembered at most (the oldest forgotten first, recorded): a host that never asks for
its results must not grow the proxy without end."""
FORGOTTEN_OLDEST: Final = "the proxy keeps at most {kept} tasks; the oldest is forgotten first"
_MAX_PAGES: Final = 100
_LINGERING: Final = 2
"""How many keys a task's asks belonged to before are kept reachable (``PassedTask.lingering``)."""
_NOT_FOUND: Final = "Failed to retrieve task: Task not found"


def host_takes_tasks(session: ServerSession | None) -> bool:
    """Whether a host's own tasks pass through: a 2025-11-25 session whose host declared tasks."""
    return (session is not None and session.protocol_version == TASKS_VERSION
            and isinstance(session.client_capabilities.get("tasks"), dict))


@dataclass(slots=True, kw_only=True)
class PassedTask:
    """One host task: the proxy's id of it, and the upstream task it stands for."""

    task_id: str
    key: str
    """The proxy's key of the host's ``tools/call`` that created it."""
    server: str
    connection: int
    upstream_id: str
    owner: weakref.ref[ServerSession]
    """The host's session (weakly: an HTTP session the endpoint ended is not kept alive by its tasks)."""
    host: int | None
    mcp_id: RequestId
    """The upstream ``tools/call``'s id (what the upstream's asks during the task are counted by)."""
    host_token: Any = None
    """The host's ``progressToken`` of its ``tools/call`` (valid until the task ends), if it gave one."""
    bound: str = ""
    """The key the task's asks now belong to: a pending host request's (the ``tools/call``,
    then each ``tasks/*`` request: asked on its stream, recorded under its key), or, while
    none is pending, the task's own id (asked as no request's, recorded under the task)."""
    pending: list[tuple[str, Request]] = field(default_factory=list)
    """The host's requests about the task not answered yet (key, request), oldest first."""
    ended: bool = False
    """The host was told the task ended: nothing more is asked during it."""
    lingering: list[str] = field(default_factory=list)
    """Keys the task's asks belonged to before ``bound``, their calls kept a little: an ask
    that came while one was bound (tagged with it) is answered through it even if handled later."""


class TaskRelay:
    """The hosts' tasks by the proxy's id; their requests and status passed through."""

    def __init__(self, catalog: Catalog, forwarder: Forwarder) -> None:
        self.catalog = catalog
        self.forwarder = forwarder
        self.events = forwarder.events
        self._tasks: dict[str, PassedTask] = {}
        self._by_upstream: dict[tuple[str, int, str], str] = {}
        """(server, connection, upstream task id) → the proxy's task id (a restarted server
        numbers its tasks anew)."""
        self._by_token: dict[tuple[str, str], str] = {}
        """(server, the proxy's upstream progressToken) → the task it tells the progress of."""
        self._numbers = itertools.count(1)
        self._salt = secrets.token_hex(4)  # a task id is unguessable: it is all that names a task
        self.bridge = TaskBridge(catalog, forwarder)
        """A 2025 host's tasks that a 2026-07-28 upstream runs as extension tasks (``task_bridge.py``)."""

    # -- what is offered ---------------------------------------------------------------------

    def runs_tasks(self, server: str) -> bool:
        connection = self.catalog.connections.get(server)
        return connection is not None and connection.tasks_unavailable is None

    def capabilities(self) -> JSONObject:
        servers = self.catalog.available
        if not any(self.runs_tasks(server) or self.bridge.serves(server) for server in servers):
            return {}
        return {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}

    def shown_to(self, session: ServerSession | None) -> Callable[[Route], bool] | None:
        """Which tools ``session``'s host is shown the task support of (None: none)."""
        if not host_takes_tasks(session):
            return None
        return lambda route: self.runs_tasks(route.server)

    def passes(self, route: Route | None, session: ServerSession | None, params: JSONObject | None) -> bool:
        """Whether a host's ``tools/call`` (``params``) is one of its own tasks to pass through."""
        if route is None or not isinstance((params or {}).get("task"), dict) or not host_takes_tasks(session):
            return False
        execution = self.catalog.listed(route).get("execution")
        support = execution.get("taskSupport") if isinstance(execution, dict) else None
        return support in _TASKED and self.runs_tasks(route.server)

    # -- a host's tools/call with a task -----------------------------------------------------

    async def create(self, alias: str, route: Route, arguments: JSONObject, request: Request,
                     version: str | None, session: ServerSession) -> JSONObject:
        """The host's answer to its task-augmented ``tools/call``: the upstream's
        ``CreateTaskResult`` with the proxy's task id (or what it answered instead)."""
        host = self.forwarder.calls.number_of(session)
        made: list[PassedTask] = []
        try:
            return await self.forwarder.recorded(
                request, version, host,
                lambda key: self._create(key, alias, route, arguments, request, session, host, made))
        finally:
            for task in made:  # answered: what the task asks from now on is asked under the task itself
                self._answered(task, task.key)

    async def _create(self, key: str, alias: str, route: Route, arguments: JSONObject, request: Request,
                      session: ServerSession, host: int | None, made: list[PassedTask]) -> JSONObject:
        forwarder = self.forwarder
        refused = await forwarder.refused(key, request, alias, route, arguments)
        if refused is not None:
            return refused
        connection = self.catalog.connections[route.server]
        asked = (request.params or {})["task"]
        params: JSONObject = {"name": route.tool, "arguments": arguments, "task": asked}
        meta = forwarded_meta(request.params)
        host_token = _progress_token(request.params)
        if host_token is not None:  # the upstream's progress of the task, told by the proxy's own token
            meta = {**(meta or {}), "progressToken": _upstream_token(key)}
        if meta:
            params["_meta"] = meta

        def on_answer(answered: Exchange) -> None:  # kept before the server's next message is read
            made_id = (created_task(answered.result) or {}).get("taskId")
            if isinstance(made_id, str) and made_id:  # (what it asks at once names the task)
                made.append(self._kept(key, route.server, connection, made_id, session, host, answered.mcp_id,
                                       request, host_token))

        try:
            exchange = await connection.exchange(m.CALL_TOOL, params, tag=key, on_answer=on_answer)
        except asyncio.CancelledError:  # the host cancelled, or went away: cancelled upstream too
            forwarder.route(key, request, alias, "cancelled", route=route,
                            reason="the host cancelled the call or disconnected")
            raise
        except ToolrelayError as exc:
            said = redact(str(exc), self.catalog.secrets)
            forwarder.route(key, request, alias, "failed", route=route, reason=said)
            return tool_error(f"toolrelay proxy: server {route.server} did not answer: {said}")
        task = created_task(exchange.result)
        upstream_id = task.get("taskId") if task is not None else None
        decision = "task" if isinstance(upstream_id, str) and upstream_id else "forwarded"
        forwarder.route(key, request, alias, decision, route=route, sent=[(exchange, connection.number)])
        if exchange.error is not None:
            raise RpcError(exchange.error.code, exchange.error.message, exchange.error.data)
        assert exchange.result is not None
        result = _passed(exchange.result)
        if task is None or not isinstance(upstream_id, str) or not upstream_id or not made:
            return result  # the server ran it plainly: its result is the answer
        return with_task_id(result, upstream_id, made[0].task_id)

    def _kept(self, key: str, server: str, connection: Connection, upstream_id: str, session: ServerSession,
              host: int | None, mcp_id: RequestId, request: Request, host_token: Any) -> PassedTask:
        """The host's task the upstream just made, kept and bound to the ``tools/call`` (``key``)
        whose answer it is, with the host's progress token if it gave one."""
        passed = self._keep(key, server, connection, upstream_id, session, host, mcp_id)
        if host_token is not None:
            passed.host_token = host_token
            self._by_token[(server, _upstream_token(key))] = passed.task_id
        self._asked_about(passed, key, request)
        return passed

    def _keep(self, key: str, server: str, connection: Connection, upstream_id: str, session: ServerSession,
              host: int | None, mcp_id: RequestId) -> PassedTask:
        task = PassedTask(task_id=f"toolrelay-{next(self._numbers)}-{self._salt}", key=key, server=server,
                          connection=connection.number, upstream_id=upstream_id, owner=weakref.ref(session),
                          host=host,
                          mcp_id=mcp_id)
        while len(self._tasks) >= _MAX_KEPT:
            self._forget(next(iter(self._tasks.values())), FORGOTTEN_OLDEST.format(kept=_MAX_KEPT), _MAX_KEPT)
        self._tasks[task.task_id] = task
        self._by_upstream[(server, connection.number, upstream_id)] = task.task_id
        if self.events.active:
            self.events.emit(ProxyTask(key=key, task_id=task.task_id, server=server,
                                       connection=connection.number, upstream_task_id=upstream_id, host=host,
                                       host_version=session.protocol_version))
        return task

    def _asked_about(self, task: PassedTask, key: str, request: Request) -> None:
        """A host request about ``task`` (``key``) is pending: what the task asks is its."""
        task.pending.append((key, request))
        self._bind(task, key, request)

    def _answered(self, task: PassedTask, key: str) -> None:
        """The host request ``key`` about ``task`` was answered: what the task asks goes to
        the latest one still pending, else to the task itself (its id the key)."""
        task.pending = [(k, r) for k, r in task.pending if k != key]
        if task.ended or self._tasks.get(task.task_id) is not task:
            return
        if task.pending:
            self._bind(task, *task.pending[-1])
        else:
            self._bind(task, task.task_id, None)

    def _bind(self, task: PassedTask, key: str, request: Request | None) -> None:
        """What the upstream asks during ``task`` (its related-task meta) belongs, from now
        on, to the host request ``key``: asked on its stream, recorded under its key; with
        ``request`` None (none pending), to the task itself (``key`` its id), asked as no
        request's."""
        previous = self.forwarder.calls.get(task.bound)
        if key == task.bound and previous is not None:
            return  # bound to it already
        self._move_on(task)
        if key in task.lingering:  # bound to it again (the task itself, between requests)
            task.lingering.remove(key)
        session = task.owner()
        last = request or (previous.request if previous is not None else None)
        if session is None or last is None:
            return
        self.forwarder.calls.add(HostCall(
            key=key, request=last, protocol_version=session.protocol_version, session=session,
            capabilities=session.client_capabilities, server=task.server, host=task.host,
            task_id=task.task_id, between=request is None))
        self.catalog.connections[task.server].requests.tool_tasks[task.upstream_id] = (key, task.mcp_id)
        task.bound = key

    def _move_on(self, task: PassedTask) -> None:
        """The task's asks no longer go to ``bound``; its call lingers (``PassedTask.lingering``)."""
        call = self.forwarder.calls.get(task.bound) if task.bound else None
        if call is None:
            self._release(task)
            return
        call.lingering = True
        task.lingering.append(task.bound)
        while len(task.lingering) > _LINGERING:
            self.forwarder.calls.remove(task.lingering.pop(0))
        self._release(task)

    def _unbind(self, task: PassedTask) -> None:
        """Nothing more is asked during the task (it ended, or is forgotten)."""
        for key in task.lingering:
            self.forwarder.calls.remove(key)
        task.lingering.clear()
        if task.bound:
            self.forwarder.calls.remove(task.bound)
        self._release(task)

    def _release(self, task: PassedTask) -> None:
        if not task.bound:
            return
        owners = self.catalog.connections[task.server].requests.tool_tasks
        if owners.get(task.upstream_id) == (task.bound, task.mcp_id):  # not a restarted server's same id
            del owners[task.upstream_id]
        task.bound = ""

    def _forget(self, task: PassedTask, reason: str, kept: int | None = None) -> None:
        """No longer keep ``task`` (recorded: no ``tasks/list`` lists it from now on)."""
        if self.events.active:
            self.events.emit(ProxyTaskForgotten(task_id=task.task_id, reason=reason, kept=kept))
        self._tasks.pop(task.task_id, None)
        self._by_upstream.pop((task.server, task.connection, task.upstream_id), None)
        self._by_token.pop((task.server, _upstream_token(task.key)), None)
        self._unbind(task)

    # -- the host's tasks/* requests ---------------------------------------------------------

    def methods(self) -> Mapping[str, FeatureHandler]:
        return dict.fromkeys(TASK_METHODS, self._handler)

    def _handler(self, params: JSONObject | None, context: CallContext) -> Awaitable[JSONObject]:
        request = context.request
        assert request is not None  # every transport gives it
        return self._recorded(request, context.protocol_version, context.session)

    async def _recorded(self, request: Request, version: str | None, session: ServerSession | None
                        ) -> JSONObject:
        host = self.forwarder.calls.number_of(session)
        return await self.forwarder.recorded(
            request, version, host, lambda key: self._answer_task_request(key, request, session))

    async def _answer_task_request(self, key: str, request: Request, session: ServerSession | None
                                   ) -> JSONObject:
        if session is None or (session.protocol_version or "") < TASKS_VERSION:
            self.forwarder.route_to(key, request, request.method, "unknown",
                                    reason="no tasks in this revision")
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
        if request.method == m.TASKS_LIST:
            return await self._list(key, request, session)
        return await self._one(key, request, session)

    def _owned(self, task_id: str, session: ServerSession | None) -> PassedTask | None:
        task = self._tasks.get(task_id)
        return task if task is not None and session is not None and task.owner() is session else None

    async def _one(self, key: str, request: Request, session: ServerSession | None) -> JSONObject:
        task_id = m.require_str(request.params, "taskId")
        bridged = self.bridge.owns(task_id, session)
        if bridged is not None:
            return await self.bridge.answer(key, request, bridged)
        task = self._owned(task_id, session)
        if task is None:  # another host's is as unknown to this one as a made-up id
            self.forwarder.route_to(key, request, task_id, "unknown",
                                    reason="no task of this host's has that id")
            raise RpcError(INVALID_PARAMS, f"{_NOT_FOUND}: {task_id}")
        connection = self.catalog.connections[task.server]
        if connection.number != task.connection or not connection.alive:  # never restarted for it
            said = f"server {task.server} exited or restarted since the task began; the task is lost"
            self.forwarder.route_to(key, request, task_id, "failed",
                                    target=(task.server, task.upstream_id), reason=said)
            self._forget(task, said)
            raise RpcError(INVALID_PARAMS, f"{_NOT_FOUND}: {task_id} ({said})")
        self._asked_about(task, key, request)
        try:
            return await self._passed_through(key, request, task, connection)
        finally:
            self._answered(task, key)

    async def _passed_through(self, key: str, request: Request, task: PassedTask, connection: Connection
                              ) -> JSONObject:
        """The host's ``tasks/get``, ``tasks/result`` or ``tasks/cancel`` of ``task``, sent to its
        server with the upstream's id, the answer with the host's."""
        sent: JSONObject = {k: v for k, v in (request.params or {}).items() if k != "_meta"}
        sent["taskId"] = task.upstream_id
        meta = forwarded_meta(request.params)
        if meta:
            sent["_meta"] = meta
        # tasks/result waits for the task's end: the call's time, not one request's
        wait = connection.config.call_timeout if request.method == m.TASKS_RESULT else None
        exchange = await self._exchange(key, request, task, connection, sent, wait)
        if exchange.error is not None:
            raise RpcError(exchange.error.code, exchange.error.message, exchange.error.data)
        assert exchange.result is not None
        result = with_task_id(_passed(exchange.result), task.upstream_id, task.task_id)
        if request.method == m.TASKS_RESULT or result.get("status") in m.TERMINAL_TASK_STATUSES:
            task.ended = True
            self._unbind(task)  # it ended: nothing more is asked during it (its id stays the host's)
        return result

    async def _exchange(self, key: str, request: Request, task: PassedTask, connection: Connection,
                        sent: JSONObject, wait: float | None) -> Any:
        try:
            exchange = await connection.exchange(request.method, sent, tag=key, timeout=wait)
        except asyncio.CancelledError:  # the host cancelled its request, or left: cancelled upstream too
            self.forwarder.route_to(key, request, task.task_id, "cancelled",
                                    target=(task.server, task.upstream_id),
                                    reason="the host cancelled the request or disconnected")
            raise
        except ToolrelayError as exc:
            said = redact(str(exc), self.catalog.secrets)
            target = (task.server, task.upstream_id)
            self.forwarder.route_to(key, request, task.task_id, "failed", target=target, reason=said)
            raise RpcError(INTERNAL_ERROR, f"toolrelay proxy: server {task.server} did not answer: "
                                           f"{said}") from None
        self.forwarder.route_to(key, request, task.task_id, "forwarded",
                                target=(task.server, task.upstream_id), sent=[(exchange, connection.number)])
        return exchange

    async def _list(self, key: str, request: Request, session: ServerSession | None) -> JSONObject:
        mine = [task for task in self._tasks.values() if session is not None and task.owner() is session]
        servers = sorted({task.server for task in mine})
        found = await asyncio.gather(*(self._list_server(key, server, mine) for server in servers))
        listed = [item for items in found for item in items]
        listed += self.bridge.listed(session)  # its bridged tasks: their latest state, nothing sent
        self.forwarder.route_to(key, request, m.TASKS_LIST, "listed")
        return {"tasks": listed}

    async def _list_server(self, key: str, server: str, mine: list[PassedTask]) -> list[JSONObject]:
        """The host's tasks on ``server``, as it reports them (its list, else each one's get)."""
        connection = self.catalog.connections[server]
        theirs = {task.upstream_id: task for task in mine
                  if task.server == server and task.connection == connection.number and connection.alive}
        if not theirs:
            return []
        tasks_capability = connection.capabilities.get("tasks")
        with contextlib.suppress(ToolrelayError):
            if isinstance(tasks_capability, dict) and isinstance(tasks_capability.get("list"), dict):
                return await self._pages(key, connection, theirs)
            return [await self._got(key, connection, task) for task in theirs.values()]
        return []  # a server that did not answer: its part of the list is left out

    async def _pages(self, key: str, connection: Connection, theirs: dict[str, PassedTask]
                     ) -> list[JSONObject]:
        items: list[JSONObject] = []
        cursor: Any = None
        for _ in range(_MAX_PAGES):
            page = await connection.exchange(m.TASKS_LIST, {"cursor": cursor} if cursor is not None else None,
                                             tag=key)
            result = page.raise_for_error()
            for item in result.get("tasks") or []:
                task = theirs.get(str(item.get("taskId"))) if isinstance(item, dict) else None
                if task is not None:  # only the host's own: not another host's, nor the proxy's
                    items.append(with_task_id(item, task.upstream_id, task.task_id))
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str):
                break
        return items

    async def _got(self, key: str, connection: Connection, task: PassedTask) -> JSONObject:
        exchange = await connection.exchange(m.TASKS_GET, {"taskId": task.upstream_id}, tag=key)
        return with_task_id(_passed(exchange.raise_for_error()), task.upstream_id, task.task_id)

    # -- what servers tell of tasks ----------------------------------------------------------

    def watch(self) -> None:
        """Pass each upstream ``notifications/tasks/status`` on to the host that owns the task."""
        for connection in self.catalog.connections.values():
            connection.also_notify(self._told)

    def _told(self, server: str, note: Notification, call: str | None) -> None:
        if note.method == m.TASK_STATUS:
            self._status(server, note)
        elif note.method == m.PROGRESS:
            self._progress(server, note)

    def _progress(self, server: str, note: Notification) -> None:
        """A task's progress after its ``tools/call`` was answered: to its host, with its token."""
        token = (note.params or {}).get("progressToken")
        task_id = self._by_token.get((server, token)) if isinstance(token, str) else None
        task = self._tasks.get(task_id) if task_id is not None else None
        session = task.owner() if task is not None else None
        if task is None or session is None or task.host_token is None:
            return  # not a host task's (a call's progress is passed on by host_calls.py)
        params = {**(note.params or {}), "progressToken": task.host_token}
        if self.events.active:
            self.events.emit(ProxyRelayed(key=task.key, host_id=None, server=server, method=note.method,
                                          upstream=note.raw, host=params, upstream_token=token,
                                          host_token=task.host_token, to_host=task.host))
        with contextlib.suppress(TransportError):
            session.peer.notify(m.PROGRESS, params)

    def _status(self, server: str, note: Notification) -> None:
        upstream_id = (note.params or {}).get("taskId")
        number = self.catalog.connections[server].number
        found = (server, number, upstream_id) if isinstance(upstream_id, str) else None
        task_id = self._by_upstream.get(found) if found is not None else None
        task = self._tasks.get(task_id) if task_id is not None else None
        session = task.owner() if task is not None else None
        if task is None or session is None:
            return  # a task of the proxy's own (a host without tasks), of a restarted server, of a host gone
        params = with_task_id(dict(note.params or {}), task.upstream_id, task.task_id)
        if self.events.active:
            self.events.emit(ProxyTaskStatus(task_id=task.task_id, server=server, connection=task.connection,
                                             upstream=note.raw, host=params, to_host=task.host))
        with contextlib.suppress(TransportError):  # the host left
            session.peer.notify(m.TASK_STATUS, params)


def _progress_token(params: JSONObject | None) -> Any:
    meta = (params or {}).get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None


def _upstream_token(key: str) -> str:
    """The proxy's ``progressToken`` upstream for the host task its call ``key`` created."""
    return f"{key}-task"


def _passed(result: JSONObject) -> JSONObject:
    """``passed_on``, but for the related-task meta: the spec's, not the leg's envelope
    (``tasks/result`` carries it; ``with_task_id`` gives it the host's id)."""
    out = passed_on(result)
    meta = result.get("_meta")
    related = meta.get(m.RELATED_TASK) if isinstance(meta, dict) else None
    if isinstance(related, dict):
        out["_meta"] = {**(out.get("_meta") or {}), m.RELATED_TASK: related}
    return out
