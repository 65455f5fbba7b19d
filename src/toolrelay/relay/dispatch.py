"""Stages 3–5 for one call: arguments text → route → validate → consent → ``tools/call``
(``resources/read`` for the ``--expose-resources`` reader, ``resource_tool.py``).

``dispatch`` takes one function call as the model sent it (``FunctionCall``: alias,
arguments text, call_id, and the parser's complaint if the item was malformed) and its
``CallContext`` (consent, time limit, hooks, ``_meta``), and returns one ``CallOutcome``;
it never raises for a failed call. The context's hooks (``CallHook``) are asked once the
call is routed and told its outcome, whatever it is. It emits the call's events in order:
``CallParsed``, ``CallRouted`` (when the alias resolves), the MCP messages (from the
connection), and ``CallOutcomeEvent`` — also for a call cancelled mid-flight, before the
cancellation goes on: that outcome names as much as the call got to (route, MCP id and
connection of a request already sent) and why it was stopped.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any, cast

from ..events import CallOutcomeEvent, CallParsed, CallRouted, EventStream
from ..protocol.exchange import Exchange
from .call import ToolCaller, call_tool
from .call_hooks import after_call, before_call
from .resource_tool import ResourceReader, read_for_call
from .stages.alias import unknown_tool_message
from .stages.arguments import ArgumentChecker, ArgumentError, parse_arguments
from .stages.consent import Approver
from .stages.context import INTERRUPTED, CallContext, Refusal, Stopped, StopReason
from .stages.optional_nulls import strip_optional_nulls
from .stages.outcomes import outcome_from_exchange, routed
from .stages.parse import FunctionCall
from .stages.result import CallExchange, CallOutcome, CallRoute, OutcomeStatus, Verdict
from .stages.route import Route, Router

# StopReason, Stopped and INTERRUPTED live in context.py; they stay importable from here.
__all__ = ["INTERRUPTED", "DispatchTable", "StopReason", "Stopped", "dispatch"]


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


@dataclass(slots=True)
class _Progress:
    """How far the call got, kept as it goes: a cancelled call's outcome is built from it."""

    route: Route | None = None
    arguments: dict[str, Any] | None = None
    sent: Exchange | None = None
    """The last request put on the wire for the call (told by the connection)."""
    hooked: bool = False
    """The hooks were asked: they are owed the outcome."""

    def on_sent(self, exchange: Exchange) -> None:
        self.sent = exchange


async def dispatch(
    table: DispatchTable, call: FunctionCall, context: CallContext | None = None
) -> CallOutcome:
    """Run one call to its outcome (``context``: see ``CallContext``; None: nobody is asked,
    the servers' time limits, no hooks). Cancelled, the ``cancelled`` outcome is recorded,
    given to ``context.on_stopped`` and the hooks, and the cancellation goes on."""
    context = context or CallContext()
    started = time.monotonic()
    progress = _Progress()
    try:
        outcome = await _dispatch(table, call, context, progress)
    except asyncio.CancelledError:
        stopped = _cancelled(table, call, progress, context.stop_text(), started)
        table.events.emit(CallOutcomeEvent(call_id=call.call_id or None, outcome=stopped.to_record()))
        if context.on_stopped is not None:
            context.on_stopped(stopped)
        if progress.hooked:
            await after_call(call, context, stopped, table.events)
        raise
    if table.events.active:  # the record is built only for someone who listens
        table.events.emit(CallOutcomeEvent(call_id=call.call_id or None, outcome=outcome.to_record()))
    if progress.hooked:
        await after_call(call, context, outcome, table.events)
    return outcome


