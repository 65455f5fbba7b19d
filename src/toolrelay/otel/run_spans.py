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

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any
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
    calls: dict[int, tuple[Span, float, dict[str, Any]]] = field(default_factory=dict)
    """id(CallContext) → the call's span, its start (monotonic) and attributes: one context
    per call, alive until after_call."""
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
        for span, _, _ in self._state.calls.values():
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
        self._state.calls[id(context)] = (span, time.monotonic(), attributes)
        self._wire.call_started(span)
        if self._events is not None:  # the transcript names the span (verify --otel)
            ids = span.get_span_context()
            self._events.emit(CallSpan(call_id=call.call_id or None, alias=call.name,
                                       trace_id=f"{ids.trace_id:032x}", span_id=f"{ids.span_id:016x}"))
        return None

    async def after_call(self, call: FunctionCall, context: CallContext, outcome: CallOutcome) -> None:
        opened = self._state.calls.pop(id(context), None)
        if opened is None:
            return
        span, started, attributes = opened
        self._wire.call_ended(span)
        span.set_attribute(c.OUTCOME, outcome.status)
        if outcome.mcp_id is not None:
            span.set_attribute(c.JSONRPC_ID, str(outcome.mcp_id))
        method = (outcome.request or {}).get("method")
        if isinstance(method, str):
            span.set_attribute(c.MCP_METHOD, method)
        failure = c.error_type(outcome.status, outcome.error_code, outcome.transport_kind)
        if failure is not None:  # a failed call is never OK (a success is left UNSET, as the conventions say)
            span.set_attribute(c.ERROR_TYPE, failure)
            if outcome.status == "protocol_error" and outcome.error_code is not None:
                span.set_attribute(c.RPC_STATUS_CODE, str(outcome.error_code))
            span.set_status(Status(StatusCode.ERROR, self._redact(outcome.message or outcome.status)))
            attributes[c.ERROR_TYPE] = failure
            if outcome.status == "protocol_error" and outcome.error_code is not None:
                attributes[c.RPC_STATUS_CODE] = str(outcome.error_code)
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

    def _server_attributes(self, server: str) -> dict[str, Any]:
        facts = self._state.servers.get(server, _ServerFacts())
        attributes: dict[str, Any] = {c.NETWORK_TRANSPORT: c.transport_of(facts.transport)}
        if facts.protocol_version is not None:
            attributes[c.MCP_PROTOCOL_VERSION] = facts.protocol_version
        if facts.transport == "http":
            url = urlsplit(facts.target)
            if url.hostname:
                attributes[c.SERVER_ADDRESS] = url.hostname
                attributes[c.SERVER_PORT] = url.port or (443 if url.scheme == "https" else 80)
            session = self._session_of(server)
            if session is not None and facts.protocol_version not in MODERN_VERSIONS:
                attributes[c.MCP_SESSION_ID] = session
        return attributes

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
        if not isinstance(event, (ModelStreamEvent, ModelResponseEvent, ModelRequestEvent)):
            self._turns.settle(event)
        if isinstance(event, McpMessage):
            self._wire.message(event)
        elif isinstance(event, AuthExchange):
            self._wire.auth_exchange(event)
        elif isinstance(event, AuthOutcome):
            self._wire.auth_outcome(event)
        elif isinstance(event, ServerStarting):
            self._state.servers[event.server] = _ServerFacts(transport=event.transport, target=event.target)
        elif isinstance(event, ServerReady):
            facts = self._state.servers.setdefault(event.server, _ServerFacts())
            facts.protocol_version = event.protocol_version
        elif isinstance(event, RunStartEvent):
            self._run.set_attributes({c.RUN_ID: event.run_id, c.REQUEST_MODEL: event.model})
        elif isinstance(event, ModelRequestEvent):
            self._state.streaming.add(event.turn)
            self._turns.request(event)
        elif isinstance(event, ModelResponseEvent):
            self._state.streaming.discard(event.turn)
            self._turns.response(event, self._redact)
        elif isinstance(event, CallParsed) and self._state.streaming and event.call_id:
            self._state.early.add(event.call_id)  # parsed before its response arrived: started early
        elif isinstance(event, RunEndEvent):
            self._run_ended(event)

    def _run_ended(self, event: RunEndEvent) -> None:
        self._turns.close(None)
        self._wire.close()
        self._run.set_attribute(c.RUN_STATUS, event.status)
        for key, name in (("input_tokens", c.INPUT_TOKENS), ("output_tokens", c.OUTPUT_TOKENS)):
            if key in event.usage:
                self._run.set_attribute(name, event.usage[key])
        if event.status != "completed":
            self._run.set_attribute(c.ERROR_TYPE, event.status)
            self._run.set_status(Status(StatusCode.ERROR, self._redact(event.reason or event.status)))
        self._end_run()

    def _end_run(self) -> None:
        if not self._ended:
            self._ended = True
            self._run.end()
