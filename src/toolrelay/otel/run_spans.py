"""One run as one trace: ``invoke_agent toolrelay`` for the run, ``chat {model}`` for each
model turn, ``execute_tool {tool}`` for each call, with the two id domains on the call's
span (``gen_ai.tool.call.id`` = the model's call_id, ``jsonrpc.request.id`` = the MCP id).

``RunTracing`` is both a ``CallHook`` (it opens a call's span in ``before_call``, puts the
span's W3C trace context in ``context.meta``, so it goes unprefixed into the request's
``params._meta`` as SEP-414 says, and ends it in ``after_call`` with the outcome) and a
subscriber of the run's ``EventStream`` (the run, the turns, the servers' transport and
revision). It never raises into the run: a span it cannot make is a span missing, not a
run failed.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode, Tracer

from .._version import __version__
from ..events import (
    AuthExchange,
    AuthOutcome,
    CallParsed,
    CallSpan,
    Event,
    EventStream,
    McpMessage,
    ModelRequestEvent,
    ModelResponseEvent,
    ModelStreamEvent,
    RunEndEvent,
    RunStartEvent,
    ServerReady,
    ServerStarting,
)
from ..protocol.versions import MODERN_VERSIONS
from ..redaction import redact
from ..relay.stages.context import CallContext, CallHook
from ..relay.stages.parse import FunctionCall
from ..relay.stages.result import CallOutcome
from . import conventions as c
from .mcp_spans import WireSpans
from .metrics import RunMetrics, run_metrics
from .model_spans import TurnSpans

if TYPE_CHECKING:
    from ..relay.catalog import Catalog

__all__ = ["RunTracing", "tracer_of"]


def tracer_of(provider: Any) -> Tracer | None:
    """toolrelay's tracer from ``provider`` (a ``TracerProvider``), else from the global
    provider once one was set (None: nobody set one, so tracing stays off)."""
    if provider is None:
        provider = trace.get_tracer_provider()
        if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
            return None
    tracer: Tracer = provider.get_tracer("toolrelay", __version__)
    return tracer


@dataclass(slots=True)
class _ServerFacts:
    """What the events said of a server's connection, for its calls' spans."""

    transport: str = "stdio"
    target: str = ""
    protocol_version: str | None = None


@dataclass(slots=True)
class _RunState:
    servers: dict[str, _ServerFacts] = field(default_factory=dict)
    calls: dict[int, tuple[Span, str, float, dict[str, Any]]] = field(default_factory=dict)
    """id(CallContext) → the call's span, its id (hex), its start (monotonic) and attributes:
    one context per call, alive until after_call."""
    streaming: set[int] = field(default_factory=set)
    """Turns whose response has not arrived yet: a call parsed meanwhile starts early."""
    early: set[str] = field(default_factory=set)


class RunTracing(CallHook):
    """The spans of one run (``runner.run_async`` makes one when tracing is on)."""

    def __init__(
        self, tracer: Tracer, *, secrets: Iterable[str] = (), catalog: Catalog | None = None,
        agent: bool = True, parent: otel_context.Context | None = None, links: Sequence[Link] = (),
        attributes: Mapping[str, Any] | None = None, metrics: RunMetrics | None = None,
    ) -> None:
        """``agent``: the calls are a run's (under its ``invoke_agent`` span); False for a
        direct call (``toolrelay call``), whose span is the trace's root. ``parent``: the
        context the run's span starts in (default: the caller's; an empty one makes it a
        trace's root, as a batch's task is), with ``links`` and ``attributes`` of its own;
        ``metrics``: the instruments the run's durations and tokens go to."""
        self._tracer = tracer
        self._secrets = frozenset(secrets)
        self._catalog = catalog
        self._metrics = metrics if metrics is not None else run_metrics()
        self._state = _RunState()
        self._run: Span = trace.INVALID_SPAN  # not recording: what is said of the run goes nowhere
        # the caller's context (its span, its baggage), unless told another
        self._inside = otel_context.get_current() if parent is None else parent
        if agent:
            self._run = tracer.start_span(f"{c.INVOKE_AGENT} {c.AGENT_NAME}", context=self._inside,
                                          kind=SpanKind.INTERNAL, links=links,
                                          attributes={c.OPERATION: c.INVOKE_AGENT, c.AGENT: c.AGENT_NAME,
                                                      c.PROVIDER_NAME: c.PROVIDER, **(attributes or {})})
            self._inside = trace.set_span_in_context(self._run, self._inside)
        self._turns = TurnSpans(tracer, self._inside, self._metrics)
        self._wire = WireSpans(tracer, self._inside, self._metrics, self._server_attributes, self._redact)
        self._ended = False
        self._unsubscribe: Callable[[], None] | None = None
        self._events: EventStream | None = None

    def listen(self, events: EventStream) -> RunTracing:
        """Subscribe to ``events``; the subscription ends with the run's span (``__exit__``)."""
        self._unsubscribe = events.subscribe(self._on_event)
        self._events = events
        return self

    def __enter__(self) -> RunTracing:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        """The run's end: what is still open is ended, failed if the run ended by an error."""
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._turns.close(error)
        self._wire.close()
        for span, _, _, _ in self._state.calls.values():
            span.set_status(Status(StatusCode.ERROR, "the run ended before the call did"))
            span.end()
        self._state.calls.clear()
        if error is not None and not self._ended:
            self._run.set_attribute(c.ERROR_TYPE, type(error).__qualname__)
            self._run.set_status(Status(StatusCode.ERROR, self._redact(str(error))))
        self._end_run()

    # -- the call hook ------------------------------------------------------------------

    async def before_call(self, call: FunctionCall, context: CallContext) -> str | None:
        tool = context.tool or call.name
        attributes = self._call_attributes(call, context, tool)
        span = self._tracer.start_span(f"{c.EXECUTE_TOOL} {tool}", context=self._inside,
                                       kind=SpanKind.INTERNAL, attributes=attributes)
        carrier: dict[str, str] = {}
        propagate.inject(carrier, context=trace.set_span_in_context(span, self._inside))
        context.meta.update(carrier)  # traceparent (tracestate, baggage): unprefixed, SEP-414
        trace_id, span_id = _ids(span, carrier.get(_TRACEPARENT))
        self._state.calls[id(context)] = (span, span_id, time.monotonic(), attributes)
        self._wire.call_started(span_id, span)
        if self._events is not None:  # the transcript names the span (verify --otel)
            self._events.emit(CallSpan(call_id=call.call_id or None, alias=call.name,
                                       trace_id=trace_id, span_id=span_id))
        return None

    async def after_call(self, call: FunctionCall, context: CallContext, outcome: CallOutcome) -> None:
        opened = self._state.calls.pop(id(context), None)
        if opened is None:
            return
        span, span_id, started, attributes = opened
        self._wire.call_ended(span_id)
        ended: dict[str, Any] = {c.OUTCOME: outcome.status}  # one set_attributes: one cleaning pass, one lock
        if outcome.mcp_id is not None:
            ended[c.JSONRPC_ID] = str(outcome.mcp_id)
        method = (outcome.request or {}).get("method")
        if isinstance(method, str):
            ended[c.MCP_METHOD] = method
        failure = c.error_type(outcome.status, outcome.error_code, outcome.transport_kind)
        if failure is not None:  # a failed call is never OK (a success is left UNSET, as the conventions say)
            failed = {c.ERROR_TYPE: failure}
            if outcome.status == "protocol_error" and outcome.error_code is not None:
                failed[c.RPC_STATUS_CODE] = str(outcome.error_code)
            ended.update(failed)
            attributes.update(failed)
        span.set_attributes(ended)
        if failure is not None:
            span.set_status(Status(StatusCode.ERROR, self._redact(outcome.message or outcome.status)))
        span.end()
        if context.server is not None:  # a call that reached a server: an MCP request's duration
            self._metrics.mcp_request(time.monotonic() - started, attributes)

    def _call_attributes(self, call: FunctionCall, context: CallContext, tool: str) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            c.OPERATION: c.EXECUTE_TOOL, c.TOOL_NAME: tool, c.TOOL_TYPE: "function", c.ALIAS: call.name,
            c.EARLY: call.call_id in self._state.early,
        }
        if call.call_id:
            attributes[c.TOOL_CALL_ID] = call.call_id
        if context.server is not None:
            attributes[c.SERVER] = context.server
            attributes[c.MCP_METHOD] = "tools/call"
            attributes.update(self._server_attributes(context.server))
        return attributes

    def _server_attributes(self, server: str) -> Mapping[str, Any]:
        facts = self._state.servers.get(server, _NO_FACTS)
        shared = _connection_attributes(facts.transport, facts.target, facts.protocol_version)
        if facts.transport != "http" or facts.protocol_version in MODERN_VERSIONS:
            return shared
        session = self._session_of(server)  # may change on a reconnect: never cached
        return shared if session is None else {**shared, c.MCP_SESSION_ID: session}

    def _session_of(self, server: str) -> str | None:
        """The HTTP session id of ``server``'s connection (the 2025 era has sessions)."""
        connection = self._catalog.connections.get(server) if self._catalog is not None else None
        session = getattr(getattr(connection, "transport", None), "session_id", None)
        return session if isinstance(session, str) else None

    def _redact(self, text: str) -> str:
        return redact(text, self._secrets)

    # -- the event stream ---------------------------------------------------------------

    def saw(self, events: Iterable[Event]) -> None:
        """Events from before this run (a batch's servers' start-up): their facts only."""
        for event in events:
            if isinstance(event, (ServerStarting, ServerReady)):
                self._on_event(event)

    def _on_event(self, event: Event) -> None:
        try:
            self._see(event)
        except Exception:  # a span lost is no reason to fail the run
            return

    def _see(self, event: Event) -> None:
        kind = type(event)
        route = _ROUTES.get(kind)
        if route is None:
            route = _ROUTES[kind] = _route_of(kind)
        settles, handler = route
        if settles:
            self._turns.settle()
        if handler is not None:
            handler(self, event)

    def _server_starting(self, event: ServerStarting) -> None:
        self._state.servers[event.server] = _ServerFacts(transport=event.transport, target=event.target)

    def _server_ready(self, event: ServerReady) -> None:
        facts = self._state.servers.setdefault(event.server, _ServerFacts())
        facts.protocol_version = event.protocol_version

    def _run_started(self, event: RunStartEvent) -> None:
        self._run.set_attributes({c.RUN_ID: event.run_id, c.REQUEST_MODEL: event.model})

    def _model_request(self, event: ModelRequestEvent) -> None:
        self._state.streaming.add(event.turn)
        self._turns.request(event)

    def _model_response(self, event: ModelResponseEvent) -> None:
        self._state.streaming.discard(event.turn)
        self._turns.response(event, self._redact)

    def _call_parsed(self, event: CallParsed) -> None:
        if self._state.streaming and event.call_id:
            self._state.early.add(event.call_id)  # parsed before its response arrived: started early

    def _run_ended(self, event: RunEndEvent) -> None:
        self._turns.close(None)
        self._wire.close()
        ended: dict[str, Any] = {c.RUN_STATUS: event.status}
        for key, name in (("input_tokens", c.INPUT_TOKENS), ("output_tokens", c.OUTPUT_TOKENS)):
            if key in event.usage:
                ended[name] = event.usage[key]
        if event.status != "completed":
            ended[c.ERROR_TYPE] = event.status
        self._run.set_attributes(ended)
        if event.status != "completed":
            self._run.set_status(Status(StatusCode.ERROR, self._redact(event.reason or event.status)))
        self._end_run()

    def _end_run(self) -> None:
        if not self._ended:
            self._ended = True
            self._run.end()


