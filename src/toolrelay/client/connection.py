"""One MCP server, as toolrelay's client sees it: handshake, requests, restarts, events.

A ``Connection`` owns the server's transport (``transport_registry.py`` picks it from
the config's ``transport``) and a numbered sequence of links over it. Link 1 is the
first start; when the channel ends (a stdio server dies), its pending requests fail at
once (``ServerExited`` with the exit code and its last stderr lines) and the next use
starts link 2, re-initializes, tells the user (a Notice) and lets the catalog re-list
(``on_restart``). A session the server forgot (HTTP 404) is renewed the same way. A
``tools/call`` is never retried.

Each link (``link.py``) is a ``Peer`` (ids, pending requests, timeouts, cancellation)
plus the inbox its transport delivers to. Nothing here depends on which transport it is.

What the server asks of us (roots, sampling, elicitation, tasks) is answered by the
connection's ``host.ServerRequests``, through the ``Host`` callbacks it was given; the
handshake declares those capabilities for the revision asked. A server request that
arrives while exactly one ``tools/call`` is pending is recorded (and answered) as part
of that call: its ``call_id`` tags the request and our reply.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Final

from .._version import __version__
from ..errors import (
    ProtocolError,
    RequestTimeout,
    RpcError,
    ToolrelayError,
    TransportError,
    UsageError,
)
from ..events import EventStream, Notice, ServerReady, ServerStarting
from ..protocol import mcp as m
from ..protocol.exchange import Exchange, Sent
from ..protocol.jsonrpc import JSONObject, Notification, RequestId
from ..protocol.param_headers import header_marks
from ..protocol.peer import MaxTimeExceeded
from ..protocol.request_envelope import LOG_LEVEL_KEY
from ..protocol.tasks_ext import created_ext_task
from ..protocol.versions import DEFAULT_VERSION, MODERN_VERSIONS, accept_server_version
from . import era_probe
from .config import ServerConfig
from .environment import redact
from .ext_tasks import ExtensionTaskCall
from .host import Host, ServerRequests, roots_from_paths
from .host.input_required import follow_input_required
from .link import Link
from .server_logs import DEFAULT_SHOWN_LEVEL, SET_LEVEL
from .task_rules import task_required_names, tasks_unavailable
from .tool_tasks import ToolTaskCall
from .transport import ClientTransport
from .transport_registry import transport_kind

__all__ = ["Connection"]

CLIENT_NAME: Final = "toolrelay"
_CLIENT: Final = (CLIENT_NAME, __version__)
_MAX_PAGES: Final = 1000  # a server whose nextCursor never ends must not loop us forever
_INPUT_REQUIRED_NAMES: Final = {m.GET_PROMPT: "name", m.READ_RESOURCE: "uri"}
"""Besides tools/call, the requests a 2026-07-28 server may answer ``input_required``
(each with the param naming what was asked, for messages)."""


class Connection:
    """One configured server: start, list tools, call tools, restart, close."""

    def __init__(
        self,
        config: ServerConfig,
        events: EventStream,
        *,
        protocol_version: str = DEFAULT_VERSION,
        log_dir: Path | None = None,
        host: Host | None = None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.number = 0
        """Connection number: 1 on the first start, +1 on every restart or session renewal."""
        self.protocol_version: str | None = None
        self.server_info: dict[str, Any] = {}
        self.capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.on_tools_changed: Callable[[str], None] | None = None
        self.on_resources_changed: Callable[[str], None] | None = None
        """Told the server's name on ``notifications/resources/list_changed``."""
        self.on_notification: Callable[[str, Notification, str | None], None] | None = None
        """Told every notification the server sends, with the call_id of the tools/call it
        came during (None: not known), after toolrelay's own handling (``toolrelay proxy``)."""
        self.on_restart: Callable[[str], Awaitable[None]] | None = None
        self.events = events
        self.transport: ClientTransport = transport_kind(config.transport, config.name).create(
            config, log_dir=log_dir
        )
        self._asked_version = protocol_version
        # roots only where the user named them: declaring some would make a server that
        # takes the client's roots (the Node reference one) drop the directories it was given
        named = config.roots if config.offer_roots else None
        roots = roots_from_paths(named) if named is not None else None
        self.requests = ServerRequests(host or Host(), config.name, roots,
                                       notify=self._notice, hold=self._hold,
                                       max_sampling=config.max_sampling_per_call)
        """Answers the server's requests (roots, sampling, elicitation, tasks)."""
        self.task_tools: frozenset[str] = frozenset()
        """Tools listed with ``execution.taskSupport: "required"`` (called as tasks)."""
        self.watched: list[str] = []
        """Resource URIs followed (``watch_resource``): re-asked on every listen request."""
        self._link: Link | None = None
        self._lock = asyncio.Lock()
        self._closed = False
        self._calls = 0
        self._refused_sampling: dict[RequestId, int] = {}
        """By the MCP id of a tools/call that ended: its sampling requests refused for the cap."""

    # -- state ----------------------------------------------------------------------------

    def also_notify(self, listener: Callable[[str, Notification, str | None], None]) -> None:
        """Tell ``listener`` every notification too, after whoever ``on_notification`` told before."""
        previous = self.on_notification

        def told(server: str, note: Notification, call: str | None) -> None:
            if previous is not None:
                previous(server, note, call)
            listener(server, note, call)

        self.on_notification = told

    @property
    def alive(self) -> bool:
        link = self._link
        return link is not None and link.ready and link.peer.closed is None

    @property
    def log_path(self) -> Path | None:
        """The server's stderr log file (servers run as a process)."""
        log = self.transport.log
        return log.path if log is not None else None

    @property
    def pid(self) -> int | None:
        """The server's process id (servers run as a process, once started)."""
        return self.transport.pid

    def stderr_tail(self, lines: int = 20) -> str:
        """The last lines the server wrote to stderr (secrets redacted)."""
        log = self.transport.log
        return redact(log.tail(lines), self.config.secrets) if log is not None else ""

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the server (or open the HTTP session) and complete the handshake."""
        async with self._lock:
            self._closed = False
            if not self.alive:
                await self._open()

    async def close(self) -> None:
        """Stop the server and fail whatever is pending; safe to call twice."""
        self._closed = True
        link = self._link
        if link is not None:
            await link.close()

    async def _open(self) -> None:
        previous = self._link
        if previous is not None:
            await previous.close()  # reap what is left of the last one
        self.number += 1
        self._emit_starting()
        link = Link(self, self.number, notice=self._notice, enveloped=self._enveloped)
        self._link = link
        try:
            await link.connect()
            await self._handshake(link)
        except BaseException:
            if link.end_reason is None:
                link.end_reason = "failed to start"
            await link.close()
            raise
        link.ready = True
        self._emit_ready()
        if self.protocol_version in MODERN_VERSIONS and link.listener.start(self.capabilities, self.watched):
            await asyncio.sleep(0)  # client/subscriptions.py: its request goes out before what follows

    async def _ready_link(self) -> Link:
        link = self._link
        if link is not None and link.ready and link.peer.closed is None:
            return link
        return await self._revive()

    async def _revive(self) -> Link:
        """Start on first use, or restart a server that died (never while closed)."""
        async with self._lock:
            if self._closed:
                raise TransportError(f"connection to server {self.name} is closed")
            previous = self._link
            if self.alive and previous is not None:
                return previous
            reason = previous.end_reason if previous is not None else None
            try:
                await self._open()
            except ToolrelayError as exc:
                if reason is not None:
                    self._notice("error", f"server {self.name} {reason}; restart failed: {exc}")
                raise
        if reason is not None:
            self._notice("warning", f"server {self.name} {reason}; restarted (connection {self.number})")
            if self.on_restart is not None:
                await self.on_restart(self.name)
        assert self._link is not None
        return self._link

    async def _handshake(self, link: Link) -> None:
        asked = era_probe.handshake_version(self._asked_version)
        params = m.initialize_params(asked, CLIENT_NAME, __version__, self.requests.capabilities(asked))
        timeout = self.config.request_timeout
        try:  # client/era_probe.py: the handshake, or (probing) the 2026-07-28 server/discover
            result = await era_probe.negotiate(link.peer, self._asked_version, params, timeout, _CLIENT,
                                               self.name,
                                         self.requests.capabilities)
        except RequestTimeout:
            raise RequestTimeout(
                f"server {self.name} did not answer initialize within {timeout:g} s"
            ) from None
        except RpcError as exc:
            raise ProtocolError(
                f"server {self.name} refused initialize ({asked}): {exc.rpc_message}"
            ) from None
        if isinstance(result, era_probe.Discovered):  # 2026-07-28: no initialize, no session
            self.protocol_version, self.server_info = result.version, result.server_info
            self.capabilities, self.instructions = result.capabilities, result.instructions
            self.requests.negotiated(result.version)  # answered through input_required
            return
        self.protocol_version = accept_server_version(self.name, asked, result.get("protocolVersion"))
        self.requests.negotiated(self.protocol_version)
        self.server_info = _object(result.get("serverInfo"))
        self.capabilities = _object(result.get("capabilities"))
        instructions = result.get("instructions")
        self.instructions = instructions if isinstance(instructions, str) else None
        link.peer.notify(m.INITIALIZED)
        link.transport.initialized(self.protocol_version)
        await self._ask_log_level(link)

    async def _ask_log_level(self, link: Link) -> None:
        """``logging/setLevel`` with the level asked, when the server declares logging; a
        refusal is a warning (its messages then come at the level it chose)."""
        level = self.config.log_level
        if level is None or "logging" not in self.capabilities:
            return
        try:
            exchange = await link.peer.call(SET_LEVEL, {"level": level}, timeout=self.config.request_timeout)
        except RequestTimeout as exc:
            self._notice("warning", f"server {self.name}: {exc}")
            return
        if exchange.error is not None:
            refused = exchange.error.message
            self._notice("warning", f"server {self.name} refused {SET_LEVEL} {level}: {refused}")

    async def renew_session(self, link: Link) -> None:
        """The server forgot our session (HTTP 404): handshake again on the same link."""
        self.number += 1
        link.tracer.connection = self.number
        self._emit_starting()
        try:
            await self._handshake(link)
        except ToolrelayError as exc:
            link.end_reason = f"lost its HTTP session ({exc})"
            link.peer.close(exc)  # the next use reconnects from scratch
            self._notice("error", f"server {self.name}: HTTP session expired; re-initializing failed: {exc}")
            raise
        self._emit_ready()
        self._notice("warning", f"server {self.name}: the HTTP session expired (404); "
                                f"re-initialized (connection {self.number})")
        if self.on_restart is not None:
            await self.on_restart(self.name)

    # -- requests -------------------------------------------------------------------------

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the server lists (all pages), as listed: which are offered to the model
        is the catalog's offer chain (``relay/offer.py``: the config's allow/deny among them)."""
        link = await self._ready_link()
        tools: list[dict[str, Any]] = []
        cursor: Any = None
        for _ in range(_MAX_PAGES):
            page = {"cursor": cursor} if cursor is not None else None
            params = self._enveloped(page)
            exchange = await link.peer.call(m.LIST_TOOLS, params, timeout=self.config.request_timeout)
            result = exchange.raise_for_error()
            tools.extend(self._usable_tools(result.get("tools")))
            cursor = result.get("nextCursor")
            if not isinstance(cursor, (str, int)) or isinstance(cursor, bool):
                self._mirror_headers(tools)
                self.task_tools = task_required_names(tools)
                return tools
        raise ProtocolError(f"server {self.name} sent more than {_MAX_PAGES} pages of tools/list")

    def _mirror_headers(self, tools: list[dict[str, Any]]) -> None:
        """2026-07-28: the tools' valid ``x-mcp-header`` marks go to the transport, which
        mirrors them into each call's headers (SEP-2243; over HTTP only). A tool whose marks
        break the revision's rules is withheld by the offer chain (relay/offer.py)."""
        if self.protocol_version in MODERN_VERSIONS:
            self.transport.tool_headers(header_marks(tools))

    def _usable_tools(self, raw: Any) -> list[dict[str, Any]]:
        if not isinstance(raw, list):
            raise ProtocolError(f"server {self.name} answered tools/list without a tools array")
        usable = []
        for tool in raw:
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                self._notice("warning", f"server {self.name} listed a tool without a name; ignored")
            else:
                usable.append(tool)
        return usable

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        call_id: str | None = None,
        timeout: float | None = None,
        meta: Mapping[str, Any] | None = None,
        on_sent: Sent | None = None,
        on_task: Sent | None = None,
    ) -> Exchange:
        """Send one tools/call; a JSON-RPC error comes back inside the Exchange. ``meta``:
        entries for the request's ``params._meta`` (toolrelay's own keys win); ``on_sent``
        is given each tools/call once it is on the wire; ``on_task``, when the server makes
        the call a tasks-extension task, each of its exchanges answered (``ext_tasks.py``).

        Raises TransportError subclasses when no answer can come: ServerExited,
        RequestTimeout (after sending notifications/cancelled), MessageTooLarge,
        HttpStatusError. Cancelling the caller sends notifications/cancelled.
        """
        if not self.config.allows(name):
            raise UsageError(f"tool {name!r} of server {self.name} is excluded by its allow/deny list")
        sent: RequestId | None = None  # the tools/call's MCP id: what its server requests are counted by
        try:
            # execution.taskSupport "required": client/tool_tasks.py
            way = self._call_as_task if name in self.task_tools else self._call_directly
            exchange = await way(name, arguments, call_id=call_id, timeout=timeout, meta=meta,
                                 on_sent=on_sent, on_task=on_task)
            sent = exchange.mcp_id
            return exchange
        except ToolrelayError as exc:
            sent = getattr(exc, "mcp_id", None)
            raise
        finally:
            if sent is not None and (refused := self.requests.end_call(sent)):
                self._refused_sampling[sent] = refused

    async def _call_directly(
        self, name: str, arguments: dict[str, Any], *, call_id: str | None, timeout: float | None,
        meta: Mapping[str, Any] | None, on_sent: Sent | None, on_task: Sent | None = None,
    ) -> Exchange:
        link = self._link
        if link is None or not link.ready or link.peer.closed is not None:
            link = await self._revive()
        limit = self.config.call_timeout if timeout is None else timeout
        self._calls += 1  # the token names this call (its progress renews its idle limit)
        token = f"{call_id or 'call'}-{self._calls}"
        asked = {"name": name, "arguments": arguments, "_meta": {**(meta or {}), "progressToken": token}}
        params = self._enveloped(asked) or {}
        peer, most = link.peer, self.config.max_call_time

        async def send(sent: JSONObject) -> Exchange:  # 2026-07-28: each retry has a new id
            try:
                return await peer.call(m.CALL_TOOL, sent, timeout=limit, tag=call_id, max_time=most,
                                       on_sent=on_sent)
            except MaxTimeExceeded as exc:  # named for the user: how to give it more time
                hint = "--call-max-time (or the config's maxCallTime) sets the maximum"
                said = MaxTimeExceeded(f"{exc}; {hint}")
                said.mcp_id, said.request = exc.mcp_id, exc.request
                raise said from None
        what = f"tools/call {name}"
        began = asyncio.get_running_loop().time()
        exchange = await follow_input_required(send, params, self.requests, call_id=call_id, what=what)
        if created_ext_task(exchange.result) is None or exchange.error is not None:
            return exchange
        # the server made the call a task of the tasks extension: client/ext_tasks.py
        task = ExtensionTaskCall(peer=peer, requests=self.requests, envelope=self._envelope_of,
                                 server=self.name,
                                 tool=name, call_id=call_id, limit=limit,
                                 request_timeout=self.config.request_timeout, on_sent=on_sent,
                                 on_task=on_task)
        return await task.run(exchange, began)

    def _envelope_of(self, params: JSONObject) -> JSONObject:
        return self._enveloped(params) or params

    @property
    def tasks_unavailable(self) -> str | None:
        """Why tools that must run as tasks cannot be called here (None: they can)."""
        return tasks_unavailable(self.protocol_version, self.capabilities)

    async def _call_as_task(
        self, name: str, arguments: dict[str, Any], *, call_id: str | None, timeout: float | None,
        meta: Mapping[str, Any] | None, on_sent: Sent | None, on_task: Sent | None = None,
    ) -> Exchange:
        why = self.tasks_unavailable
        if why is not None:
            raise UsageError(f"tool {name!r} of server {self.name} must be called as a task "
                             f"(execution.taskSupport: required), and {why}")
        link = await self._ready_link()
        task = ToolTaskCall(peer=link.peer, server=self.name, tool=name, call_id=call_id,
                            limit=self.config.call_timeout if timeout is None else timeout,
                            request_timeout=self.config.request_timeout, owners=self.requests.tool_tasks,
                            on_sent=on_sent)
        asked: JSONObject = {"name": name, "arguments": arguments}
        return await task.run(asked | {"_meta": dict(meta)} if meta else asked)

    def _enveloped(self, params: JSONObject | None) -> JSONObject | None:
        """``params`` with the 2026-07-28 envelope (our capabilities) when that is the era."""
        version = self.protocol_version
        if version not in MODERN_VERSIONS:  # the hot path of a 2025 connection: nothing to add
            return params
        sent = era_probe.enveloped(params, version, _CLIENT, self.requests.capabilities(version))
        if sent is not None:  # no logging/setLevel in this era; without a level nothing is sent to us
            sent["_meta"][LOG_LEVEL_KEY] = self.config.log_level or DEFAULT_SHOWN_LEVEL
        return sent

    def set_roots(self, paths: list[str | Path]) -> None:
        """Offer other roots from now on (where roots are declared: ``config.roots``); a live
        server is told (roots/list_changed)."""
        link = self._link
        changed = self.requests.set_roots(roots_from_paths(paths))
        if changed and self.alive and link is not None and self.protocol_version not in MODERN_VERSIONS:
            link.peer.notify(m.ROOTS_CHANGED)  # 2026-07-28 has none: roots are asked per call

    async def watch_resource(self, uri: str) -> None:
        """Follow ``uri`` on a 2026-07-28 server (its updates are notices): the listen
        request is replaced by one that names it too (``client/subscriptions.py``)."""
        if uri in self.watched:
            return
        self.watched.append(uri)
        link = await self._ready_link()
        await link.listener.restart(self.capabilities, self.watched, timeout=self.config.request_timeout)

    def _hold(self, mcp_id: RequestId) -> Callable[[], None]:
        """Stop the clock of our request ``mcp_id`` until the function returned is called."""
        link = self._link
        if link is None:
            return lambda: None
        peer = link.peer  # released on the peer held, even if the link was replaced meanwhile
        peer.hold(mcp_id)
        return lambda: peer.release(mcp_id)

    def refused_sampling(self, mcp_id: RequestId | None) -> int:
        """How many sampling requests of the tools/call ``mcp_id``, which just ended, were
        refused for the cap (asked once: the count is forgotten)."""
        return self._refused_sampling.pop(mcp_id, 0) if mcp_id is not None else 0

    async def ping(self) -> None:
        """Check the server answers (request_timeout applies)."""
        link = await self._ready_link()
        version = self.protocol_version  # 2026-07-28 has no ping
        method, params = era_probe.liveness_check(version, _CLIENT, self.requests.capabilities(version or ""))
        (await link.peer.call(method, params, timeout=self.config.request_timeout)).raise_for_error()

    async def request(self, method: str, params: JSONObject | None = None) -> JSONObject:
        """One request of the server's other features (resources, prompts, completion): its
        result, or ``RpcError`` for a JSON-RPC error (request_timeout applies to each round)."""
        return (await self.exchange(method, params)).raise_for_error()

    async def exchange(
        self, method: str, params: JSONObject | None = None, *, tag: str | None = None,
        timeout: float | None = None, on_answer: Sent | None = None,
    ) -> Exchange:
        """``request`` as its whole exchange (a JSON-RPC error inside it), recorded with
        ``tag`` (the call_id of the model's call it stands for); ``timeout`` replaces the
        server's request_timeout; ``on_answer`` is given the exchange as its answer is read,
        before anything the server sends after it (``Peer.call``).

        ``prompts/get`` and ``resources/read`` may be answered ``input_required`` in
        2026-07-28: what the server asks is answered and the request retried, as for
        ``tools/call`` (``follow_input_required``)."""
        link = await self._ready_link()
        peer = link.peer
        limit = self.config.request_timeout if timeout is None else timeout
        sent = self._enveloped(params)
        named = _INPUT_REQUIRED_NAMES.get(method)
        if named is None or sent is None:
            return await peer.call(method, sent, timeout=limit, tag=tag, on_answer=on_answer)

        async def send(retried: JSONObject) -> Exchange:  # each retry has a new id
            return await peer.call(method, retried, timeout=limit, tag=tag)
        what = f"{method} {sent.get(named)}"
        try:
            return await follow_input_required(send, sent, self.requests, call_id=tag, what=what)
        finally:
            if tag is not None:  # its sampling count, like a tools/call's, ends with it
                self.requests.end_call(tag)

    # -- events ---------------------------------------------------------------------------

    def _emit_starting(self) -> None:
        if self.events.active:
            self.events.emit(ServerStarting(server=self.name, connection=self.number,
                                            transport=self.config.transport, target=self.config.target))

    def _emit_ready(self) -> None:
        if self.events.active:
            self.events.emit(ServerReady(
                server=self.name, connection=self.number, protocol_version=self.protocol_version or "",
                server_info=self.server_info, capabilities=self.capabilities, log_level=self.config.log_level,
            ))

    def _notice(self, level: str, text: str) -> None:
        if self.events.active:
            self.events.emit(Notice(level=level, text=text, server=self.name))


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
