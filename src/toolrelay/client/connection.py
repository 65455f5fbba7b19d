"""One MCP server, as toolrelay's client sees it: handshake, requests, restarts, events.

A ``Connection`` owns the server's transport (``transport_registry.py`` picks it from
the config's ``transport``) and a numbered sequence of links over it. Link 1 is the
first start; when the channel ends (a stdio server dies), its pending requests fail at
once (``ServerExited`` with the exit code and its last stderr lines) and the next use
starts link 2, re-initializes, tells the user (a Notice) and lets the catalog re-list
(``on_restart``). A session the server forgot (HTTP 404) is renewed the same way. A
``tools/call`` is never retried.

Each link is a ``Peer`` (ids, pending requests, timeouts, cancellation) plus the
``Inbox`` its transport delivers to: non-JSON lines are skipped and reported, oversized
messages fail only the request they answer. Nothing here depends on which transport
it is.

What the server asks of us (roots, sampling, elicitation, tasks) is answered by the
connection's ``host.ServerRequests``, through the ``Host`` callbacks it was given; the
handshake declares those capabilities for the revision asked. A server request that
arrives while exactly one ``tools/call`` is pending is recorded (and answered) as part
of that call: its ``call_id`` tags the request and our reply.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final

from .._version import __version__
from ..errors import (
    MessageTooLarge,
    ProtocolError,
    RequestTimeout,
    RpcError,
    ToolrelayError,
    TransportError,
    UsageError,
)
from ..events import Event, EventStream, McpInvalid, Notice, ServerExitedEvent, ServerReady, ServerStarting
from ..protocol import json_depth, jsonrpc
from ..protocol import mcp as m
from ..protocol.framing import Oversized, find_id
from ..protocol.jsonrpc import PARSE_ERROR, DecodeError, JSONObject, Notification, Request
from ..protocol.peer import Exchange, Peer
from ..protocol.versions import DEFAULT_VERSION, MODERN_VERSIONS, accept_server_version
from . import era
from .config import ServerConfig
from .environment import redact
from .host import Host, ServerRequests, roots_from_paths
from .host.input_required import follow_input_required
from .refusals import malformed_answer_message, too_large_message
from .shutdown import forget_in_flight, track_in_flight
from .tracing import WireTracer
from .transport import ChannelEnd, ClientTransport
from .transport_registry import transport_kind

__all__ = ["Connection"]

CLIENT_NAME: Final = "toolrelay"
_CLIENT: Final = (CLIENT_NAME, __version__)
_PREVIEW: Final = 200
_MAX_PAGES: Final = 1000  # a server whose nextCursor never ends must not loop us forever


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
        self.on_restart: Callable[[str], Awaitable[None]] | None = None
        self.events = events
        self.transport: ClientTransport = transport_kind(config.transport, config.name).create(
            config, log_dir=log_dir
        )
        self._asked_version = protocol_version
        roots = roots_from_paths(config.roots or [Path.cwd()]) if config.offer_roots else None
        self.requests = ServerRequests(host or Host(), config.name, roots,
                                       notify=self._notice, postpone=self._postpone)
        """Answers the server's requests (roots, sampling, elicitation, tasks)."""
        self._link: _Link | None = None
        self._lock = asyncio.Lock()
        self._closed = False

    # -- state ----------------------------------------------------------------------------

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
        link = _Link(self, self.number)
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

    async def _ready_link(self) -> _Link:
        link = self._link
        if link is not None and link.ready and link.peer.closed is None:
            return link
        return await self._revive()

    async def _revive(self) -> _Link:
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

    async def _handshake(self, link: _Link) -> None:
        asked = era.handshake_version(self._asked_version)
        params = m.initialize_params(asked, CLIENT_NAME, __version__, self.requests.capabilities(asked))
        timeout = self.config.request_timeout
        try:  # client/era.py: the handshake, or (probing) the 2026-07-28 server/discover
            result = await era.negotiate(link.peer, self._asked_version, params, timeout, _CLIENT, self.name,
                                         self.requests.capabilities)
        except RequestTimeout:
            raise RequestTimeout(
                f"server {self.name} did not answer initialize within {timeout:g} s"
            ) from None
        except RpcError as exc:
            raise ProtocolError(
                f"server {self.name} refused initialize ({asked}): {exc.rpc_message}"
            ) from None
        if isinstance(result, era.Discovered):  # 2026-07-28: no initialize, no session
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

    async def renew_session(self, link: _Link) -> None:
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
        """Every tool the server offers (all pages), minus those the config filters out."""
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
                return tools
        raise ProtocolError(f"server {self.name} sent more than {_MAX_PAGES} pages of tools/list")

    def _usable_tools(self, raw: Any) -> list[dict[str, Any]]:
        if not isinstance(raw, list):
            raise ProtocolError(f"server {self.name} answered tools/list without a tools array")
        usable = []
        for tool in raw:
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                self._notice("warning", f"server {self.name} listed a tool without a name; ignored")
            elif self.config.allows(tool["name"]):
                usable.append(tool)
        return usable

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        call_id: str | None = None,
        timeout: float | None = None,
    ) -> Exchange:
        """Send one tools/call; a JSON-RPC error comes back inside the Exchange.

        Raises TransportError subclasses when no answer can come: ServerExited,
        RequestTimeout (after sending notifications/cancelled), MessageTooLarge,
        HttpStatusError. Cancelling the caller sends notifications/cancelled.
        """
        if not self.config.allows(name):
            raise UsageError(f"tool {name!r} of server {self.name} is excluded by its allow/deny list")
        link = self._link
        if link is None or not link.ready or link.peer.closed is not None:
            link = await self._revive()
        limit = self.config.call_timeout if timeout is None else timeout
        params = self._enveloped({"name": name, "arguments": arguments}) or {}
        peer = link.peer

        async def send(sent: JSONObject) -> Exchange:  # 2026-07-28: each retry has a new id
            return await peer.call(m.CALL_TOOL, sent, timeout=limit, tag=call_id)
        what = f"tools/call {name}"
        return await follow_input_required(send, params, self.requests, call_id=call_id, what=what)

    def _enveloped(self, params: JSONObject | None) -> JSONObject | None:
        """``params`` with the 2026-07-28 envelope (our capabilities) when that is the era."""
        version = self.protocol_version
        capabilities = self.requests.capabilities(version) if version is not None else None
        return era.enveloped(params, version, _CLIENT, capabilities)

    def set_roots(self, paths: list[str | Path]) -> None:
        """Offer other roots from now on; a live server is told (roots/list_changed)."""
        link = self._link
        changed = self.requests.set_roots(roots_from_paths(paths))
        if changed and self.alive and link is not None and self.protocol_version not in MODERN_VERSIONS:
            link.peer.notify(m.ROOTS_CHANGED)  # 2026-07-28 has none: roots are asked per call

    def _postpone(self, call_id: str, seconds: float) -> None:
        link = self._link
        if link is not None:
            link.peer.postpone(call_id, seconds)

    async def ping(self) -> None:
        """Check the server answers (request_timeout applies)."""
        link = await self._ready_link()
        version = self.protocol_version  # 2026-07-28 has no ping
        method, params = era.liveness_check(version, _CLIENT, self.requests.capabilities(version or ""))
        (await link.peer.call(method, params, timeout=self.config.request_timeout)).raise_for_error()

    async def request(self, method: str, params: JSONObject | None = None) -> JSONObject:
        """One request of the server's other features (resources, prompts, completion): its
        result, or ``RpcError`` for a JSON-RPC error (request_timeout applies)."""
        link = await self._ready_link()
        params = self._enveloped(params)
        return (await link.peer.call(method, params, timeout=self.config.request_timeout)).raise_for_error()

    # -- events ---------------------------------------------------------------------------

    def _emit_starting(self) -> None:
        if self.events.active:
            self.events.emit(ServerStarting(server=self.name, connection=self.number,
                                            transport=self.config.transport, target=self.config.target))

    def _emit_ready(self) -> None:
        if self.events.active:
            self.events.emit(ServerReady(
                server=self.name, connection=self.number, protocol_version=self.protocol_version or "",
                server_info=self.server_info, capabilities=self.capabilities,
            ))

    def _notice(self, level: str, text: str) -> None:
        if self.events.active:
            self.events.emit(Notice(level=level, text=text, server=self.name))


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class _Link:
    """One connection number: a peer over the server's transport, and the inbox it fills."""

    def __init__(self, owner: Connection, number: int) -> None:
        self.owner = owner
        self.config = owner.config
        self.number = number
        self.tracer = WireTracer(owner.events, owner.name, number)
        self.transport = owner.transport
        self.peer = Peer(self.transport.send, on_request=self._on_server_request,
                         on_notification=self._on_notification, tracer=self.tracer,
                         tag_request=self._call_of)
        self.ready = False
        self.closing = False
        self.end_reason: str | None = None
        """How this link ended ("exited (code 1)"), shown when the next one starts."""
        self._ended = False
        self._close_task: asyncio.Task[None] | None = None
        self._garbage_lines = 0

    async def connect(self) -> None:
        """Open the transport's channel (the handshake is the owner's)."""
        track_in_flight(self)
        await self.transport.open(self, connection=self.number)

    def cancel_in_flight(self, reason: str) -> None:
        """toolrelay is told to stop: every request still waiting is cancelled now, while
        the server can still read it (``shutdown.py`` stops the server after this)."""
        self.peer.cancel_all(reason, TransportError(f"server {self.owner.name}: request given up: {reason}"))

    # -- the inbox ------------------------------------------------------------------------

    def received(self, data: bytes | Oversized) -> None:
        """One framed message from the server."""
        if type(data) is bytes:
            try:
                message = jsonrpc.decode(data)
            except DecodeError as exc:
                self._undecodable(data, exc)
                return
            self.peer.receive(message)
        elif isinstance(data, Oversized):
            self._oversized(data)

    def awaiting(self, mcp_id: jsonrpc.RequestId) -> bool:
        return self.peer.pending_exchange(mcp_id) is not None

    def failed(self, mcp_id: jsonrpc.RequestId, error: ToolrelayError) -> None:
        self.peer.fail(mcp_id, error)

    def notice(self, text: str, *, level: str = "warning") -> None:
        self.owner._notice(level, text)

    def ended(self, end: ChannelEnd) -> None:
        """The channel is over: fail everything pending at once, say how it ended."""
        if self._ended:
            return
        self._ended = True
        self.peer.close(end.error)
        if self.end_reason is None:
            self.end_reason = end.reason
        owner = self.owner
        if owner.events.active:
            owner.events.emit(ServerExitedEvent(server=owner.name, connection=self.number,
                                                returncode=end.returncode, stderr_tail=end.stderr_tail,
                                                expected=self.closing))

    def emit(self, event: Event) -> None:
        if self.owner.events.active:
            self.owner.events.emit(event)

    async def session_forgotten(self) -> None:
        await self.owner.renew_session(self)

    # -- what the server sent -------------------------------------------------------------

    def _call_of(self, request: Request) -> str | None:
        """The model's call a server request belongs to: its task's, or the one tools/call
        pending (with several, it cannot be told)."""
        owner = self.owner.requests.call_of(request)
        if owner is not None:
            return owner
        tags = self.peer.pending_tags(m.CALL_TOOL)
        return tags[0] if len(tags) == 1 and isinstance(tags[0], str) else None

    def _on_server_request(self, request: Request) -> JSONObject | Awaitable[JSONObject]:
        if request.method == m.PING:
            return {}
        return self.owner.requests.answer(request, self._call_of(request))

    def _on_notification(self, notification: Notification) -> None:
        owner = self.owner
        if notification.method == m.TOOLS_CHANGED and owner.on_tools_changed is not None:
            try:
                owner.on_tools_changed(owner.name)
            except Exception as exc:  # the catalog's problem must not break this connection
                owner._notice("error", f"server {owner.name}: handling tools/list_changed failed: {exc}")

    def _undecodable(self, line: bytes, exc: DecodeError) -> None:
        if not line.strip():
            return
        if exc.id is not None and exc.code != PARSE_ERROR:
            self._malformed(line, exc, exc.id)
            return
        if exc.id is not None and self._unreadable_answer(line, exc, exc.id):
            return
        self._garbage_lines += 1
        preview = line[:_PREVIEW].decode("utf-8", "replace")
        self._invalid(f"not a JSON-RPC message ({exc.message}); skipped", preview)
        self._log_note(f"skipped a line on stdout that is not JSON-RPC: {preview!r}")  # stdio only: a log
        if self._garbage_lines == 1:  # in the words of its transport: "printed ... on stdout"
            said = transport_kind(self.config.transport, self.owner.name).not_json_rpc
            self.owner._notice("warning", f"server {self.owner.name} {said} (skipped): {preview!r}")

    def _unreadable_answer(self, line: bytes, exc: DecodeError, mcp_id: jsonrpc.RequestId) -> bool:
        """Not JSON we read (nested too deep), but its id is readable: the request it answers
        fails at once instead of waiting out its timeout. False when nothing waits for it."""
        exchange = self.peer.pending_exchange(mcp_id)
        if exchange is None:
            return False
        self._invalid(exc.message, line[:_PREVIEW].decode("utf-8", "replace"))
        reason = malformed_answer_message(self.owner.name, exchange.method, mcp_id, exc.message)
        self.peer.fail(mcp_id, ProtocolError(reason))
        return True

    def _malformed(self, line: bytes, exc: DecodeError, mcp_id: jsonrpc.RequestId) -> None:
        """Valid JSON, invalid message, readable id: answer it, or fail our request (its answer
        recorded as its response, as received: what the protocol error rests on)."""
        try:
            raw = json_depth.loads(line)
        except ValueError:
            raw = None
        if isinstance(raw, dict) and "method" in raw:
            self.peer.answer_error(mcp_id, exc.code, exc.message)
            return
        exchange = self.peer.pending_exchange(mcp_id)
        if exchange is None or not isinstance(raw, dict):
            self._invalid(exc.message, line[:_PREVIEW].decode("utf-8", "replace"))
            return
        self.tracer.malformed_answer(raw, mcp_id, time.monotonic() - exchange.started)
        reason = malformed_answer_message(self.owner.name, exchange.method, mcp_id, exc.message)
        self.peer.fail(mcp_id, ProtocolError(reason))

    def _oversized(self, marker: Oversized) -> None:
        mcp_id = find_id(marker)
        exchange = self.peer.pending_exchange(mcp_id) if mcp_id is not None else None
        limit = self.config.max_message_bytes
        if exchange is not None:
            reason = too_large_message(exchange.method, mcp_id, marker.size, limit)
            self.peer.fail(exchange.mcp_id, MessageTooLarge(reason))
        else:
            reason = too_large_message(None, None, marker.size, limit)
        text = f"server {self.owner.name}: {reason}; refused (the connection stays open)"
        self._invalid(reason, marker.head[:_PREVIEW].decode("utf-8", "replace"))
        self.owner._notice("warning", text)
        self._log_note(text)

    def _invalid(self, reason: str, preview: str) -> None:
        events = self.owner.events
        if events.active:
            events.emit(McpInvalid(server=self.owner.name, connection=self.tracer.connection,
                                   reason=reason, preview=preview))

    def _log_note(self, text: str) -> None:
        """A line of toolrelay's own in the server's log, when it has one."""
        log = self.transport.log
        if log is not None:
            log.note(text)

    # -- end ------------------------------------------------------------------------------

    async def close(self) -> None:
        if self._close_task is None:
            self._close_task = asyncio.ensure_future(self._close())
        await asyncio.shield(self._close_task)

    async def _close(self) -> None:
        forget_in_flight(self)
        self.closing = True
        closed = TransportError(f"connection to server {self.owner.name} was closed")
        self.peer.close(closed)
        await self.transport.close()
        self.ended(ChannelEnd(error=closed, reason="was closed"))  # unless the transport told its end
