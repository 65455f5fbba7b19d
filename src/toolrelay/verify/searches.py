"""Tool search (``--tool-search hosted|client``): each search answered once, calls only of
loaded tools, and no withheld tool ever loaded.

- pairs (correlation): each ``tool_search_call`` of response N has exactly one
  ``tool_search_output`` of its call_id, paired within the run and the turn, never by
  call_id alone: a hosted one (``execution: "server"``) after it in the same response,
  a client one among the items request N+1 adds after the carried context. A client
  search's output is the one its ``tool_search`` event records, and loads the tools the
  event's hits name.
- loads (routing): every tool a client search loads is offered by the declarations in
  force (the offer chain's: a tool they record as withheld, or do not route, is never
  loaded); every tool a hosted search loads is one the request declared deferred, as
  declared.
- calls (routing): while a request declares a ``tool_search`` tool, every function_call
  of its response names a tool declared loaded (no ``defer_loading``), or loaded before
  it (by an earlier search of the run, or a hosted search earlier in the same response);
  a call to a deferred tool never loaded is a broken link, unless toolrelay refused it
  (``refused_by_hook``: nothing was sent). Where its namespace sends it is the routing
  link's namespace check (``mcp_side.py``).
"""

from __future__ import annotations

from typing import Any

from ..events import ToolSearchEvent
from ..relay.stages.additions import offered_by_alias
from ..relay.stages.deferred import (
    TOOL_SEARCH,
    TOOL_SEARCH_CALL,
    TOOL_SEARCH_OUTPUT,
    declaration_summary,
    loaded_by_alias,
    search_item_text,
)
from ..relay.stages.namespaces import function_tools_by_alias
from .evidence import call_finding, seqs_of
from .facts import RunFacts
from .record import ModelRound, RunRecord
from .verdict import Finding

__all__ = ["check_search_calls", "check_search_pairs", "search_lines", "searched_runs"]

Event = dict[str, Any]


def searched_runs(run: RunRecord) -> bool:
    """Whether any request declared a ``tool_search`` tool or any turn searched."""
    return any(_declares_search(current) or _items(current.output(), TOOL_SEARCH_CALL)
               for current in run.rounds)


def _declares_search(current: ModelRound) -> bool:
    tools = current.body.get("tools")
    return isinstance(tools, list) and any(isinstance(t, dict) and t.get("type") == TOOL_SEARCH
                                           for t in tools)


def _items(items: Any, kind: str) -> list[tuple[int, dict[str, Any]]]:
    return [(i, item) for i, item in enumerate(items if isinstance(items, list) else [])
            if isinstance(item, dict) and item.get("type") == kind]


def _finding(ok: bool, message: str, check: str, turn: int | None, *events: Event | None,
             link: str = "correlation", call_id: str | None = None) -> Finding:
    return Finding(link=link, ok=ok, message=message, check=check, turn=turn, call_id=call_id,
                   seqs=seqs_of(*events))


# -- pairs and loads ------------------------------------------------------------------------


