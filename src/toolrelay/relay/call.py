"""Stage 5, call: send ``tools/call`` on the routed server and classify what came back.

The server's answer (or the channel's failure) becomes a ``CallOutcome``; nothing here
raises for a failed call. A JSON-RPC error is a protocol error, ``isError: true`` is a
tool error, a dead or silent channel is a transport error — three classes kept apart.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from ..errors import (
    HttpStatusError,
    MessageTooLarge,
    ProtocolError,
    RequestTimeout,
    ServerExited,
    TransportError,
)
from ..protocol.peer import Exchange
from .output_check import output_problem
from .result import CallOutcome
from .route import Route

__all__ = ["ToolCaller", "call_tool", "outcome_from_exchange", "transport_kind"]


class ToolCaller(Protocol):
    """What the call stage needs of a server connection."""

    @property
    def number(self) -> int: ...

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        call_id: str | None = None,
        timeout: float | None = None,
    ) -> Exchange: ...

    def refused_sampling(self, mcp_id: int | str | None) -> int:
        """Sampling requests refused for the per-call cap during the tools/call ``mcp_id``,
        which just ended."""
        ...


async def call_tool(
    connection: ToolCaller,
    route: Route,
    arguments: dict[str, Any],
    *,
    call_id: str | None,
    arguments_text: str | None = None,
    timeout: float | None = None,
) -> CallOutcome:
    """Run one ``tools/call``; every ending is an outcome."""
    started = time.monotonic()
    base: dict[str, Any] = {
        "alias": route.alias,
        "call_id": call_id,
        "server": route.server,
        "tool": route.tool,
        "arguments_text": arguments_text,
        "arguments": arguments,
    }
    try:
        exchange = await connection.call_tool(route.tool, arguments, call_id=call_id, timeout=timeout)
    except (TransportError, ProtocolError) as exc:
        failed: dict[str, Any] = {
            "mcp_id": exc.mcp_id, "request": exc.request, "connection": connection.number,
            "elapsed": time.monotonic() - started, "message": str(exc),
        }
        failed["sampling_refused"] = connection.refused_sampling(exc.mcp_id)
        if isinstance(exc, ProtocolError):  # an answer came, but not a usable one
            return CallOutcome(status="protocol_error", **failed, **base)
        return CallOutcome(status="transport_error", transport_kind=transport_kind(exc), **failed, **base)
    outcome = outcome_from_exchange(
        exchange, connection=connection.number, output_schema=route.output_schema, **base
    )
    outcome.sampling_refused = connection.refused_sampling(exchange.mcp_id)
    return outcome


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
    exchange: Exchange, *, connection: int | None, output_schema: Any = None, **base: Any
) -> CallOutcome:
    """Classify a completed exchange: protocol error, tool error, invalid output or success.

    ``verify`` calls this on recorded messages too (``output_schema``: the tool's, from the
    recorded ``tools/list``), so it depends on nothing but them.
    """
    ids: dict[str, Any] = {
        "mcp_id": exchange.mcp_id,
        "connection": connection,
        "request": exchange.request,
        "response": exchange.response,
        "elapsed": exchange.elapsed,
    }
    if exchange.error is not None:
        return CallOutcome(
            status="protocol_error",
            error_code=exchange.error.code,
            error_data=exchange.error.data,
            message=exchange.error.message,
            **ids,
            **base,
        )
    result = exchange.result or {}
    problem = malformed_result(result)
    if problem is not None:
        return CallOutcome(
            status="protocol_error",
            message=f"server returned a malformed tools/call result: {problem}",
            **ids,
            **base,
        )
    if result.get("isError") is True:
        return CallOutcome(
            status="tool_error", result=result, message=_result_text(result), **ids, **base
        )
    invalid = output_problem(result, output_schema, key=f"{base.get('server')}/{base.get('tool')}")
    if invalid is not None:
        return CallOutcome(status="invalid_output", result=result, message=invalid, **ids, **base)
    return CallOutcome(status="ok", result=result, **ids, **base)


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
