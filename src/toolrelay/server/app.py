"""The MCP server side of a session, independent of the transport.

``ServerSession`` answers the lifecycle (initialize, ping), ``tools/list`` and
``tools/call`` for one connected client (and what else the service's method table offers:
resources, prompts, completion, ``features.py``), asks the client for its roots when it offers
them and the service reads them (``uses_client_roots``), and hands tool calls to a
``ToolService``. The stdio and Streamable HTTP transports create one per session and
feed it bytes; everything malformed is answered with a JSON-RPC error and never ends
the session.

Given a ``ModernServer`` (stdio), a session serves both eras: the client's first request
decides, once, as in the official SDK. One carrying the 2026-07-28 envelope (and not
``initialize``) makes the connection modern, and every request is then answered by the
``ModernServer`` (``initialize`` gets -32022 naming the modern revisions); anything else
makes it a handshake-era session, which refuses enveloped requests (-32600).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final, Literal, Protocol

from ..errors import RpcError, ToolrelayError, TransportError, UnknownTool
from ..protocol import jsonrpc, request_envelope
from ..protocol import mcp as m
from ..protocol.framing import Oversized, find_id
from ..protocol.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    DecodeError,
    JSONObject,
    Notification,
    Request,
    RequestId,
)
from ..protocol.listen import LISTEN
from ..protocol.peer import Peer, Tracer
from ..protocol.versions import MODERN_VERSIONS, choose_server_version
from .features import feature_capabilities, feature_methods
from .listen_hub import ListenHub
from .request_stream import LOG_LEVELS, RequestStream

__all__ = ["CallContext", "ModernHandler", "ServerSession", "ToolService", "UnknownTool"]

log = logging.getLogger("toolrelay.server")

ROOTS_TIMEOUT = 10.0  # seconds to wait for the client's roots/list answer
SET_LEVEL: Final = "logging/setLevel"
LEGACY: Final = "legacy"
MODERN: Final = "modern"
TASKS_SINCE: Final = "2025-11-25"


@dataclass(slots=True)
class CallContext:
    """What a tool call may know about its session."""

    client_roots: list[str] | None
    """file:// URIs the client declared, or None when it declared no roots capability."""
    roots_error: str | None = None
    """Why the client's roots could not be obtained, if they could not."""
    request: Request | None = None
    """The ``tools/call`` request as received (its id, its ``params._meta``: a wrapping
    service reads the trace context there, ``otel/server_spans.py``)."""
    protocol_version: str | None = None
    """The revision the call is served in."""
    peer: Peer | None = None
    """The session's peer, for the server's own messages during the call (progress, log
    messages, elicitation: ``functions/context.py``); None where there is no session."""
    session: ServerSession | None = None
    """The session itself (what its client declared, the log level it set); None where
    there is none (2026-07-28: each request carries its client's capabilities)."""
    stream: RequestStream | None = None
    """A 2026-07-28 request's own stream: its progress and log messages go there, before
    its answer (``request_stream.py``); None in the handshake era (the session's peer)."""


class ToolService(Protocol):
    """What a server offers: tool declarations and their execution."""

    name: str
    version: str
    instructions: str | None

    def tools(self) -> list[JSONObject]: ...

    def call(
        self, name: str, arguments: JSONObject, context: CallContext
    ) -> JSONObject | Awaitable[JSONObject]: ...


class ModernHandler(Protocol):
    """What a session needs of the 2026-07-28 side (``modern.ModernServer``, which builds
    on this module's ``ToolService``): the answer to one enveloped request."""

    def handle(self, request: Request, header: Callable[[str], str | None] | None = None,
               stream: RequestStream | None = None) -> JSONObject | Awaitable[JSONObject]: ...


@dataclass
class _RootsState:
    supported: bool = False
    stale: bool = True
    uris: list[str] | None = None
    error: str | None = None
    fetch: asyncio.Task[None] | None = None  # one roots/list in flight, shared by all calls