def _cancelled(
    table: DispatchTable, call: FunctionCall, progress: _Progress, why: str, started: float
) -> CallOutcome:
    """The outcome of a call stopped midway: where it got to, and why it stopped; a call whose
    answer had already arrived when the stop came ran, and its outcome says how it ended."""
    route, sent, value = progress.route, progress.sent, progress.arguments
    connection = table.connections.get(route.server) if route is not None else None
    stopped = Verdict(status="cancelled", message=why)
    if route is None or connection is None or sent is None:
        where = CallRoute(server=route.server, tool=route.tool) if route is not None else CallRoute()
        return CallOutcome(call=call, route=where, arguments=value, verdict=stopped,
                           elapsed=time.monotonic() - started)
    if sent.response is not None:  # the answer had arrived as the stop came: the call ran, say how
        return outcome_from_exchange(sent, call=call, route=routed(route, connection.number), arguments=value,
                                     output_schema=route.output_schema)
    return CallOutcome(call=call, route=routed(route, connection.number), arguments=value, verdict=stopped,
                       exchange=CallExchange(mcp_id=sent.mcp_id, request=sent.request),
                       elapsed=time.monotonic() - started)


async def _dispatch(
    table: DispatchTable, call: FunctionCall, context: CallContext, progress: _Progress
) -> CallOutcome:
    """The call's stages; ``progress`` grows as they pass."""
    parsed = _parse(table.events, call)
    route = progress.route = table.router.resolve(call.alias)
    if route is not None:
        if table.events.active:
            table.events.emit(CallRouted(call_id=call.call_id or None, alias=call.alias, server=route.server,
                                         tool=route.tool, digest=route.digest))
        context.server, context.tool = route.server, route.tool
    if context.hooks:
        progress.hooked = True
        refused = await before_call(call, context)
        if isinstance(refused, Refusal):
            return _unsent(call, route, "refused_by_hook", refused.reason, refused_by=refused.by)
        if refused is not None:
            return _unsent(call, route, "refused_by_hook", refused)
    if route is None:
        return _unsent(call, None, "unknown_tool", unknown_tool_message(call.alias, table.router.aliases))
    if isinstance(parsed, ArgumentError):
        return _unsent(call, route, "invalid_arguments", parsed.message)
    value = strip_optional_nulls(parsed, route.rule) if call.alias in table.strict_aliases else parsed
    progress.arguments = value
    problem = table.checker.validate(call.alias, route.rule, value)
    if problem is not None:
        return _unsent(call, route, "invalid_arguments", problem.message, value)
    refusal = await _ask_consent(context.approve, route, value)
    if refusal is not None:
        return _unsent(call, route, "not_approved", refusal, value)
    connection = table.connections[route.server]
    if route.reads_resources:
        return await read_for_call(cast(ResourceReader, connection), route, value, call, context)
    return await call_tool(connection, route, value, call, context, on_sent=progress.on_sent)


def _unsent(
    call: FunctionCall, route: Route | None, status: OutcomeStatus, message: str,
    arguments: dict[str, Any] | None = None, *, refused_by: str | None = None,
) -> CallOutcome:
    """The outcome of a call that never left toolrelay."""
    where = CallRoute(server=route.server, tool=route.tool) if route is not None else CallRoute()
    verdict = Verdict(status=status, message=message, refused_by=refused_by)
    return CallOutcome(call=call, route=where, arguments=arguments, verdict=verdict)


def _parse(events: EventStream, call: FunctionCall) -> dict[str, Any] | ArgumentError:
    """The arguments as an object, or why not; recorded as ``CallParsed`` either way."""
    text = call.arguments_text
    parsed = ArgumentError(kind="json", message=call.problem) if call.problem else parse_arguments(text)
    if events.active:
        error = parsed.message if isinstance(parsed, ArgumentError) else None
        events.emit(CallParsed(
            call_id=call.call_id or None, alias=call.alias, arguments_text=text,
            arguments=None if error else parsed, error=error,
        ))
    return parsed


async def _ask_consent(approve: Approver | None, route: Route, value: dict[str, Any]) -> str | None:
    """The refusal, or None when the call may run (read-only tools are never asked about)."""
    if approve is None or route.read_only:
        return None
    return await approve(route, value)
