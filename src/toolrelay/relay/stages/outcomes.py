"""The pure half of stage 5: what a ``tools/call`` exchange (or its failure) means.

A JSON-RPC error is a protocol error, ``isError: true`` is a tool error, an answer that is
no CallToolResult is a protocol error, a result failing its ``outputSchema`` is invalid
output, a dead or silent channel is a transport error. ``verify`` classifies recorded
exchanges with the same functions, so they read nothing but their arguments.
"""

from __future__ import annotations

import time
from typing import Any

from ...errors import (
    HttpStatusError,
    MessageTooLarge,
    ProtocolError,
    RequestTimeout,
    ServerExited,
    TransportError,
)
from ...protocol.exchange import Exchange
from .output_check import output_problem
from .parse import FunctionCall
from .result import CallExchange, CallOutcome, CallRoute, Verdict
from .route import Route

__all__ = ["exchange_verdict", "failed_outcome", "malformed_result", "outcome_from_exchange", "routed",
           "transport_kind"]


def routed(route: Route, connection: int | None) -> CallRoute:
    """The outcome's route part for ``route`` on connection ``connection``."""
    return CallRoute(server=route.server, tool=route.tool, connection=connection)


def failed_outcome(
    exc: TransportError | ProtocolError, call: FunctionCall, route: CallRoute, arguments: dict[str, Any],
    started: float,
) -> CallOutcome:
    """A request that got no usable answer: a protocol error (an answer came, unusable) or
    a transport error (none could come)."""
    verdict = (Verdict(status="protocol_error", message=str(exc)) if isinstance(exc, ProtocolError)
               else Verdict(status="transport_error", message=str(exc), transport_kind=transport_kind(exc)))
    return CallOutcome(call=call, route=route, exchange=CallExchange(mcp_id=exc.mcp_id, request=exc.request),
                       arguments=arguments, verdict=verdict, elapsed=time.monotonic() - started)


def transport_kind(exc: TransportError) -> str:
    """The transport failure's class, as shown in feedback markers."""
    if isinstance(exc, ServerExited):
        return "exited"
    if isinstance(exc, RequestTimeout):
        return "timeout"
    if isinstance(exc, MessageTooLarge):
        return "too_large"
    if isinstance(exc, HttpStatusError):
        return "http"
    return "closed"


def outcome_from_exchange(
    exchange: Exchange, *, call: FunctionCall, route: CallRoute, arguments: dict[str, Any] | None = None,
    output_schema: Any = None,
) -> CallOutcome:
    """Classify a completed exchange: protocol error, tool error, invalid output or success.

    ``verify`` calls this on recorded messages too (``output_schema``: the tool's, from the
    recorded ``tools/list``), so it depends on nothing but them.
    """
    return CallOutcome(
        call=call, route=route, arguments=arguments, verdict=exchange_verdict(exchange, route, output_schema),
        exchange=CallExchange(mcp_id=exchange.mcp_id, request=exchange.request, response=exchange.response),
        elapsed=exchange.elapsed,
    )


def exchange_verdict(exchange: Exchange, route: CallRoute, output_schema: Any) -> Verdict:
    """The verdict on a completed ``tools/call`` exchange."""
    if exchange.error is not None:
        error = exchange.error
        return Verdict(status="protocol_error", error_code=error.code, error_data=error.data,
                       message=error.message)
    result = exchange.result or {}
    problem = malformed_result(result)
    if problem is not None:
        message = f"server returned a malformed tools/call result: {problem}"
        return Verdict(status="protocol_error", message=message)
    if result.get("isError") is True:
        return Verdict(status="tool_error", result=result, message=_result_text(result))
    invalid = output_problem(result, output_schema, key=f"{route.server}/{route.tool}")
    if invalid is not None:
        return Verdict(status="invalid_output", result=result, message=invalid)
    return Verdict(status="ok", result=result)


def malformed_result(result: dict[str, Any]) -> str | None:
    """Why ``result`` is not a CallToolResult, or None when it is one."""
    content = result.get("content")
    if content is None and "structuredContent" in result:
        return None  # tolerated: older servers sent structured results alone
    if not isinstance(content, list):
        return '"content" must be an array of content blocks'
    if any(not isinstance(block, dict) or not isinstance(block.get("type"), str) for block in content):
        return 'every content block must be an object with a "type"'
    if "isError" in result and not isinstance(result["isError"], bool):
        return '"isError" must be a boolean'
    return None


def _result_text(result: dict[str, Any]) -> str:
    blocks = result.get("content") or []
    return "\n".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
