"""A ToolService answering MCP 2026-07-28 requests: one request in, one result out.

No handshake and no session: each request carries its revision and the client's
capabilities (``protocol/request_envelope.py``), and is answered from that alone. The methods are
``server/discover``, ``tools/list`` and ``tools/call``, and those of the service's method
table (resources, prompts, completion: ``features.py``); the handshake-era methods
(``initialize``, ``ping``, ...) are unknown here. ``subscriptions/listen`` is served by the
transport for a service with a ``listen_hub`` (``listen_hub.py``: the proxy's); else it is
refused at once (-32601, saying why): a ToolService's tools never change, so it declares
no list changes and has nothing to send on a listen stream (the revision lets
a server without those capabilities leave the method out; a stream held open only to
acknowledge an empty subset would cost a connection per client for nothing).

A request's progress and log messages (what its ``_meta`` asks for) go on its own
stream before its answer: the transport gives each request a ``RequestStream``
(``request_stream.py``), which a service finds in the call's context.

A server may not send the client requests in this era, so a tool call whose client
declares roots is first answered ``input_required`` with a ``roots/list`` input request;
the client retries the call with the roots in ``inputResponses`` (the revision's
multi-round-trip requests). That costs a round trip per call, so only a service that
uses the client's roots asks (one whose ``uses_client_roots`` is true, as the file
service's); others run the call at once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Final

from ..errors import RpcError, UnknownTool
from ..protocol import mcp as m
from ..protocol import request_envelope
from ..protocol.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, JSONObject, Request
from ..protocol.listen import LISTEN
from ..protocol.tasks_ext import RESULT_TASK as _RESULT_TASK
from .app import CallContext, ToolService
from .features import feature_capabilities, feature_methods
from .listen_hub import ListenHub
from .request_stream import RequestStream

__all__ = ["ROOTS_INPUT", "ModernServer"]

_NO_SUBSCRIPTIONS: Final = (f"Method not found: {LISTEN} (this server offers no subscriptions: "
                            "its tools never change, and it has no resources)")
_CACHEABLE: Final = frozenset({m.LIST_RESOURCES, m.LIST_RESOURCE_TEMPLATES, m.LIST_PROMPTS, m.READ_RESOURCE})
"""Results that carry the revision's cache directives (as ``tools/list``'s)."""
ROOTS_INPUT: Final = "roots"
"""The key of the ``roots/list`` input request in an ``input_required`` result."""


class ModernServer:
    """Answers modern requests for ``service``; stateless, so one serves every client."""

    def __init__(self, service: ToolService) -> None:
        self.service = service
        self.asks_roots = bool(getattr(service, "uses_client_roots", False))
        self.features = feature_methods(service, modern=True)
        """The service's methods besides tools (``features.py``)."""
        self.hub: ListenHub | None = getattr(service, "listen_hub", None)
        """Where the service's list changes are told to listen requests (None: none are served)."""

    @property
    def server_info(self) -> JSONObject:
        return {"name": self.service.name, "version": self.service.version}

    def capabilities(self) -> JSONObject:
        hub = self.hub
        told = hub.declares if hub is not None else None
        return {"tools": {"listChanged": hub is not None and hub.declares("tools")},
                **feature_capabilities(self.service, modern=True, told=told,
                                       follows=hub is not None and hub.follows_resources)}

    def handle(
        self, request: Request, header: Callable[[str], str | None] | None = None,
        stream: RequestStream | None = None,
    ) -> JSONObject | Awaitable[JSONObject]:
        """The result of ``request`` (awaitable for a tool call that runs), or ``RpcError``.

        ``header`` reads the HTTP request's headers, which must repeat the body (-32020);
        ``stream`` carries the request's progress and log messages (``request_stream.py``)."""
        envelope = request_envelope.read_envelope(request.method, request.params, header=header)
        method = request.method
        if method == request_envelope.DISCOVER:
            body = request_envelope.discover_result(self.capabilities(), self.service.instructions)
            return request_envelope.complete(body, self.server_info, cacheable=True)
        if method == m.LIST_TOOLS:
            listed = {"tools": self.service.tools()}
            return request_envelope.complete(listed, self.server_info, cacheable=True)
        if method == m.CALL_TOOL:
            return self._call_tool(request, envelope, stream)
        if method == LISTEN:  # served by the transport when there is a hub (it holds the stream)
            raise RpcError(METHOD_NOT_FOUND, _NO_SUBSCRIPTIONS)
        handler = self.features.get(method)
        if handler is not None:
            context = CallContext(None, request=request, protocol_version=envelope.protocol_version,
                                  stream=stream)
            return self._answered(handler(request.params, context), cacheable=method in _CACHEABLE)
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")

    def _call_tool(
        self, request: Request, envelope: request_envelope.Envelope, stream: RequestStream | None,
    ) -> JSONObject | Awaitable[JSONObject]:
        params = request.params
        name = m.require_str(params, "name")
        arguments = m.require_object(params, "arguments", optional=True)
        context = CallContext(None)
        if self.asks_roots and envelope.declares("roots"):
            if name not in {tool.get("name") for tool in self.service.tools()}:
                raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")  # before any round trip
            answered = m.require_object(params, "inputResponses", optional=True).get(ROOTS_INPUT)
            if answered is None:
                return self._ask_for_roots()
            context = _roots_context(answered)
        context = replace(context, request=request, protocol_version=envelope.protocol_version, stream=stream)
        try:
            outcome = self.service.call(name, arguments, context)
        except UnknownTool:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}") from None
        if isinstance(outcome, dict):
            return self._finished(outcome)
        return self._completed(outcome)

    async def _completed(self, outcome: Awaitable[JSONObject], cacheable: bool = False) -> JSONObject:
        return self._finished(await outcome, cacheable=cacheable)

    def _finished(self, outcome: JSONObject, *, cacheable: bool = False) -> JSONObject:
        """A complete result; an ``input_required`` one of the service's own (a proxy passing
        on what its upstream asks), or a task of the tasks extension (a proxy's task,
        ``proxy/task_bridge.py``), keeps its type, with the server's identity added."""
        if outcome.get(request_envelope.RESULT_TYPE) in (request_envelope.INPUT_REQUIRED, _RESULT_TASK):
            meta = outcome.get("_meta")
            own = meta if isinstance(meta, dict) else {}
            return {**outcome, "_meta": {**own, request_envelope.SERVER_INFO_KEY: self.server_info}}
        return request_envelope.complete(outcome, self.server_info, cacheable=cacheable)

    def _answered(self, outcome: JSONObject | Awaitable[JSONObject], *, cacheable: bool
                  ) -> JSONObject | Awaitable[JSONObject]:
        """A feature handler's outcome (``features.py``), finished as a tool call's is."""
        if isinstance(outcome, dict):
            return self._finished(outcome, cacheable=cacheable)
        return self._completed(outcome, cacheable)

    def _ask_for_roots(self) -> JSONObject:
        return {
            request_envelope.RESULT_TYPE: request_envelope.INPUT_REQUIRED,
            "inputRequests": {ROOTS_INPUT: {"method": m.LIST_ROOTS, "params": {}}},
            "_meta": {request_envelope.SERVER_INFO_KEY: self.server_info},
        }


def _roots_context(answered: object) -> CallContext:
    """The call's context from the client's ``roots/list`` result (as the legacy session
    builds it from the client's answer to its request)."""
    roots = answered.get("roots") if isinstance(answered, dict) else None
    if not isinstance(roots, list):
        return CallContext([], "the client's roots/list answer has no roots array")
    uris = [r["uri"] for r in roots if isinstance(r, dict) and isinstance(r.get("uri"), str)]
    return CallContext(uris)
