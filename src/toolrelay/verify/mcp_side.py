"""Links 3 and 4: where each call was routed, and what its server answered.

``routing``: the alias resolved to the (server, original tool) the declarations' routes
name; the tools/call went to that server with that name, and its ``params.arguments``
is an object equal to the parsed value (after the strict-mode null-stripping, with the
tool's rule from the recorded tools/list, for tools declared strict). ``server_check``:
a call recorded as answered (ok, tool error, protocol error) has exactly one tools/call
and one answer (in 2026-07-28, one chain of them: ``input_rounds.py``); a call that
never left toolrelay (invalid arguments, unknown tool, not approved) has none; a
transport failure has no answer. A plausible JSON object is not an execution: only a
recorded exchange shows that a server ran the tool.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ..protocol.exchange import input_required
from ..protocol.mcp import READ_RESOURCE
from ..relay.stages.optional_nulls import strip_optional_nulls
from ..relay.stages.result import Verdict
from .evidence import call_finding
from .facts import RunFacts
from .input_rounds import chain_problem, rounds_said
from .jsonpath import excerpt, first_difference, json_equal
from .outcomes import ANSWERED, NEVER_SENT, MalformedAnswer
from .record import CallTrace, RunRecord
from .task_trace import answer_of
from .verdict import Finding

__all__ = [
    "answered_said", "check_routing", "check_server", "route_of_call", "routed_said", "server_of_call",
    "tagged_for_another",
]


def check_routing(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """routing: alias → (server, tool) as declared, arguments unchanged on the way."""
    return facts.judged(route_of_call)


def route_of_call(call: CallTrace, facts: RunFacts) -> Finding | None:
    """check_routing's finding about one call."""
    if not call.routed:
        return _not_routed(call, facts)
    routed = call.routed[0]
    target = f"{routed.get('server')}/{routed.get('tool')}"
    problem = _route_problem(call, routed, facts)
    request = call.mcp_requests[0] if call.mcp_requests else None
    owner = None
    if problem is None and request is not None:
        problem = _request_problem(call, routed, request, facts)
        owner = tagged_for_another(call, facts) if problem is not None else None
    if problem is None:  # its own arguments went out: no swap to look for later (verify's speed)
        facts.tag_owners.setdefault(id(call), None)
    if owner is not None and request is not None:  # the route held; the call_id tag is wrong
        message = (
            f"{call.alias} → {target}; tools/call mcp id {request['message'].get('id')} carries the "
            f"arguments of {owner.call_id}: its call_id tag is checked under correlation"
        )
        return call_finding(call, "routing", True, message, "route", routed, request)
    if problem is not None:
        return call_finding(call, "routing", False, f"{call.call_id}: {problem}", "route", routed, request)
    if request is None:
        return call_finding(
            call, "routing", True, f"{call.alias} → {target} (not sent: {call.status})", "route", routed
        )
    message = request["message"]  # the words are made when shown (verdict.Finding)
    return call_finding(call, "routing", True, lambda: routed_said(call, routed, message), "route", routed,
                        request)


def routed_said(call: CallTrace, routed: dict[str, Any], message: dict[str, Any]) -> str:
    """The words of the finding that the call went where its alias routes (``message``: its
    tools/call), with its own arguments."""
    return (f"{call.alias} → {routed.get('server')}/{routed.get('tool')}; {message.get('method')} mcp id "
            f"{message.get('id')} carries the values of the arguments text")


def _not_routed(call: CallTrace, facts: RunFacts) -> Finding | None:
    if call.mcp_requests:
        return call_finding(
            call,
            "routing",
            False,
            f"{call.call_id}: a tools/call was sent with no routing decision recorded",
            "route",
            call.mcp_requests[0],
        )
    if call.status != "unknown_tool":
        return None
    outcome_event = call.outcomes[0]
    catalog = facts.catalog_at(outcome_event["seq"])
    routes = catalog.get("routes", {}) if catalog else {}
    if call.alias in routes:
        server, tool = routes[call.alias]
        return call_finding(
            call,
            "routing",
            False,
            f"{call.call_id}: {call.alias} routes to {server}/{tool}, "
            "yet the call was reported as an unknown tool",
            "route",
            outcome_event,
            catalog,
        )
    return call_finding(
        call,
        "routing",
        True,
        f"{call.alias} is not a declared alias: reported as an unknown tool, sent to no server",
        "route",
        outcome_event,
    )


