"""One host ``tools/call``, from the alias the host named to the upstream answer passed on.

In order: the alias is read back to its (server, tool) pair (a withheld tool, one the
pins or the policy hold back, is a tool error naming why; a name never offered is the
JSON-RPC error the spec gives an unknown tool); the call hooks (the ``--policy`` rules)
may refuse it, a tool error naming the rule; else it goes upstream as the tool's own
name with the host's arguments and ``_meta`` unchanged. The upstream result comes back
as ``passed_on`` gives it (its era's envelope off: the host's era puts its own on); an
upstream JSON-RPC error is the host's JSON-RPC error; an upstream that crashed or timed
out is a tool error (the next call restarts it). Each step is recorded (``records.py``),
both JSON-RPC ids paired, so ``verify`` can hold the proxy to what it passed on.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from ..errors import RpcError, ToolrelayError
from ..events import EventStream
from ..protocol import jsonrpc
from ..protocol.exchange import Exchange
from ..protocol.jsonrpc import INVALID_PARAMS, JSONObject, Request
from ..protocol.passthrough import ENVELOPE_PREFIX, passed_on
from ..redaction import redact
from ..relay.catalog import Catalog
from ..relay.stages.context import CallContext, CallHook
from ..relay.stages.parse import FunctionCall
from ..relay.stages.route import Route
from ..server.app import ServerSession
from ..server.request_stream import RequestStream
from .host_calls import HostCall, HostCalls
from .records import HOST_CALL_ID_KEY, IN, OUT, ProxyHostMessage, ProxyRoute

__all__ = ["Forwarder", "forwarded_meta", "host_call_id_of", "tool_error"]

_NOT_FORWARDED: Final = frozenset({"progressToken"})
"""``_meta`` keys of the host's that are the host leg's own (the proxy sets its own upstream)."""
NO_CONSENT: Final = "the proxy cannot ask for consent; the host asks its user before it calls"


def tool_error(text: str) -> JSONObject:
    """A tool result saying the call did not run (``isError``: the host's model reads it)."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


async def _no_consent(route: Route, arguments: dict[str, Any]) -> str | None:
    return NO_CONSENT


class Forwarder:
    """Forwards host tool calls to the catalog's servers, recording both legs."""

    def __init__(self, catalog: Catalog, events: EventStream, hooks: Sequence[CallHook] = (),
                 calls: HostCalls | None = None, *, keep_names: bool = False) -> None:
        """``hooks``: call hooks (a ``Policy``) asked before each call is sent; ``calls``:
        where the calls in flight are kept (what upstreams send during them reaches their host);
        ``keep_names``: hosts name each tool by its own name (one server, ``names.py``)."""
        self.catalog = catalog
        self.keep_names = keep_names
        self.events = events
        self.hooks = tuple(hooks)
        self.calls = calls if calls is not None else HostCalls(events)
        self._keys = itertools.count(1)

    def new_key(self) -> str:
        """The proxy's own id of one more host request (unique in the run)."""
        return f"h{next(self._keys)}"

    async def forward(self, alias: str, arguments: JSONObject, request: Request,
                      protocol_version: str | None, *, session: ServerSession | None = None,
                      capabilities: JSONObject | None = None, key: str | None = None,
                      record_host: bool = True, stream: RequestStream | None = None) -> JSONObject:
        """The host's answer to ``request`` (a ``tools/call`` of ``alias``), or RpcError.
        ``session``: the host's (2025 hosts); ``capabilities``: what the host declared;
        ``record_host``: False when the caller records the host leg (``rounds.py``); ``stream``:
        a 2026-07-28 request's own, for what the upstream reports during the call."""
        key = key or self.new_key()
        host = self.calls.number_of(session)
        exchange = stream.exchange if stream is not None else None  # 2026-07-28 HTTP: its POST's number
        if record_host:
            self.host_in(key, request, protocol_version, host, exchange)
        self.calls.add(HostCall(key=key, request=request, protocol_version=protocol_version, session=session,
                                capabilities=capabilities or {}, host=host, stream=stream))
        try:
            result = await self._answer(key, alias, arguments, request)
        except RpcError as exc:
            if record_host:
                said = jsonrpc.error_response(request.id, exc.code, exc.rpc_message, exc.data)
                self.host_out(key, request, said, protocol_version, host, exchange)
            raise
        finally:
            self.calls.remove(key)
        if record_host:
            answered = jsonrpc.response(request.id, result)
            self.host_out(key, request, answered, protocol_version, host, exchange)
        return result

    def catalog_alias(self, name: str) -> str:
        """The catalog's alias of the tool a host names."""
        if not self.keep_names:
            return name
        return next((route.alias for route in self.catalog.routes if route.tool == name), name)

    def host_name(self, route: Route) -> str:
        """The name hosts call ``route``'s tool by."""
        return route.tool if self.keep_names else route.alias

    async def _answer(self, key: str, alias: str, arguments: JSONObject, request: Request) -> JSONObject:
        route = self.catalog.route(self.catalog_alias(alias))
        if route is None:
            withheld = self.catalog.withheld_reason(self.catalog_alias(alias))
            if withheld is not None:
                self.route(key, request, alias, "withheld", reason=withheld)
                return tool_error(f"toolrelay proxy: {withheld}")
            self.route(key, request, alias, "unknown", reason="no tool of that name is offered")
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {alias}")
        refused = await self.refused(key, request, alias, route, arguments)
        if refused is not None:
            return refused
        return await self._upstream(key, route, arguments, request)

    async def refused(self, key: str, request: Request, alias: str, route: Route, arguments: JSONObject
                      ) -> JSONObject | None:
        """The tool error the host gets when the call hooks (the policy) refuse this call,
        recorded as a ``denied`` route; None: it may run."""
        refusal = await self.refusal(key, route, arguments)
        if refusal is None:
            return None
        self.route(key, request, alias, "denied", route=route, reason=refusal)
        return tool_error(f"toolrelay proxy: {route.server}/{route.tool} was not called: {refusal}")

    async def refusal(self, key: str, route: Route, arguments: JSONObject) -> str | None:
        """Why the call hooks (the policy) refuse this call; None: they let it run."""
        if not self.hooks:
            return None
        call = FunctionCall(call_id=key, name=route.alias, arguments_text=json.dumps(arguments))
        context = CallContext(approve=_no_consent, server=route.server, tool=route.tool)
        for hook in self.hooks:
            before = getattr(hook, "before_call", None)
            said = await before(call, context) if before is not None else None
            if said is not None:
                return str(said)
        return None

    async def _upstream(self, key: str, route: Route, arguments: JSONObject, request: Request) -> JSONObject:
        connection = self.catalog.connections[route.server]
        call = self.calls.get(key)
        if call is not None:
            call.server = route.server
        sent: list[tuple[Exchange, int]] = []

        def on_sent(exchange: Exchange) -> None:
            sent.append((exchange, connection.number))

        try:
            exchange = await connection.call_tool(route.tool, arguments, call_id=key,
                                                  meta=forwarded_meta(request.params), on_sent=on_sent)
        except asyncio.CancelledError:  # the host cancelled, or went away: cancelled upstream too
            why = (call.cancel_reason if call else None) or "the host cancelled the call or disconnected"
            self.route(key, request, self.host_name(route), "cancelled", route=route, sent=sent, reason=why)
            raise
        except ToolrelayError as exc:
            said = redact(str(exc), self.catalog.secrets)  # a server's stderr may hold its token
            self.route(key, request, self.host_name(route), "failed", route=route, sent=sent, reason=said)
            return tool_error(f"toolrelay proxy: server {route.server} did not answer: {said}")
        self.route(key, request, self.host_name(route), "forwarded", route=route,
                    sent=[(exchange, sent[-1][1] if sent else connection.number)])
        if exchange.error is not None:
            error = exchange.error
            raise RpcError(error.code, error.message, error.data)
        assert exchange.result is not None
        return passed_on(exchange.result)

    # -- records (the feature requests' too: ``features.py``) ------------------------------

    async def recorded(self, request: Request, version: str | None, host: int | None,
                       answer: Callable[[str], Awaitable[JSONObject]], exchange: int | None = None
                       ) -> JSONObject:
        """``answer(key)`` to the host's ``request``, its host leg recorded under a new key:
        the request in, then the result or the JSON-RPC error it raised out."""
        key = self.new_key()
        self.host_in(key, request, version, host, exchange)
        try:
            result = await answer(key)
        except RpcError as exc:
            said = jsonrpc.error_response(request.id, exc.code, exc.rpc_message, exc.data)
            self.host_out(key, request, said, version, host, exchange)
            raise
        self.host_out(key, request, jsonrpc.response(request.id, result), version, host, exchange)
        return result

    def host_in(self, key: str, request: Request, version: str | None, host: int | None,
                exchange: int | None = None) -> None:
        if self.events.active:
            self.events.emit(ProxyHostMessage(
                direction=IN, key=key, host_id=request.id, method=request.method, message=request.raw,
                protocol_version=version, host_call_id=host_call_id_of(request.params), host=host,
                exchange=exchange))

    def host_out(self, key: str, request: Request, message: JSONObject, version: str | None,
                  host: int | None, exchange: int | None = None) -> None:
        if self.events.active:
            self.events.emit(ProxyHostMessage(
                direction=OUT, key=key, host_id=request.id, method=request.method, message=message,
                protocol_version=version, host=host, exchange=exchange))

    def route(self, key: str, request: Request, alias: str, decision: str, *, route: Route | None = None,
              sent: Sequence[tuple[Exchange, int]] = (), reason: str = "") -> None:
        target = (route.server, route.tool) if route is not None else None
        self.route_to(key, request, alias, decision, target=target, sent=sent, reason=reason)

    def route_to(self, key: str, request: Request, alias: str, decision: str, *,
                 target: tuple[str, str] | None = None, sent: Sequence[tuple[Exchange, int]] = (),
                 reason: str = "") -> None:
        """Record how the host request ``key`` was routed: to ``target`` (server, the
        upstream's tool, prompt or URI), by ``sent``'s last upstream request."""
        if not self.events.active:
            return
        exchange, number = sent[-1] if sent else (None, None)
        self.events.emit(ProxyRoute(
            key=key, host_id=request.id, alias=alias, decision=decision, reason=reason,
            server=target[0] if target else None, tool=target[1] if target else None,
            connection=number, mcp_id=exchange.mcp_id if exchange is not None else None,
        ))


def forwarded_meta(params: JSONObject | None) -> dict[str, Any] | None:
    meta = (params or {}).get("_meta")
    if not isinstance(meta, dict):
        return None
    kept = {k: v for k, v in meta.items() if k not in _NOT_FORWARDED and not k.startswith(ENVELOPE_PREFIX)}
    return kept or None


def host_call_id_of(params: JSONObject | None) -> str | None:
    meta = (params or {}).get("_meta")
    found = meta.get(HOST_CALL_ID_KEY) if isinstance(meta, dict) else None
    return found if isinstance(found, str) else None