_Route = tuple[bool, Callable[[RunTracing, Any], None] | None]
"""Whether an event of that type settles the answered turns, and what handles it."""
_HANDLED: tuple[tuple[type[Event], Callable[[RunTracing, Any], None]], ...] = (
    (McpMessage, lambda tracing, event: tracing._wire.message(event)),
    (AuthExchange, lambda tracing, event: tracing._wire.auth_exchange(event)),
    (AuthOutcome, lambda tracing, event: tracing._wire.auth_outcome(event)),
    (ServerStarting, RunTracing._server_starting),
    (ServerReady, RunTracing._server_ready),
    (RunStartEvent, RunTracing._run_started),
    (ModelRequestEvent, RunTracing._model_request),
    (ModelResponseEvent, RunTracing._model_response),
    (CallParsed, RunTracing._call_parsed),
    (RunEndEvent, RunTracing._run_ended),
)
_MODEL_EVENTS: Final = (ModelStreamEvent, ModelResponseEvent, ModelRequestEvent)
_ROUTES: dict[type[Event], _Route] = {}
"""Each event type's route, found once by ``isinstance`` (a subclass goes where its base does)."""


def _route_of(kind: type[Event]) -> _Route:
    handler = next((handle for base, handle in _HANDLED if issubclass(kind, base)), None)
    return (not issubclass(kind, _MODEL_EVENTS), handler)