def check_search_pairs(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """correlation: one output per search call, in its turn; routing: what searches load."""
    answers = _search_events(run)
    findings: list[Finding] = []
    for current in run.rounds:
        output = current.output()
        for index, call in _items(output, TOOL_SEARCH_CALL):
            if call.get("execution") == "client":
                findings.extend(_client_pair(run, facts, current, call, answers))
            else:
                findings.extend(_hosted_pair(facts, current, index, call, output))
    for (turn, call_id), events in answers.items():
        answered = run.round(turn) if isinstance(turn, int) else None
        held = _items(answered.output(), TOOL_SEARCH_CALL) if answered is not None else []
        if not any(c.get("call_id") == call_id and c.get("execution") == "client" for _, c in held):
            findings.append(_finding(False, f"toolrelay answered a tool search {call_id} that response "
                                     f"{turn} does not hold", "tool_search", turn, *events, call_id=call_id))
    return findings


def _search_events(run: RunRecord) -> dict[tuple[Any, Any], list[Event]]:
    found: dict[tuple[Any, Any], list[Event]] = {}
    for event in run.of_kind(ToolSearchEvent.kind):
        found.setdefault((event.get("turn"), event.get("call_id")), []).append(event)
    return found


def _added_items(run: RunRecord, current: ModelRound, following: ModelRound) -> list[Any]:
    """What request N+1 adds after the context it carries (chain mode: its whole input)."""
    items = following.body.get("input")
    items = items if isinstance(items, list) else []
    if run.context_mode == "chain" and following.body.get("previous_response_id") is not None:
        return items
    given = current.body.get("input")
    carried = (len(given) if isinstance(given, list) else 0) + len(current.output())
    return items[carried:]


def _client_pair(run: RunRecord, facts: RunFacts, current: ModelRound, call: dict[str, Any],
                 answers: dict[tuple[Any, Any], list[Event]]) -> list[Finding]:
    call_id, turn = call.get("call_id"), current.turn
    following = run.round(turn + 1)
    where = f"client tool search {call_id} of response {turn}"
    recorded = answers.get((turn, call_id), [])
    if following is None or following.request is None:
        return []  # the run stopped before the next request: unfinished, not broken
    sent = [item for _, item in _items(_added_items(run, current, following), TOOL_SEARCH_OUTPUT)
            if item.get("call_id") == call_id]
    if len(sent) != 1:
        said = "no tool_search_output" if not sent else f"{len(sent)} tool_search_outputs"
        return [_finding(False, f"{where}: request {turn + 1} adds {said} with its call_id (exactly one "
                         "is owed)", "tool_search", turn, current.response, following.request,
                         call_id=call_id)]
    if len(recorded) != 1 or recorded[0].get("item") != sent[0]:
        said = "no tool_search event records" if not recorded else "the tool_search event does not record"
        return [_finding(False, f"{where}: {said} the output request {turn + 1} sent: what the model "
                         "was given is not what toolrelay's search found", "tool_search", turn, *recorded,
                         following.request, call_id=call_id)]
    event = recorded[0]
    loaded = list(function_tools_by_alias(sent[0].get("tools")))
    hits = [hit.get("alias") for hit in event.get("hits", []) if isinstance(hit, dict)]
    if sorted(loaded) != sorted(str(h) for h in hits):
        return [_finding(False, f"{where}: the output loads {', '.join(loaded) or 'nothing'}, the search "
                         f"found {', '.join(map(str, hits)) or 'nothing'}", "tool_search", turn, event,
                         following.request, call_id=call_id)]
    problem = _not_offered(facts, event, loaded)
    if problem is not None:
        return [_finding(False, f"{where}: {problem}", "tool_search", turn, event, link="routing",
                         call_id=call_id)]
    return [_finding(True, f"{where} ({event.get('query')!r}) is answered once, in request {turn + 1}, "
                     f"loading {len(loaded)} offered tool(s)", "tool_search", turn, event, following.request,
                     call_id=call_id)]


def _not_offered(facts: RunFacts, event: Event, loaded: list[str]) -> str | None:
    """Why a loaded alias is no offered tool of the declarations in force, or None."""
    catalog = facts.catalog_at(event["seq"])
    if catalog is None:
        return None
    found = catalog.get("routes")
    routes: dict[str, Any] = found if isinstance(found, dict) else {}
    withheld = {(w.get("server"), w.get("tool")) for w in catalog.get("withheld", []) if isinstance(w, dict)}
    for alias in loaded:
        route = routes.get(alias)
        if not isinstance(route, list) or len(route) != 2:
            return f"it loads {alias}, which the declarations in force do not offer"
        if tuple(route) in withheld:
            return f"it loads {alias}, which the offer chain withholds"
    return None


def _hosted_pair(facts: RunFacts, current: ModelRound, index: int, call: dict[str, Any],
                 output: list[Any]) -> list[Finding]:
    call_id, turn = call.get("call_id"), current.turn
    where = f"hosted tool search {call_id} at output[{index}] of response {turn}"
    answered = [(i, item) for i, item in _items(output, TOOL_SEARCH_OUTPUT)
                if item.get("call_id") == call_id and i > index]
    if len(answered) != 1:
        said = "no tool_search_output" if not answered else f"{len(answered)} tool_search_outputs"
        return [_finding(False, f"{where}: the response holds {said} after it with its call_id (exactly one)",
                         "tool_search", turn, current.response, call_id=call_id)]
    for alias, tool in function_tools_by_alias(answered[0][1].get("tools")).items():
        declared = facts.declared(turn, alias) or {}
        if not declared or {k: v for k, v in declared.items() if k != "defer_loading"} != tool:
            return [_finding(False, f"{where}: it loads {alias}, which request {turn} did not declare "
                             "deferred as loaded", "tool_search", turn, current.request, current.response,
                             link="routing", call_id=call_id)]
    return [_finding(True, f"{where} has its one output, loading tools request {turn} declared deferred",
                     "tool_search", turn, current.response, call_id=call_id)]


# -- calls of loaded tools ------------------------------------------------------------------


def check_search_calls(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """routing: under tool search, each call names a tool declared loaded or loaded before it."""
    findings: list[Finding] = []
    in_outputs: set[str] = set()  # loaded within the run's earlier responses (hosted searches)
    in_inputs: set[str] = set()  # by the client searches' outputs the requests carried
    for current in run.rounds:
        given = set(loaded_by_alias(facts.input_items(current, TOOL_SEARCH_OUTPUT)))  # read once: facts
        # chain mode sends only new items; a replayed input carries all that is still loaded
        # (a compaction leaves out the searches before it: additional_tools offers their tools)
        in_inputs = in_inputs | given if "previous_response_id" in current.body else given
        if _declares_search(current):
            findings.extend(_calls_loaded(run, current, in_outputs | in_inputs))
        in_outputs |= set(loaded_by_alias(current.output()))
    return findings


def _calls_loaded(run: RunRecord, current: ModelRound, loaded: set[str]) -> list[Finding]:
    tools = offered_by_alias(current.body.get("tools"), current.body.get("input"))
    output = current.output()
    findings = []
    for call in (c for c in run.calls if c.turn == current.turn):
        alias = call.alias
        before = set(loaded_by_alias(output[:call.index]))
        declared = tools.get(alias) if isinstance(alias, str) else None
        ready = (declared is not None and declared.get("defer_loading") is not True) or alias in loaded
        if ready or alias in before:
            how = "declared loaded" if ready and alias not in loaded else "loaded by a search before it"
            findings.append(call_finding(call, "routing", True, f"{alias} is {how}", "tool_search_load"))
        elif call.status == "refused_by_hook":
            findings.append(call_finding(call, "routing", True, f"{alias} was never loaded, and toolrelay "
                                         "refused the call: nothing was sent", "tool_search_load",
                                         *call.outcomes))
        else:
            what = ("it is declared deferred" if declared is not None
                    else f"request {current.turn} does not declare it")
            findings.append(call_finding(
                call, "routing", False, f"{alias} is called, but {what} and no search loaded it before the "
                "call: only a tool the model was given may be called", "tool_search_load", *call.routed))
    return findings


# -- explain ----------------------------------------------------------------------------------


def search_lines(run: RunRecord, current: ModelRound) -> list[str]:
    """``explain``'s lines for a turn of a searching run: what the request declared, each
    search item of the response, and what toolrelay's client searches loaded."""
    if not _declares_search(current):
        return []
    lines = [f"    declares {declaration_summary(current.body.get('tools'))}"]
    lines += [f"    {text}" for item in current.output() if (text := search_item_text(item)) is not None]
    answered = [event for (turn, _), found in _search_events(run).items() if turn == current.turn
                for event in found]
    for event in answered:
        hits = ", ".join(str(hit.get("alias")) for hit in event.get("hits", []) if isinstance(hit, dict))
        lines.append(f"    toolrelay searched {event.get('query')!r} for {event.get('call_id')}: "
                     f"loads {hits or 'nothing'} (answered in request {current.turn + 1})")
    return lines