class ServerSession:
    """One client's session: lifecycle, dispatch, roots; bytes in, messages out."""

    def __init__(
        self,
        service: ToolService,
        send: Callable[[JSONObject], None],
        *,
        tracer: Tracer | None = None,
        modern: ModernHandler | None = None,
    ) -> None:
        self.service = service
        self.modern = modern
        self.request_envelope: Literal["legacy", "modern"] | None = None if modern is not None else LEGACY
        self.peer = Peer(
            send, on_request=self._on_request, on_notification=self._on_notification, tracer=tracer
        )
        self.initialized = False
        self.protocol_version: str | None = None
        self.client_info: JSONObject = {}
        self.client_capabilities: JSONObject = {}
        """What the client declared in ``initialize`` (its sampling, elicitation, roots)."""
        self.log_level: str | None = None
        """The level the client set with ``logging/setLevel`` (a service that relays log
        messages declares ``logging``: ``relays_logging``); None: not set."""
        self._roots = _RootsState()
        self._features = feature_methods(service)
        """The service's methods besides tools (``features.py``)."""

    # -- bytes in -------------------------------------------------------------------

    def receive_line(self, line: bytes | Oversized) -> None:
        """Handle one framed message (or an oversized one) from the client."""
        if isinstance(line, Oversized):
            self.peer.answer_error(
                find_id(line),
                INVALID_REQUEST,
                f"Invalid Request: message of {line.size} bytes exceeds the size limit",
            )
            return
        if not line.strip():
            return
        try:
            message = jsonrpc.decode(line)
        except DecodeError as exc:
            self.peer.answer_error(exc.id, exc.code, exc.message)
            return
        self.peer.receive(message)

    # -- requests -------------------------------------------------------------------

    def _on_request(self, request: Request) -> JSONObject | Awaitable[JSONObject]:
        method = request.method
        enveloped = method != m.INITIALIZE and request_envelope.has_envelope(request.params)
        if self.request_envelope is None:  # the first request decides the connection's era
            self.request_envelope = MODERN if enveloped else LEGACY
        if self.request_envelope == MODERN:
            return self._on_modern_request(request)
        if enveloped and self.modern is not None:
            raise RpcError(INVALID_REQUEST, "Invalid Request: this connection speaks the handshake era "
                                            "(it began with a request without the 2026-07-28 envelope)")
        if method == m.INITIALIZE:
            return self._initialize(request.params)
        if method == m.PING:
            return {}
        if not self.initialized and self.protocol_version is None:
            raise RpcError(
                INVALID_REQUEST, "Invalid Request: the session is not initialized; send initialize first"
            )
        if method == m.LIST_TOOLS:
            per_session = getattr(self.service, "tools_for", None)  # a proxy: tasks pass through per host
            return {"tools": per_session(self) if callable(per_session) else self.service.tools()}
        if method == m.CALL_TOOL:
            return self._call_tool(request)
        if method == SET_LEVEL and self._relays_logging:
            return self._set_level(request.params)
        handler = self._features.get(method)
        if handler is not None:
            return handler(request.params, self._context(request))
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")

    @property
    def _uses_roots(self) -> bool:
        return bool(getattr(self.service, "uses_client_roots", False))

    @property
    def _relays_logging(self) -> bool:
        return bool(getattr(self.service, "relays_logging", False))

    def _set_level(self, params: JSONObject | None) -> JSONObject:
        level = (params or {}).get("level")
        if level not in LOG_LEVELS:
            raise RpcError(INVALID_PARAMS, f'Invalid params: "level" must be one of {", ".join(LOG_LEVELS)}')
        self.log_level = str(level)
        return {}

    def _on_modern_request(self, request: Request) -> JSONObject | Awaitable[JSONObject]:
        assert self.modern is not None
        hub = getattr(self.modern, "hub", None)
        if request.method == LISTEN and hub is not None:
            request_envelope.read_envelope(LISTEN, request.params)
            return self._listen(hub, request)
        if request.method == m.INITIALIZE:
            asked = (request.params or {}).get("protocolVersion")
            raise request_envelope.unsupported_version(
                asked if isinstance(asked, str) else "", MODERN_VERSIONS,
                "Unsupported protocol version: this connection speaks 2026-07-28 "
                "(it began with an enveloped request); initialize is not part of it",
            )
        stream = RequestStream.of(request, self._notify_during(request))
        return self.modern.handle(request, stream=stream)

    def _notify_during(self, request: Request) -> Callable[[JSONObject], None]:
        """Sends a notification of ``request``'s on stdio: before its response, as every
        message the connection sends is written in order."""
        def send(message: JSONObject) -> None:
            self.peer.notify(str(message["method"]), message.get("params"), tag=request.id)
        return send

    async def _listen(self, hub: ListenHub, request: Request) -> JSONObject:
        """A 2026-07-28 listen request on stdio: never answered while it serves; its
        notifications go out tagged with its id until the client cancels it."""
        def send(message: JSONObject) -> None:
            self.peer.notify(str(message["method"]), message.get("params"))
        number = hub.open(request, send)
        try:
            await asyncio.get_running_loop().create_future()  # until cancelled (the client's cancel)
        finally:
            hub.close(number)
        return {}  # never reached: the future is never set

    def _initialize(self, params: JSONObject | None) -> JSONObject:
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, 'Invalid params: initialize needs "protocolVersion"')
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise RpcError(INVALID_PARAMS, 'Invalid params: "protocolVersion" must be a string')
        capabilities = params.get("capabilities")
        if capabilities is not None and not isinstance(capabilities, dict):
            raise RpcError(INVALID_PARAMS, 'Invalid params: "capabilities" must be an object')
        info = params.get("clientInfo")
        self.client_info = info if isinstance(info, dict) else {}
        self.client_capabilities = capabilities or {}
        self.protocol_version = choose_server_version(requested)
        # asked only by a service that reads them (the file service): for any other, as the
        # proxy, a roots/list before the first call is a round trip to the host for nothing
        declared = isinstance((capabilities or {}).get("roots"), dict)
        self._roots = _RootsState(supported=declared and self._uses_roots)
        result: JSONObject = {
            "protocolVersion": self.protocol_version,
            "capabilities": {
                "tools": {"listChanged": bool(getattr(self.service, "tools_change", False))},
                **feature_capabilities(self.service),
            },
            "serverInfo": {"name": self.service.name, "version": self.service.version},
        }
        if self.protocol_version < TASKS_SINCE:  # a service's task support is of 2025-11-25 on
            result["capabilities"].pop("tasks", None)
        if self._relays_logging:
            result["capabilities"]["logging"] = {}
        if self.service.instructions:
            result["instructions"] = self.service.instructions
        return result

    def _call_tool(self, request: Request) -> JSONObject | Awaitable[JSONObject]:
        name = m.require_str(request.params, "name")
        arguments = m.require_object(request.params, "arguments", optional=True)
        if self._roots.supported and self._roots.stale:
            return self._call_after_roots(name, arguments, request)
        return self._dispatch(name, arguments, request)

    def _dispatch(
        self, name: str, arguments: JSONObject, request: Request
    ) -> JSONObject | Awaitable[JSONObject]:
        context = self._context(request)
        try:
            return self.service.call(name, arguments, context)
        except UnknownTool:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}") from None

    def _context(self, request: Request) -> CallContext:
        return CallContext(self._roots.uris, self._roots.error, request, self.protocol_version, self.peer,
                           self)

    async def _call_after_roots(self, name: str, arguments: JSONObject, request: Request) -> JSONObject:
        state = self._roots
        if state.fetch is None or state.fetch.done():
            state.fetch = asyncio.ensure_future(self._refresh_roots(request.id))
        await asyncio.shield(state.fetch)
        outcome = self._dispatch(name, arguments, request)
        if isinstance(outcome, dict):
            return outcome
        return await outcome

    async def _refresh_roots(self, during: RequestId) -> None:
        """Ask the client for its roots, for the call ``during`` (the request's tag: over
        HTTP it goes on that request's stream, ``http_session``)."""
        state = self._roots
        try:
            exchange = await self.peer.call(m.LIST_ROOTS, timeout=ROOTS_TIMEOUT, tag=during)
            result = exchange.raise_for_error()
        except (RpcError, TransportError) as exc:
            state.uris, state.error = [], f"the client did not answer roots/list: {exc}"
            state.stale = False  # asked once; asked again on roots/list_changed
            return
        roots = result.get("roots")
        if not isinstance(roots, list):
            state.uris, state.error = [], "the client's roots/list answer has no roots array"
            state.stale = False
            return
        state.uris = [r["uri"] for r in roots if isinstance(r, dict) and isinstance(r.get("uri"), str)]
        state.error = None
        state.stale = False

    # -- notifications --------------------------------------------------------------

    def _on_notification(self, note: Notification) -> None:
        if note.method == m.INITIALIZED:
            self.initialized = True
        elif note.method == m.ROOTS_CHANGED:
            self._roots.stale = True

    def close(self, reason: ToolrelayError) -> None:
        self.peer.close(reason)


def stderr_logging(level: int = logging.INFO) -> None:
    """Log to stderr (stdout belongs to the protocol on stdio)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("toolrelay files: %(message)s"))
    root = logging.getLogger("toolrelay")
    root.handlers[:] = [handler]
    root.setLevel(level)