_NO_FACTS: Final = _ServerFacts()
_TRACEPARENT: Final = "traceparent"


@functools.lru_cache(maxsize=256)
def _connection_attributes(transport: str, target: str, protocol_version: str | None) -> Mapping[str, Any]:
    """A server connection's attributes, made once per connection and shared by every span
    and data point of it (read-only: the SDK copies what it keeps)."""
    attributes: dict[str, Any] = {c.NETWORK_TRANSPORT: c.transport_of(transport)}
    if protocol_version is not None:
        attributes[c.MCP_PROTOCOL_VERSION] = protocol_version
    if transport == "http":
        url = urlsplit(target)
        if url.hostname:
            attributes[c.SERVER_ADDRESS] = url.hostname
            attributes[c.SERVER_PORT] = url.port or (443 if url.scheme == "https" else 80)
    return MappingProxyType(attributes)


def _ids(span: Span, traceparent: str | None) -> tuple[str, str]:
    """The span's trace and span ids in hex, read from the ``traceparent`` just made for it
    (``00-{trace}-{span}-{flags}``) rather than formatted again; formatted when another
    propagator made none."""
    if traceparent is not None and len(traceparent) == 55 and traceparent.startswith("00-"):
        return traceparent[3:35], traceparent[36:52]
    ids = span.get_span_context()
    return f"{ids.trace_id:032x}", f"{ids.span_id:016x}"
