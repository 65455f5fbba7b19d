"""Link 7, next input: declarations stay rules, and each request continues the last one.

Declarations: each ``declarations`` event is what ``relay.stages.declare.declare_tools`` derives
from the servers' recorded ``tools/list`` answers (rules come from rules, never from a
call's values), and every request offers the declarations in force — the same array
every turn unless a tools/list_changed (or a restart) rebuilt them in between; no tool
they record as withheld (the offer chain's) is among them.
Context: request 1 starts from the task; in replay mode request N+1's input is request
N's input, then response N's output items, unchanged and in order, then the outputs; in
chain mode ``previous_response_id`` names response N and the input holds only the
outputs, in the calls' order. A compaction item lets a replayed input start at it
(``compaction.py``: the items before it left out, never a call whose output is still
due). The answer's request comes after every feedback.
"""

from __future__ import annotations

from typing import Any

from ..events import FeedbackEvent
from ..protocol.mcp import INITIALIZE
from ..protocol.request_envelope import DISCOVER
from ..protocol.responses import FUNCTION_CALL_OUTPUT
from ..relay.stages.additions import ADDITIONAL_TOOLS, added_tools, keeps_prefix, offered_by_alias
from ..relay.stages.declare import declare_tools
from ..relay.stages.deferred import TOOL_SEARCH_OUTPUT, deferred_tools
from ..relay.stages.namespaces import function_tools_by_alias, namespace_description
from ..relay.stages.request import user_message
from .compaction import boundary_of, check_boundary, dangling_output
from .conversation import user_turn_starts
from .evidence import seqs_of
from .facts import RunFacts
from .jsonpath import excerpt, first_difference, item_label
from .record import ModelRound, RunRecord
from .resource_reads import is_reader, reader_declaration
from .verdict import Finding
from .walked import SEQS_IN_ORDER, kept

__all__ = ["check_answer_order", "check_context", "check_declarations"]


_OUTPUTS = (FUNCTION_CALL_OUTPUT, TOOL_SEARCH_OUTPUT)
_AFTER_CONTEXT = (*_OUTPUTS, ADDITIONAL_TOOLS)
"""The item types that may follow the carried context (a tuple: a type of the wrong kind is
compared, never hashed)."""
"""What may follow the carried context: a call's output, a client search's output."""


def _finding(ok: bool, message: str, check: str, turn: int | None, *events: dict[str, Any] | None) -> Finding:
    return Finding(link="next_input", ok=ok, message=message, check=check, turn=turn, seqs=seqs_of(*events))


