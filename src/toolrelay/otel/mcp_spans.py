"""The spans of a run's MCP traffic besides its calls, and of its OAuth sign-ins, read from
the wire events (``McpMessage``, ``AuthExchange``, ``AuthOutcome``):

- each request toolrelay sends that is not a call's own (``initialize``,
  ``server/discover``, ``tools/list``, ``resources/read``, ``prompts/get``,
  ``subscriptions/listen``...) a CLIENT span ``{method}`` (``prompts/get {prompt}``), from
  the request to its answer, ERROR with the JSON-RPC code for an error answer -- except the
  fallback ``initialize`` sent beside a slow era probe, which a 2026-07-28 server refuses as
  expected: ``toolrelay.fallback`` says so (as ``--wire`` and ``view`` do), and no error;
- each request a server sends toolrelay (``sampling/createMessage``,
  ``elicitation/create``, ``roots/list``...) a SERVER span ``{method}``: toolrelay serves
  it; under the ``execute_tool`` span of the call it came during (the event's
  ``belongs_to`` names toolrelay's request, whose ``params._meta.traceparent`` names the
  call's span), else under the run;
- each OAuth sign-in or refresh an ``oauth {server}`` span, its HTTP exchanges events on it
  (the step, the method, the status, the host: never a URL's path or query, a code, a
  token or a secret), ERROR when it did not sign in.

A call's own request is not a span of its own here: its ``execute_tool`` span is it. That is
every ``tools/call``, and any request whose ``params._meta.traceparent`` names an open
call's span (the ``resources/read`` of an ``--expose-resources`` reader's call).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from ..client.wire_events import EraNotes
from ..events import (
    MCP_REPLY,
    MCP_REQUEST,
    MCP_RESPONSE,
    MCP_SERVER_REQUEST,
    AuthExchange,
    AuthOutcome,
    McpMessage,
)
from ..protocol.request_envelope import DISCOVER
from . import conventions as c
from .metrics import RunMetrics

__all__ = ["WireSpans"]

_TOOLS_CALL: Final = "tools/call"
_SIGNED_IN: Final = frozenset({"signed_in", "refreshed", "stored"})
_TRACEPARENT_LENGTH: Final = 55
_ERA_METHODS: Final = frozenset({DISCOVER, "initialize"})
"""What ``EraNotes`` reads to tell a fallback ``initialize`` (sent beside a slow era probe)."""
_FALLBACK: Final = "toolrelay.fallback"
_Key = tuple[str, int, Any]
"""(server, connection, MCP id): one request on one connection."""


def _ns(seconds: float) -> int | None:
    return int(seconds * 1e9) if seconds else None


class WireSpans:
    """The open spans of one run's wire traffic."""

    def __init__(self, tracer: Tracer, parent: Context, metrics: RunMetrics,
                 facts: Callable[[str], Mapping[str, Any]], redact: Callable[[str], str]) -> None:
        """``facts``: a server's connection attributes (transport, revision, address)."""
        self._tracer = tracer
        self._parent = parent
        self._metrics = metrics
        self._facts = facts
        self._redact = redact
        self._calls: dict[str, Span] = {}
        """Span id (hex) → a call's ``execute_tool`` span, while the call runs."""
        self._sent_calls: dict[_Key, Span] = {}
        """A ``tools/call`` request on the wire → its call's span (what a server asks during it)."""
        self._requests: dict[_Key, tuple[Span, dict[str, Any], float]] = {}
        self._asks: dict[_Key, Span] = {}
        self._sign_ins: dict[tuple[str, int], Span] = {}
        self._era = EraNotes()
        """The fallback ``initialize`` of each connection, named as ``--wire`` and ``view`` name it."""
        self._rooted = trace.get_current_span(parent).get_span_context().is_valid
        """Whether ``parent`` holds a span (the run's, the caller's) to put the others under."""

    def call_started(self, span_id: str, span: Span) -> None:
        """``span_id``: the call span's id in hex, as its ``traceparent`` carries it."""
        self._calls[span_id] = span

    def call_ended(self, span_id: str) -> None:
        self._calls.pop(span_id, None)

    # -- MCP ----------------------------------------------------------------------------

    def message(self, event: McpMessage) -> None:
        key: _Key = (event.server, event.connection, event.mcp_id)
        if event.role == MCP_REQUEST and event.mcp_id is not None:
            if event.method in _ERA_METHODS:
                self._era.note(event)
            self._request(event, key)
        elif event.role == MCP_RESPONSE:
            self._sent_calls.pop(key, None)
            self._answered(event, key, self._era.note(event) if event.method in _ERA_METHODS else None)
        elif event.role == MCP_SERVER_REQUEST and event.mcp_id is not None:
            self._asked(event, key)
        elif event.role == MCP_REPLY:
            ask = self._asks.pop(key, None)
            if ask is not None:
                _end(ask, event.message.get("error"), _ns(event.time), self._redact)

    def _request(self, event: McpMessage, key: _Key) -> None:
        params = event.message.get("params")
        params = params if isinstance(params, dict) else {}
        call = self._call_of(params)
        if call is not None or event.method == _TOOLS_CALL:  # a call's own request: its span is the call's
            if call is not None:
                self._sent_calls[key] = call
            return
        context = self._context_for(event)
        if context is None:
            return
        method = event.method or "request"
        attributes: dict[str, Any] = {c.MCP_METHOD: method, c.JSONRPC_ID: str(event.mcp_id),
                                      c.SERVER: event.server, **self._facts(event.server)}
        name = method
        if method == "prompts/get" and isinstance(params.get("name"), str):
            attributes[c.PROMPT_NAME] = params["name"]
            name = f"{method} {params['name']}"
        if isinstance(params.get("uri"), str):
            attributes[c.RESOURCE_URI] = self._redact(_without_query(params["uri"]))
        span = self._tracer.start_span(name, context=context, kind=SpanKind.CLIENT,
                                       attributes=attributes, start_time=_ns(event.time))
        self._requests[key] = (span, attributes, event.time)

    def _answered(self, event: McpMessage, key: _Key, era_note: str | None = None) -> None:
        opened = self._requests.pop(key, None)
        if opened is None:
            return
        span, attributes, sent = opened
        error = event.message.get("error")
        if era_note is not None:  # the era probe's fallback initialize: refused as expected, no failure
            span.set_attributes({_FALLBACK: era_note, **_status_code(error)})
            error = None
        failure = _end(span, error, _ns(event.time), self._redact)
        if failure is not None:
            attributes = {**attributes, c.ERROR_TYPE: failure, c.RPC_STATUS_CODE: failure}
        if event.time and sent:
            self._metrics.mcp_request(max(0.0, event.time - sent), attributes)

    def _asked(self, event: McpMessage, key: _Key) -> None:
        context = self._context_for(event)
        if context is None:
            return
        method = event.method or "request"
        attributes = {c.MCP_METHOD: method, c.JSONRPC_ID: str(event.mcp_id), c.SERVER: event.server,
                      **self._facts(event.server)}
        self._asks[key] = self._tracer.start_span(method, context=context,
                                                  kind=SpanKind.SERVER, attributes=attributes,
                                                  start_time=_ns(event.time))

    def _call_of(self, params: dict[str, Any]) -> Span | None:
        """The call whose span's trace context the request carries."""
        meta = params.get("_meta")
        parent = meta.get("traceparent") if isinstance(meta, dict) else None
        if not isinstance(parent, str) or len(parent) != _TRACEPARENT_LENGTH:
            return None
        return self._calls.get(parent[36:52])  # 00-{trace id}-{span id}-{flags}

    def _context_for(self, event: McpMessage) -> Context | None:
        """Under the call the message came during (``belongs_to``), else under the run; None
        outside any span (``toolrelay call``'s handshake: no orphan traces)."""
        call = self._sent_calls.get((event.server, event.connection, event.belongs_to))
        if call is not None:
            return trace.set_span_in_context(call, self._parent)
        return self._parent if self._rooted else None

    # -- OAuth --------------------------------------------------------------------------

    def auth_exchange(self, event: AuthExchange) -> None:
        if not self._rooted:
            return
        span = self._sign_in(event.server, event.connection, event.time)
        url = urlsplit(event.url)
        attributes: dict[str, Any] = {"toolrelay.auth.step": event.step, "http.request.method": event.method}
        if url.hostname:
            attributes[c.SERVER_ADDRESS] = url.hostname
        if event.status is not None:
            attributes[c.HTTP_STATUS] = event.status
        span.add_event(event.step, attributes, timestamp=_ns(event.time))

    def auth_outcome(self, event: AuthOutcome) -> None:
        span = self._sign_ins.pop((event.server, event.connection), None)
        if span is None and not self._rooted:
            return
        if span is None:
            span = self._sign_in(event.server, event.connection, event.time, keep=False)
        span.set_attributes({"toolrelay.auth.outcome": event.outcome, "toolrelay.auth.how": event.how,
                             "toolrelay.auth.scopes": list(event.scopes)})
        issuer = urlsplit(event.issuer or "").hostname
        if issuer:
            span.set_attribute("toolrelay.auth.issuer", issuer)
        if event.outcome not in _SIGNED_IN:
            span.set_attribute(c.ERROR_TYPE, event.outcome)
            span.set_status(Status(StatusCode.ERROR, self._redact(event.detail or event.outcome)))
        span.end(end_time=_ns(event.time))

    def _sign_in(self, server: str, connection: int, at: float, *, keep: bool = True) -> Span:
        span = self._sign_ins.get((server, connection))
        if span is None:
            span = self._tracer.start_span(f"oauth {server}", context=self._parent, kind=SpanKind.INTERNAL,
                                           attributes={c.SERVER: server}, start_time=_ns(at))
            if keep:
                self._sign_ins[(server, connection)] = span
        return span

    def close(self) -> None:
        """The run ended: what is still open ends (a ``subscriptions/listen`` stream, a
        request never answered), marked unanswered."""
        for span, _, _ in self._requests.values():
            span.set_attribute("toolrelay.unanswered", True)
            span.end()
        for span in [*self._asks.values(), *self._sign_ins.values()]:
            span.set_attribute("toolrelay.unanswered", True)
            span.end()
        self._requests.clear()
        self._asks.clear()
        self._sign_ins.clear()


def _end(span: Span, error: Any, end_ns: int | None, redact: Callable[[str], str]) -> str | None:
    """End ``span`` as its answer says; the ``error.type`` of an error answer."""
    failure = None
    if isinstance(error, dict):
        code = error.get("code")
        failure = str(code) if isinstance(code, int) else "error"
        span.set_attribute(c.ERROR_TYPE, failure)
        span.set_attribute(c.RPC_STATUS_CODE, failure)
        message = error.get("message")
        span.set_status(Status(StatusCode.ERROR, redact(message) if isinstance(message, str) else failure))
    span.end(end_time=end_ns)
    return failure


def _status_code(error: Any) -> dict[str, str]:
    code = error.get("code") if isinstance(error, dict) else None
    return {c.RPC_STATUS_CODE: str(code)} if isinstance(code, int) else {}


def _without_query(uri: str) -> str:
    """A resource URI without its query, fragment or user info (where a key may ride)."""
    bare = uri.split("?", 1)[0].split("#", 1)[0]
    scheme, sep, rest = bare.partition("://")
    if sep and "@" in rest.split("/", 1)[0]:
        host_and_path = rest.split("@", 1)[1]
        return f"{scheme}://{host_and_path}"
    return bare
