"""Stage 5, call: send ``tools/call`` on the routed server and classify what came back.

The server's answer (or the channel's failure) becomes a ``CallOutcome``; nothing here
raises for a failed call. What an answer means is ``outcomes.py``'s (pure: verify reads
recorded answers with it).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Protocol

from ..errors import (
    ProtocolError,
    TransportError,
)
from ..protocol.exchange import Exchange, Sent
from .stages.context import CallContext
from .stages.outcomes import failed_outcome, outcome_from_exchange, routed
from .stages.parse import FunctionCall
from .stages.result import CallOutcome
from .stages.route import Route

__all__ = ["ToolCaller", "call_tool"]


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
        meta: Mapping[str, Any] | None = None,
        on_sent: Sent | None = None,
    ) -> Exchange: ...

    def refused_sampling(self, mcp_id: int | str | None) -> int:
        """Sampling requests refused for the per-call cap during the tools/call ``mcp_id``,
        which just ended."""
        ...


async def call_tool(
    connection: ToolCaller, route: Route, arguments: dict[str, Any], call: FunctionCall, context: CallContext,
    *, on_sent: Sent | None = None,
) -> CallOutcome:
    """Run one ``tools/call``; every ending is an outcome. ``on_sent`` is told each request
    once it is on the wire (a cancelled call's outcome names it)."""
    started = time.monotonic()
    try:
        exchange = await connection.call_tool(route.tool, arguments, call_id=call.call_id or None,
                                              timeout=context.timeout, meta=context.meta, on_sent=on_sent)
    except (TransportError, ProtocolError) as exc:
        outcome = failed_outcome(exc, call, routed(route, connection.number), arguments, started)
        outcome.sampling_refused = connection.refused_sampling(exc.mcp_id)
        return outcome
    where = routed(route, connection.number)
    outcome = outcome_from_exchange(exchange, call=call, route=where, arguments=arguments,
                                    output_schema=route.output_schema)
    outcome.sampling_refused = connection.refused_sampling(exchange.mcp_id)
    return outcome