def check_declarations(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """next_input: declarations derive from tools/list and are offered unchanged."""
    findings = [f for f in (_derived(catalog, run, facts) for catalog in run.catalogs) if f is not None]
    findings += [f for f in (_withheld_offered(catalog) for catalog in run.catalogs) if f is not None]
    previous: ModelRound | None = None
    for current in run.rounds:
        if current.request is not None:
            findings.append(_offered(current, previous, facts))
            previous = current
    return findings


def _derived(catalog: dict[str, Any], run: RunRecord, facts: RunFacts) -> Finding | None:
    routes = catalog.get("routes")
    if not isinstance(routes, dict):
        return None
    pairs = []
    readers: list[dict[str, Any]] = []
    for alias, (server, tool) in ((a, r) for a, r in routes.items() if isinstance(r, list) and len(r) == 2):
        listing = facts.listing_at(server, catalog["seq"])
        if listing is None:
            return None  # the listing is not in the transcript: nothing to derive from
        if is_reader(tool, listing.tools):
            readers.append(reader_declaration(run, alias, server, catalog["seq"], run.strict))
            continue
        if not isinstance(tool, str) or tool not in listing.tools:
            return _finding(
                False,
                f"the declarations ({catalog.get('reason')}) route to {server}/{tool}, but {server}'s "
                f"tools/list answer (seq {listing.seq}) lists no such tool: a declaration without its rule",
                "rules",
                None,
                catalog,
            )
        pairs.append((server, listing.tools[tool]))
    derived = _derive(catalog, pairs, run) + readers
    path = first_difference(derived, catalog.get("tools"))
    if path is None:
        return _finding(
            True,
            f"{len(function_tools_by_alias(derived))} declaration(s) ({catalog.get('reason')}) are what "
            "the servers' tools/list rules give: no call values in them",
            "rules",
            None,
            catalog,
        )
    return _finding(
        False,
        f"the declarations ({catalog.get('reason')}) are not what the servers' tools/list "
        f"rules give (differs at tools{_index(path)}): a rule must come from a rule",
        "rules",
        None,
        catalog,
    )


def _derive(
    catalog: dict[str, Any], pairs: list[tuple[str, Any]], run: RunRecord
) -> list[dict[str, Any]]:
    """The declarations ``declare_tools`` gives for ``pairs`` in the catalog's mode: namespaces
    when it records them (described from the servers' recorded handshakes), ``output_schema``
    when any recorded tool has one (``--structured-output auto``)."""
    namespaces = catalog.get("namespaces")
    recorded = catalog.get("tools")
    structured = any("output_schema" in tool for tool in function_tools_by_alias(recorded).values())
    if not isinstance(namespaces, dict) or not namespaces:
        return declare_tools(pairs, strict=run.strict, structured=structured).tools()
    descriptions = {server: _namespace_description(run, str(server), catalog["seq"])
                    for server in namespaces.values()}
    declared = declare_tools(pairs, strict=run.strict, declare="namespaces", descriptions=descriptions,
                             structured=structured)
    searching = catalog.get("tool_search")
    if isinstance(searching, dict) and searching.get("mode") in ("hosted", "client"):
        kept = set(searching.get("always_load") or [])  # --tool-search: deferred but for these
        return deferred_tools(declared, searching["mode"], lambda d: d.alias in kept)
    return declared.tools()


def _namespace_description(run: RunRecord, server: str, seq: int) -> str:
    """What the live catalog describes ``server``'s namespace with: its title and instructions
    from its last handshake answer (``initialize`` or ``server/discover``) before ``seq`` that
    succeeded (an era probe's refused twin, sent beside it, describes nothing)."""
    answers = [event for event in run.mcp if event.get("server") == server and event.get("seq", seq) < seq
               and event.get("method") in (INITIALIZE, DISCOVER) and event.get("direction") == "in"
               and isinstance(event.get("message", {}).get("result"), dict)]
    result = answers[-1].get("message", {}).get("result") if answers else None
    result = result if isinstance(result, dict) else {}
    info, instructions = result.get("serverInfo"), result.get("instructions")
    return namespace_description(server, info if isinstance(info, dict) else {},
                                 instructions if isinstance(instructions, str) else None)


def _withheld_offered(catalog: dict[str, Any]) -> Finding | None:
    """A tool the declarations record as withheld (``relay/offer.py``) is not among their routes."""
    routes = catalog.get("routes")
    pairs = routes.items() if isinstance(routes, dict) else ()
    offered = {tuple(route): alias for alias, route in pairs if isinstance(route, list)}
    withheld = catalog.get("withheld")
    for entry in withheld if isinstance(withheld, list) else []:
        alias = offered.get((entry.get("server"), entry.get("tool"))) if isinstance(entry, dict) else None
        if alias is not None:
            said = (f"the declarations ({catalog.get('reason')}) offer {alias} ({entry.get('server')}/"
                    f"{entry.get('tool')}), which they record as withheld ({entry.get('reason')}): "
                    "a withheld tool is never offered")
            return _finding(False, said, "withheld", None, catalog)
    return None


def _index(path: str) -> str:
    return path if path.startswith("[") else f".{path}"


def _offered(current: ModelRound, previous: ModelRound | None, facts: RunFacts) -> Finding:
    assert current.request is not None
    tools = current.body.get("tools", [])
    catalog = facts.catalog_at(current.request["seq"])
    if catalog is not None:
        expected, source = catalog.get("tools", []), f"the declarations in force (seq {catalog['seq']})"
    elif previous is not None:
        expected, source = previous.body.get("tools", []), f"request {previous.turn}"
    else:
        expected, source = tools, ""
    path = first_difference(expected, tools)
    if path is not None and catalog is not None and (kept := _kept(current, previous, expected)) is not None:
        return _finding(True, kept, "declarations", current.turn, current.request, catalog)
    if path is None:
        count = len(function_tools_by_alias(tools))
        said = f"request {current.turn} offers {_which(catalog, previous, facts)} ({count} tool(s))"
        return _finding(True, said, "declarations", current.turn, current.request, catalog)
    if previous is not None and previous.request is not None \
            and first_difference(previous.body.get("tools", []), tools) is not None \
            and facts.catalog_at(previous.request["seq"]) is catalog:
        said = (f"the declarations changed between request {previous.turn} and {current.turn} "
                f"(tools{_index(path)}) with no tools/list_changed recorded in between")
        return _finding(False, said, "declarations", current.turn, previous.request, current.request)
    said = f"request {current.turn}'s tools are not {source} (differs at tools{_index(path)})"
    return _finding(False, said + _held_value(tools, expected, facts), "declarations", current.turn,
                    current.request, catalog)


def _kept(current: ModelRound, previous: ModelRound | None, expected: Any) -> str | None:
    """What a request that keeps the previous request's namespaced or searching ``tools`` and
    offers the rest of the declarations in force with ``additional_tools`` items does (None:
    it does not: each declared tool must be offered as declared)."""
    tools, items = current.body.get("tools", []), current.body.get("input")
    if previous is None or not keeps_prefix(tools) or previous.body.get("tools") != tools \
            or not added_tools(items):
        return None
    offered = offered_by_alias(tools, items)
    wanted = function_tools_by_alias(expected)
    if any(offered.get(alias) != tool for alias, tool in wanted.items()):
        return None
    others = [t for t in expected if isinstance(t, dict) and t.get("type") not in ("namespace", "function")]
    if any(t not in tools and t not in added_tools(items) for t in others):
        return None
    gone = sorted(set(function_tools_by_alias(tools)) - set(wanted))
    left = f"; {', '.join(gone)} no longer listed (refused at routing)" if gone else ""
    return (f"request {current.turn} keeps request {previous.turn}'s tools and offers the declarations "
            f"in force with {len(added_tools(items))} tool(s) in additional_tools items{left}")


def _held_value(tools: Any, expected: Any, facts: RunFacts) -> str:
    """``: they hold a call's value ...`` when a changed declaration holds an argument value."""
    added = _strings(tools) - _strings(expected)
    for call in facts.run.calls:
        parsed = call.first("parsed")
        values = parsed.get("arguments") if parsed else None
        for value in values.values() if isinstance(values, dict) else []:
            if isinstance(value, str) and value in added:
                return (
                    f"; they hold {call.call_id}'s value {excerpt(value)}: "
                    "a declaration is a rule, never a value"
                )
    return ""


def _strings(value: Any) -> set[str]:
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            found.add(item)
    return found


def _which(catalog: dict[str, Any] | None, previous: ModelRound | None, facts: RunFacts) -> str:
    if previous is None or previous.request is None:
        return "the declarations"
    if catalog is not None and facts.catalog_at(previous.request["seq"]) is not catalog:
        reason = f"{catalog.get('reason')}, seq {catalog['seq']}"
        return f"the declarations rebuilt since request {previous.turn} ({reason})"
    return "the same declarations as the previous request"


def check_context(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """next_input: each request continues the previous one (replay or chain)."""
    findings: list[Finding] = []
    first = run.rounds[0] if run.rounds else None
    if first is not None and first.request is not None and run.run_start is not None:
        given = run.run_start.get("input")
        task = str(run.run_start.get("task"))
        findings.append(_first_input(first, task, given if isinstance(given, list) else None))
    continued = user_turn_starts(run)  # a conversation's next user turn: conversation.py judges it
    for current in run.rounds[1:]:
        previous = run.rounds[current.turn - 2]
        if current.request is None or previous.answer is None or current.turn in continued:
            continue
        if "previous_response_id" in current.body:
            findings.append(_chained(current, previous))
        elif run.context_mode == "chain" and isinstance(previous.answer.get("id"), str):
            findings.append(
                _finding(
                    False,
                    f"chain mode, but request {current.turn} has no previous_response_id",
                    "context",
                    current.turn,
                    current.request,
                )
            )
        else:
            findings.append(_replayed(current, previous))
    return findings


def _first_input(first: ModelRound, task: str, given: list[Any] | None) -> Finding:
    """Request 1's input is the task as one user message, or the recorded first input
    (a prompt's messages, attached resources) that run_start holds."""
    if given is None:
        expected, what = [user_message(task)], f"the task: {excerpt(task)}"
    else:
        expected, what = given, f"the recorded first input ({len(given)} item(s), {excerpt(task)})"
    path = first_difference(expected, first.body.get("input"))
    if path is None:
        return _finding(True, f"request 1 starts from {what}", "context", 1, first.request)
    said = f"request 1's input is not {what} (differs at input{_index(path)})"
    return _finding(False, said, "context", 1, first.request)


def _replayed(current: ModelRound, previous: ModelRound) -> Finding:
    given = previous.body.get("input")
    given = given if isinstance(given, list) else []
    prefix = given + previous.output()
    items = current.body.get("input")
    items = items if isinstance(items, list) else []
    where = f"request {current.turn}"
    problem = _prefix_problem(prefix, items, len(given), previous.turn, where)
    if problem is not None and (boundary := boundary_of(prefix, items, previous, len(given))) is not None:
        return check_boundary(current, previous, prefix, boundary,
                              lambda tail: _tail_problem(tail, previous, where))  # compaction.py
    if problem is None:
        calls = {call.call_id for call in previous.calls}  # carried in the prefix, unchanged
        problem = _tail_problem(items[len(prefix) :], previous, where) \
            or dangling_output(items, len(prefix), where, None, answering=calls)
    if problem is not None:
        return _finding(False, problem, "context", current.turn, previous.response, current.request)
    return _finding(
        True,
        f"{where} replays request {previous.turn}'s {len(prefix) - len(previous.output())} "
        f"item(s) and response {previous.turn}'s {len(previous.output())} output item(s) unchanged, "
        "in order, then the outputs",
        "context",
        current.turn,
        previous.response,
        current.request,
    )


def _origin(index: int, carried: int, turn: int) -> str:
    if index < carried:
        return f"input[{index}] of request {turn}"
    return f"output[{index - carried}] of response {turn}"


def _prefix_problem(prefix: list[Any], items: list[Any], carried: int, turn: int, where: str) -> str | None:
    # a rebuilt body shares the previous request's items (transcript/delta.py): the list
    # comparison, in C, takes each very item as equal without looking into it; an item equal
    # but not the same one is equal for the search below too
    if len(prefix) <= len(items) and prefix == items[:len(prefix)]:
        return None
    index = next((i for i, item in enumerate(prefix)
                  if i >= len(items) or (items[i] is not item and items[i] != item)), None)
    if index is None:
        return None
    wanted = prefix[index]
    origin = _origin(index, carried, turn)
    if wanted not in items:
        near = items[index] if index < len(items) else None
        changed = (
            isinstance(near, dict) and isinstance(wanted, dict) and item_label(near) == item_label(wanted)
        )
        if changed:
            path = first_difference(wanted, near)
            return f"{where} changed {item_label(wanted)} ({origin}) at input[{index}].{path}"
        return f"{where} dropped {item_label(wanted)} ({origin}): the context must carry it unchanged"
    return (
        f"{where} reordered the context: input[{index}] is {item_label(items[index])}, "
        f"where {item_label(wanted)} ({origin}) belongs"
    )


def _tail_problem(tail: list[Any], previous: ModelRound, where: str) -> str | None:
    strays = [item for item in tail
              if not (isinstance(item, dict) and item.get("type") in _AFTER_CONTEXT)]
    if strays:
        return f"{where} adds {item_label(strays[0])} after the carried context: only outputs may follow it"
    return _order_problem(tail, previous, where)


def _order_problem(outputs: list[Any], previous: ModelRound, where: str) -> str | None:
    order = {call.call_id: n for n, call in enumerate(previous.calls)}
    ranks = [
        order[str(i.get("call_id"))] for i in outputs if isinstance(i, dict) and i.get("call_id") in order
    ]
    if ranks != sorted(ranks):
        return (
            f"{where} reordered the outputs: they do not follow the order of response {previous.turn}'s calls"
        )
    return None


def _chained(current: ModelRound, previous: ModelRound) -> Finding:
    named = current.body.get("previous_response_id")
    response_id = previous.answer.get("id") if previous.answer else None
    where = f"request {current.turn}"
    items = current.body.get("input")
    if named != response_id:
        problem: str | None = (
            f"{where}'s previous_response_id is {named!r}, the previous response is {response_id!r}"
        )
    else:
        problem = _tail_problem(items if isinstance(items, list) else [], previous, where)
    if problem is not None:
        return _finding(False, problem, "context", current.turn, previous.response, current.request)
    return _finding(
        True,
        f"{where} continues {response_id} (previous_response_id) with the outputs of its "
        f"{len(previous.calls)} call(s), in order",
        "context",
        current.turn,
        current.request,
    )


def _none_after(run: RunRecord, facts: RunFacts, final: dict[str, Any]) -> bool:
    """Surely no feedback after the answer's request: the record's seqs run in order
    (check_event_order found, walked.py) and its last feedback event comes before it.
    False: it may have one, looked for call by call."""
    feedbacks = run.of_kind(FeedbackEvent.kind)
    return kept(facts, SEQS_IN_ORDER) is True and (not feedbacks or feedbacks[-1]["seq"] < final["seq"])


def check_answer_order(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """next_input: the answer's request was sent after every feedback."""
    if run.status != "completed" or not run.rounds or run.rounds[-1].request is None:
        return []
    final = run.rounds[-1].request
    late = [] if _none_after(run, facts, final) else [
        e for call in run.calls for e in call.feedbacks if e["seq"] > final["seq"]]
    if late:
        return [
            _finding(
                False,
                f"the answer's request (turn {run.rounds[-1].turn}) was sent before the feedback "
                f"of {late[0].get('call_id')}",
                "answer_order",
                run.rounds[-1].turn,
                final,
                late[0],
            )
        ]
    count = sum(len(call.feedbacks) for call in run.calls)
    return [
        _finding(
            True,
            f"the answer's request (turn {run.rounds[-1].turn}) follows all {count} feedback(s)",
            "answer_order",
            run.rounds[-1].turn,
            final,
        )
    ]