def _route_problem(call: CallTrace, routed: dict[str, Any], facts: RunFacts) -> str | None:
    if len(call.routed) > 1:
        return f"routed {len(call.routed)} times"
    alias = call.alias
    if routed.get("alias") != alias:
        return f"call_routed names alias {routed.get('alias')!r}, the model called {alias!r}"
    outcome = call.outcome
    if isinstance(outcome, dict) and outcome.get("status") == "unknown_tool":  # call.status
        return "routed, yet reported as an unknown tool"
    catalog = facts.catalog_at(routed["seq"])
    declared = catalog.get("routes", {}).get(alias) if catalog else None
    chosen = [routed.get("server"), routed.get("tool")]
    if catalog is not None and declared != chosen:
        return (
            f"the declarations route {alias} to {_target(declared)}, the call went to {_target(chosen)}"
        )
    return (_undeclared(call, facts) or _namespace_problem(call, routed, catalog)
            or _outcome_names(alias, outcome, chosen))


def _undeclared(call: CallTrace, facts: RunFacts) -> str | None:
    """A call runs only a tool its turn's request declared."""
    if not facts.lists_tools(call.turn):
        return None
    if facts.declared(call.turn, call.alias) is not None or call.status == "refused_by_hook":
        return None  # refused before it ran (a tool no search loaded, say): nothing was sent
    return f"{call.alias} ran, but request {call.turn} declared no such tool: only a declared tool runs"


def _namespace_problem(call: CallTrace, routed: dict[str, Any], catalog: dict[str, Any] | None) -> str | None:
    """A namespaced call lands on the server its namespace stands for."""
    namespace = call.item.get("namespace")
    if not isinstance(namespace, str) or catalog is None:
        return None
    spaces = catalog.get("namespaces")
    server = spaces.get(namespace) if isinstance(spaces, dict) else None
    if server == routed.get("server"):
        return None
    named = f"server {server}" if server is not None else "no server"
    return (f"namespace {namespace} stands for {named} in the declarations, yet the call went to "
            f"server {routed.get('server')}")


def _outcome_names(alias: Any, outcome: dict[str, Any] | None, chosen: list[Any]) -> str | None:
    """The call_outcome (``outcome``) must name the alias the model called and the route it
    took (``chosen``: the routed server and tool)."""
    if outcome is None:
        return None  # no outcome yet: the run stopped first
    if outcome.get("alias") != alias:
        return f"call_outcome names alias {outcome.get('alias')!r}, the model called {alias!r}"
    said = [outcome.get("server"), outcome.get("tool")]
    if said != chosen:
        return f"call_outcome names {_target(said)}, the call was routed to {_target(chosen)}"
    return None


def _target(pair: Any) -> str:
    return "/".join(str(p) for p in pair) if isinstance(pair, list) else "nowhere"


def _request_problem(
    call: CallTrace, routed: dict[str, Any], request: dict[str, Any], facts: RunFacts
) -> str | None:
    message = request.get("message") or {}
    params = message.get("params")
    mcp_id = message.get("id")
    if request.get("server") != routed.get("server"):
        went = request.get("server")
        return f"tools/call mcp id {mcp_id} went to server {went}, routed to {routed.get('server')}"
    if message.get("method") == READ_RESOURCE:
        return _read_problem(call, routed, params, mcp_id)
    if not isinstance(params, dict) or params.get("name") != routed.get("tool"):
        name = params.get("name") if isinstance(params, dict) else None
        original = routed.get("tool")
        return f"tools/call mcp id {mcp_id} names tool {name!r}, the route's original name is {original!r}"
    arguments = params.get("arguments")
    if not isinstance(arguments, dict):
        return f"params.arguments of mcp id {mcp_id} is {excerpt(arguments)}, not an object"
    expected = _expected_arguments(call, routed, request, facts)
    if expected is not None and not json_equal(arguments, expected):
        where = first_difference(expected, arguments)
        return (
            f"params.arguments of mcp id {mcp_id}, {excerpt(arguments)}, is not the parsed arguments text "
            f"{excerpt(expected)} (differs at {where})"
        )
    return None


