"""Stages 3–5 for one call: arguments text → route → validate → consent → ``tools/call``
(``resources/read`` for the ``--expose-resources`` reader, ``resource_tool.py``).

``dispatch`` takes one function call as the model sent it (alias, arguments text,
call_id, and the parser's complaint if the item was malformed) and returns one
``CallOutcome``; it never raises for a failed call. It emits the call's events in order:
``CallParsed``, ``CallRouted`` (when the alias resolves), the MCP messages (from the
connection), and ``CallOutcomeEvent`` — also for a call cancelled mid-flight, before the
cancellation goes on: that outcome names as much as the call got to (route, MCP id and
connection of a request already sent) and why it was stopped.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Set
from dataclasses import dataclass
from typing import Any, Final, cast

from ..events import CallOutcomeEvent, CallParsed, CallRouted, EventStream
from ..protocol import mcp
from ..protocol.peer import last_sent
from .alias import unknown_tool_message
from .arguments import ArgumentChecker, ArgumentError, parse_arguments
from .call import ToolCaller, call_tool, outcome_from_exchange
from .consent import Approver
from .optional_nulls import strip_optional_nulls
from .resource_tool import ResourceReader, read_for_call
from .result import CallOutcome
from .route import Route, Router

__all__ = ["INTERRUPTED", "DispatchTable", "StopReason", "Stopped", "dispatch"]

StopReason = Callable[[], str]
"""Says why a call is being cancelled, asked at that moment (the run knows, the call does not)."""
INTERRUPTED: Final = "the run was interrupted before the call ended"
"""A cancelled call's message when nobody says why."""
Stopped = Callable[[CallOutcome], None]
"""Told a cancelled call's outcome before the cancellation goes on (the run keeps it)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DispatchTable:
    """What a call is routed, checked and sent against: one state of the catalog."""

    router: Router
    connections: Mapping[str, ToolCaller]
    """Server name → its connection."""
    strict_aliases: Set[str]
    """Aliases the model was offered in strict form: their added nulls are stripped."""
    checker: ArgumentChecker
    events: EventStream


async def dispatch(
    table: DispatchTable,
    alias: str,
    arguments_text: str,
    *,
    call_id: str | None = None,
    approve: Approver | None = None,
    timeout: float | None = None,
    malformed: str | None = None,
    stop_reason: StopReason | None = None,
    on_stopped: Stopped | None = None,
) -> CallOutcome:
    """Run one call to its outcome. ``approve`` is asked for tools not marked read-only
    (None: nobody is asked); ``malformed`` is why the call item itself was unusable;
    ``stop_reason`` says why, if the call is cancelled (default ``INTERRUPTED``), and
    ``on_stopped`` is given that cancelled outcome."""
    facts: dict[str, Any] = {"alias": alias, "call_id": call_id, "arguments_text": arguments_text}
    started = time.monotonic()
    outer = last_sent.set(None)  # what the peer sends for this call, in this task
    try:
        outcome = await _dispatch(table, facts, approve, timeout, malformed)
    except asyncio.CancelledError:
        why = stop_reason() if stop_reason is not None else INTERRUPTED
        stopped = _cancelled(table, facts, why, started)
        table.events.emit(CallOutcomeEvent(call_id=call_id, outcome=stopped.to_record()))
        if on_stopped is not None:
            on_stopped(stopped)
        raise
    finally:
        last_sent.reset(outer)
    table.events.emit(CallOutcomeEvent(call_id=call_id, outcome=outcome.to_record()))
    return outcome


def _cancelled(table: DispatchTable, facts: dict[str, Any], why: str, started: float) -> CallOutcome:
    """The outcome of a call stopped midway: where it got to, and why it stopped; a call whose
    answer had already arrived when the stop came ran, and its outcome says how it ended."""
    server = facts.get("server")
    connection = table.connections.get(server) if isinstance(server, str) else None
    sent = last_sent.get()
    if connection is None or sent is None or sent.method != mcp.CALL_TOOL:
        return CallOutcome(status="cancelled", message=why, elapsed=time.monotonic() - started, **facts)
    if sent.response is not None:  # the answer had arrived as the stop came: the call ran, say how
        route = table.router.resolve(facts["alias"])
        schema = route.output_schema if route is not None else None
        return outcome_from_exchange(sent, connection=connection.number, output_schema=schema, **facts)
    facts |= {"mcp_id": sent.mcp_id, "connection": connection.number, "request": sent.request}
    return CallOutcome(status="cancelled", message=why, elapsed=time.monotonic() - started, **facts)


async def _dispatch(
    table: DispatchTable, facts: dict[str, Any], approve: Approver | None, timeout: float | None,
    malformed: str | None,
) -> CallOutcome:
    """The call's stages; ``facts`` grows as they pass (a cancelled call's outcome is built
    from it)."""
    alias, text, call_id = facts["alias"], facts["arguments_text"], facts["call_id"]
    parsed = _parse(table.events, alias, text, call_id, malformed)
    route = table.router.resolve(alias)
    if route is None:
        message = unknown_tool_message(alias, table.router.aliases)
        return CallOutcome(status="unknown_tool", message=message, **facts)
    table.events.emit(CallRouted(call_id=call_id, alias=alias, server=route.server, tool=route.tool))
    facts |= {"server": route.server, "tool": route.tool}
    if isinstance(parsed, ArgumentError):
        return CallOutcome(status="invalid_arguments", message=parsed.message, **facts)
    value = strip_optional_nulls(parsed, route.rule) if alias in table.strict_aliases else parsed
    facts["arguments"] = value
    problem = table.checker.validate(alias, route.rule, value)
    if problem is not None:
        return CallOutcome(status="invalid_arguments", message=problem.message, **facts)
    refusal = await _ask_consent(approve, route, value)
    if refusal is not None:
        return CallOutcome(status="not_approved", message=refusal, **facts)
    if route.reads_resources:
        return await read_for_call(cast(ResourceReader, table.connections[route.server]), route, value,
                                   call_id=call_id, arguments_text=text, timeout=timeout)
    return await call_tool(
        table.connections[route.server], route, value,
        call_id=call_id, arguments_text=text, timeout=timeout,
    )


def _parse(
    events: EventStream, alias: str, text: str, call_id: str | None, malformed: str | None
) -> dict[str, Any] | ArgumentError:
    """The arguments as an object, or why not; recorded as ``CallParsed`` either way."""
    parsed = ArgumentError(kind="json", message=malformed) if malformed else parse_arguments(text)
    error = parsed.message if isinstance(parsed, ArgumentError) else None
    events.emit(CallParsed(
        call_id=call_id, alias=alias, arguments_text=text,
        arguments=None if error else parsed, error=error,
    ))
    return parsed


async def _ask_consent(approve: Approver | None, route: Route, value: dict[str, Any]) -> str | None:
    """The refusal, or None when the call may run (read-only tools are never asked about)."""
    if approve is None or route.read_only:
        return None
    return await approve(route, value)
