"""The file server's side of a trace: each ``tools/call`` a SERVER span ``tools/call
{tool}``, parented on the trace context the client put in the request's ``params._meta``
(SEP-414; toolrelay's own ``execute_tool`` span when toolrelay called), with the MCP
conventions' attributes (``mcp.method.name``, ``jsonrpc.request.id``, the revision, the
transport) and ``error.type`` for a failed call (``tool_error`` for ``isError``, the
JSON-RPC code for an error answer).

``TracedService`` wraps any ``ToolService``; the server runtime is unchanged.
"""

from __future__ import annotations

import contextlib
import inspect
import time
from collections.abc import Awaitable, Iterator
from typing import Any

from opentelemetry import propagate
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from ..errors import RpcError, UnknownTool
from ..protocol.jsonrpc import INVALID_PARAMS, JSONObject
from ..server.app import CallContext, ToolService
from . import conventions as c
from .metrics import ServerMetrics

__all__ = ["TracedService"]


class TracedService:
    """``service`` with a SERVER span around each of its calls; everything else is its own."""

    def __init__(self, service: ToolService, tracer: Tracer, *, transport: str,
                 metrics: ServerMetrics | None = None) -> None:
        self._service = service
        self._metrics = metrics if metrics is not None else ServerMetrics()
        self._tracer = tracer
        self._transport = c.transport_of(transport)
        self.name, self.version, self.instructions = service.name, service.version, service.instructions

    def __getattr__(self, name: str) -> Any:  # what else the service offers (uses_client_roots, ...)
        return getattr(self._service, name)

    def tools(self) -> list[JSONObject]:
        return self._service.tools()

    def call(
        self, name: str, arguments: JSONObject, context: CallContext
    ) -> JSONObject | Awaitable[JSONObject]:
        span = _Timed(self._start(name, context), self._metrics)
        with _failure_recorded(span, name):
            result = self._service.call(name, arguments, context)
        if inspect.isawaitable(result):
            return self._finish_later(span, name, result)
        _finish(span, result)
        return result

    def _start(self, name: str, context: CallContext) -> Span:
        request = context.request
        params = request.params if request is not None else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        carrier = {k: v for k, v in meta.items() if isinstance(v, str)} if isinstance(meta, dict) else {}
        attributes: dict[str, Any] = {c.MCP_METHOD: "tools/call", c.OPERATION: c.EXECUTE_TOOL,
                                      c.TOOL_NAME: name, c.NETWORK_TRANSPORT: self._transport}
        if request is not None and request.id is not None:
            attributes[c.JSONRPC_ID] = str(request.id)
        if context.protocol_version is not None:
            attributes[c.MCP_PROTOCOL_VERSION] = context.protocol_version
        return self._tracer.start_span(f"tools/call {name}", context=propagate.extract(carrier),
                                       kind=SpanKind.SERVER, attributes=attributes)

    @staticmethod
    async def _finish_later(span: _Timed, name: str, pending: Awaitable[JSONObject]) -> JSONObject:
        with _failure_recorded(span, name):
            result = await pending
        _finish(span, result)
        return result


class _Timed:
    """A call's span and when it began: its end records ``mcp.server.operation.duration``."""

    def __init__(self, span: Span, metrics: ServerMetrics) -> None:
        self.span, self.metrics, self.started = span, metrics, time.monotonic()
        self.attributes: dict[str, Any] = dict(getattr(span, "attributes", None) or {})

    def fail(self, error_type: str, description: str) -> None:
        self.attributes[c.ERROR_TYPE] = error_type
        self.span.set_attribute(c.ERROR_TYPE, error_type)
        if error_type.lstrip("-").isdigit():
            self.attributes[c.RPC_STATUS_CODE] = error_type
            self.span.set_attribute(c.RPC_STATUS_CODE, error_type)
        self.span.set_status(Status(StatusCode.ERROR, description))
        self.end()

    def end(self) -> None:
        self.span.end()
        self.metrics.request(time.monotonic() - self.started, self.attributes)


@contextlib.contextmanager
def _failure_recorded(span: _Timed, name: str) -> Iterator[None]:
    """What the tool raised ends its span failed (the JSON-RPC code of an error answer),
    and goes on."""
    try:
        yield
    except UnknownTool:
        span.fail(str(INVALID_PARAMS), f"Unknown tool: {name}")
        raise
    except RpcError as exc:
        span.fail(str(exc.code), exc.rpc_message)
        raise
    except BaseException as exc:
        span.fail(type(exc).__qualname__, "the tool raised or was cancelled")
        raise


def _finish(span: _Timed, result: JSONObject) -> None:
    if result.get("isError") is True:
        span.fail(c.TOOL_ERROR, "the tool reported an error (isError: true)")
        return
    span.end()