def _read_problem(call: CallTrace, routed: dict[str, Any], params: Any, mcp_id: Any) -> str | None:
    """A resources/read standing for a call: routed to the reader, the URI the model gave."""
    if routed.get("tool") != READ_RESOURCE:
        return f"resources/read mcp id {mcp_id} stands for a call routed to tool {routed.get('tool')!r}"
    parsed = call.first("parsed") or {}
    arguments = parsed.get("arguments")
    expected = arguments.get("uri") if isinstance(arguments, dict) else None
    uri = params.get("uri") if isinstance(params, dict) else None
    if uri != expected:
        return f"resources/read mcp id {mcp_id} reads {excerpt(uri)}, the model asked for {excerpt(expected)}"
    return None


def tagged_for_another(call: CallTrace, facts: RunFacts) -> CallTrace | None:
    """The other call of the same response whose tools/call ``call``'s MCP events hold, and
    which holds ``call``'s: the sign of call_id tags swapped between MCP events."""
    key = id(call)
    if key not in facts.tag_owners:
        facts.tag_owners[key] = _swap_partner(call, facts)
    return facts.tag_owners[key]


def _swap_partner(call: CallTrace, facts: RunFacts) -> CallTrace | None:
    if _carries_arguments_of(call, call, facts) is not False:
        return None
    current = facts.run.round(call.turn)
    others = current.calls if current is not None else []
    return next(
        (
            other
            for other in others
            if other is not call
            and _carries_arguments_of(call, other, facts)
            and _carries_arguments_of(other, call, facts)
        ),
        None,
    )


def _carries_arguments_of(holder: CallTrace, owner: CallTrace, facts: RunFacts) -> bool | None:
    """Does ``holder``'s tools/call carry ``owner``'s parsed arguments? None: nothing to compare."""
    request = holder.first("mcp_requests")
    if request is None or not owner.routed:
        return None
    expected = _expected_arguments(owner, owner.routed[0], request, facts)
    if expected is None:
        return None
    params = request.get("message", {}).get("params")
    return isinstance(params, dict) and json_equal(params.get("arguments"), expected)


def _expected_arguments(
    call: CallTrace, routed: dict[str, Any], request: dict[str, Any], facts: RunFacts
) -> Any:
    """The parsed value, null-stripped with the original rule when the tool was declared strict."""
    parsed = call.parsed[0] if call.parsed else None
    if parsed is None or parsed.get("error") is not None:
        return None
    value = parsed.get("arguments")
    declaration = facts.declared(call.turn, call.alias)
    if declaration is not None and declaration.get("strict") is True:
        rule = facts.rule_of(routed.get("server"), routed.get("tool"), request["seq"])
        if rule is not None:
            value = strip_optional_nulls(value, rule)
    return value


def check_server(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """server_check: an execution is claimed only where an exchange was recorded."""
    return facts.judged(server_of_call)


def server_of_call(call: CallTrace, facts: RunFacts) -> Finding | None:
    """check_server's finding about one call."""
    requests, responses, outcomes = call.mcp_requests, call.mcp_responses, call.outcomes
    outcome_event = outcomes[0] if outcomes else None
    recorded = outcome_event.get("outcome") if outcome_event is not None else None
    status = recorded.get("status") if isinstance(recorded, dict) else None  # call.status, read once
    if len(requests) > 1:
        ids = ", ".join(str(r.get("message", {}).get("id")) for r in requests)
        return _bad(call, f"tools/call was sent {len(requests)} times (mcp ids {ids}): one call runs once",
                    *requests)
    if len(responses) > 1:
        return _bad(call, f"the tools/call was answered {len(responses)} times", *responses)
    broken = chain_problem(call)
    if broken is not None:
        return _bad(call, f"its input_required chain is broken: {broken[0]}", outcome_event, broken[1])
    if status is None:
        return None  # no outcome recorded: the run stopped first (unfinished)
    if status in NEVER_SENT:
        return _never_sent(call, status, outcome_event)
    if status in ANSWERED:
        return _answered(call, facts, outcome_event, status)
    answer = facts.answer(call)  # a task's creation is no answer: its tasks/result is
    if answer is not None:
        return _bad(call, f"recorded as {status}, yet the server answered the tools/call", outcome_event,
                    answer)
    recorded = call.outcome or {}
    kind = recorded.get("transport_kind") or status
    message = f"no answer ({kind}): {excerpt(recorded.get('message'), 80)}"
    return call_finding(call, "server_check", True, message, "exchange", outcome_event, *requests)


def _never_sent(call: CallTrace, status: str, outcome_event: dict[str, Any] | None) -> Finding:
    """A call that never left toolrelay must have no tools/call."""
    if call.mcp_requests:
        mcp_id = call.mcp_requests[0].get("message", {}).get("id")
        return _bad(call, f"recorded as {status} (never sent), yet tools/call mcp id {mcp_id} was sent",
                    outcome_event, call.mcp_requests[0])
    named = (call.outcome or {}).get("mcp_id")
    if named is not None:
        return _bad(call, f"recorded as {status} (never sent), yet its outcome names mcp id {named!r}",
                    outcome_event)
    why = excerpt(call.outcome.get("message") if call.outcome else "", 80)
    return call_finding(call, "server_check", True, f"{status}: not sent to any server ({why})", "exchange",
                        outcome_event)


def _bad(call: CallTrace, message: str, *events: dict[str, Any] | None) -> Finding:
    return call_finding(call, "server_check", False, f"{call.call_id}: {message}", "exchange", *events)


def _answered(call: CallTrace, facts: RunFacts, outcome_event: dict[str, Any] | None, status: str) -> Finding:
    requests, responses = call.mcp_requests, call.mcp_responses
    missing = "tools/call request" if not requests else "answer" if not responses else None
    trace = facts.task(call)
    if missing is None and answer_of(call, trace) is None:
        missing = "tasks/result answer"  # run as a task: created, but its result is not recorded
    if missing is not None:
        return _bad(
            call,
            f"recorded as {status}, but no {missing} is recorded for it: nothing shows "
            "that a server ran the tool",
            outcome_event,
            requests[0] if requests else None,
        )
    request, response = requests[0], responses[0]
    exchange = facts.exchange(call)
    if isinstance(exchange, MalformedAnswer) and status == "protocol_error":
        where = f"{request.get('server')} (connection {request.get('connection')})"
        said = f"answered mcp id {exchange.mcp_id} with a malformed answer (protocol error)"
        return call_finding(call, "server_check", True, f"{where} {said}: {excerpt(exchange.reason, 80)}",
                            "exchange", request, response)
    if isinstance(exchange, MalformedAnswer):
        return _bad(call, f"recorded as {status}, yet the answer to mcp id {exchange.mcp_id} is not a "
                          f"JSON-RPC response: {exchange.reason}", request, response)
    if isinstance(exchange, str) or exchange is None:
        return _bad(
            call,
            f"the answer to mcp id {request.get('message', {}).get('id')} is not a JSON-RPC "
            f"response: {exchange}",
            request,
            response,
        )
    outcome = facts.verdict(call)
    asks = outcome is not None and input_required(exchange) is not None
    ran = f" as {trace.summary()}" if trace is not None else rounds_said(call)
    words = partial(answered_said, request, exchange.mcp_id, ran, outcome, asks)  # made when shown
    return call_finding(call, "server_check", True, words, "exchange", request, response)


def answered_said(request: dict[str, Any], mcp_id: Any, ran: str, outcome: Verdict | None,
                  asks: bool) -> str:
    """The words of an answered call's finding (made when shown: verdict.Finding; ``ran``:
    how, after what)."""
    said = "?" if outcome is None else _said(outcome.status, outcome.message, outcome.error_code)
    if outcome is not None and asks:
        said = f"input_required still, given up on (protocol error): {excerpt(outcome.message, 80)}"
    where = f"{request.get('server')} (connection {request.get('connection')})"
    return f"{where} answered mcp id {mcp_id}{ran}: {said}"


def _said(status: str, message: str, code: int | None) -> str:
    if status == "ok":
        return "a result (ok)"
    if status == "tool_error":
        return f"isError: true (tool error): {excerpt(message, 80)}"
    if status == "invalid_output":
        return f"a result that breaks its outputSchema (invalid output): {excerpt(message, 80)}"
    if code is None:
        return f"a malformed result (protocol error): {excerpt(message, 80)}"
    return f"JSON-RPC error {code} (protocol error): {excerpt(message, 80)}"
