"""The chain for a person: each stage in the order a fault is traced, with its ids, values and state.

``explain(run, verdict)`` groups the run by turn; each call shows the seven links (model
response → parse → routing → server checks → feedback → correlation → next input) with
what was recorded there — call_id, alias → server/tool, MCP id, the arguments text and
the arguments object, the outcome, the feedback, the next request — and whether the link
holds. A broken link says what to check next, in that order. Turns with many calls show
one line per call and expand only the broken ones. ``walk`` is the short walk
``toolrelay demo`` prints for the read_text_file walk-through's one call.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from ..events import MCP_SERVER_REQUEST
from ..protocol.chat import DIALECT as CHAT_DIALECT
from ..protocol.responses import FUNCTION_CALL, FUNCTION_CALL_OUTPUT, MESSAGE, OUTPUT_TEXT
from ..relay.stages.additions import added_summary
from ..relay.stages.direct_call import DirectCall, DirectCallEnd
from ..relay.stages.endings import ending_sentence
from ..relay.stages.namespaces import function_tools_by_alias
from ..relay.stages.parse import ModelTurn
from ..relay.stages.result import status_words
from ..relay.stages.usage import usage_text
from .attachments import called_declarations, executed, no_call_text
from .compaction import compaction_lines
from .direct_call import is_direct_call
from .facts import RunFacts
from .jsonpath import excerpt, item_label
from .policy_checks import policy_note
from .policy_turns import turn_note
from .proxy_explain import explain_proxy
from .proxy_legs import is_proxy_run
from .record import CallTrace, ModelRound, RunRecord
from .searches import search_lines
from .streamed import StreamBySeq, early_start, inconsistency
from .task_trace import task_of
from .verdict import LINK_TITLES, LINKS, NEXT_STEP, Finding, Verdict, link_rank

__all__ = ["COMPACT_AFTER", "explain", "walk"]

COMPACT_AFTER: Final = 5
"""Turns with more calls than this list one line per call (broken calls stay expanded)."""
_MARK: Final = {"ok": "ok", "broken": "BROKEN", "none": "·"}
_DIRECT_LINKS: Final = ("parse", "routing", "server_check", "correlation")


@dataclass(slots=True)
class _Index:
    """Findings by call and link, by turn and link, and the rest (linear to build)."""

    by_call: dict[tuple[str, str], list[Finding]] = field(default_factory=dict)
    by_turn: dict[tuple[int, str], list[Finding]] = field(default_factory=dict)
    general: list[Finding] = field(default_factory=list)
    tool_messages: dict[int, dict[str, int]] = field(default_factory=dict)
    """By request turn: where each tool message is in its ``messages`` (the first of a
    tool_call_id), read once per request (``tool_message``)."""

    def tool_message(self, call: CallTrace, run: RunRecord, turn: int) -> int | None:
        """Where the tool message answering ``call`` is in request ``turn``'s ``messages``
        (a replayed run's messages grow with it: read once, not once per call)."""
        positions = self.tool_messages.get(turn)
        if positions is None:
            later = run.round(turn)
            messages = _list(later.raw_body.get("messages")) if later is not None else []
            positions = self.tool_messages[turn] = {}
            for position, message in enumerate(messages):
                if not isinstance(message, dict) or message.get("role") != "tool":
                    continue
                said = message.get("tool_call_id")
                if isinstance(said, str):  # a call's id is a string: nothing else is its
                    positions.setdefault(said, position)
        return positions.get(call.call_id)

    @classmethod
    def of(cls, findings: Iterable[Finding]) -> _Index:
        index = cls()
        for finding in findings:
            if finding.call_id is not None:
                index.by_call.setdefault((finding.call_id, finding.link), []).append(finding)
            if finding.turn is not None and finding.call_id is None:
                index.by_turn.setdefault((finding.turn, finding.link), []).append(finding)
            if finding.call_id is None and finding.turn is None:
                index.general.append(finding)
        return index


def _state(findings: list[Finding]) -> tuple[str, Finding | None]:
    broken = next((f for f in findings if not f.ok), None)
    if broken is not None:
        return "broken", broken
    return ("ok" if findings else "none"), None


def explain(run: RunRecord, verdict: Verdict, *, expand_all: bool = False) -> str:
    """The whole chain as text, grouped by turn."""
    if is_proxy_run(run):  # recorded by toolrelay proxy: both legs of each host request
        return explain_proxy(run, verdict)
    facts = RunFacts(run)
    index = _Index.of(verdict.findings)
    lines = _header(run)
    lines += _general(index.general)
    spans = _Spans(run)
    for current in run.rounds:
        lines += _turn(current, run, facts, index, spans, expand_all)
    if is_direct_call(run):  # toolrelay call --transcript: its one call, the links a call has without a model
        for call in run.calls:
            stages = [stage for stage in _stages(call, run, facts, index) if stage[0] in _DIRECT_LINKS]
            lines += ["", *_call_block(call, stages, spans)]
    lines += _footer(run, verdict)
    return "\n".join(lines) + "\n"


def _direct_ending(run: RunRecord, end: dict[str, Any]) -> str:
    """``refused by policy`` (a refusal in the user's words), else the recorded status."""
    status = str(end.get("status"))
    outcome = next((call.outcome for call in run.calls if call.outcome), None) or {}
    return status_words(status, outcome.get("refused_by")) if status == "refused_by_hook" else status


def _header(run: RunRecord) -> list[str]:
    asked = next((e for e in run.events if e.get("kind") == DirectCall.kind), None)
    if asked is not None:  # toolrelay call --transcript: one call, no model
        end = next((e for e in run.events if e.get("kind") == DirectCallEnd.kind), None)
        ending = f"ended {_direct_ending(run, end)}" if end else "not ended (no direct_call_end)"
        return [f"call {asked.get('alias')} {excerpt(asked.get('arguments_text'), 80)} (toolrelay call, no "
                f"model) · {ending}", f"source: {run.source}", ""]
    start = run.run_start or {}
    ending = ending_sentence(str(run.status), len(run.rounds)) if run.run_end else "not ended (no run_end)"
    return [
        f"run {run.run_id} · model {start.get('model', '?')} · {run.context_mode} · "
        f"{'strict' if run.strict else 'non-strict'} · {ending}",
        f"source: {run.source}",
        f"task: {excerpt(start.get('task'), 100)}",
        *([f"request settings: {excerpt(start['settings'], 160)}"] if start.get("settings") else []),
        "",
    ]


def _general(findings: list[Finding]) -> list[str]:
    return [
        f"{_MARK['ok' if f.ok else 'broken']:>6}  {LINK_TITLES.get(f.link, f.link)}: {f.message}"
        for f in findings
    ]


def _turn(
    current: ModelRound, run: RunRecord, facts: RunFacts, index: _Index, spans: _Spans, expand_all: bool
) -> list[str]:
    body, answer = current.body, current.answer or {}
    previous = run.round(current.turn - 1)
    # this request's context findings show at the previous turn's calls, when it has any
    links = ("model_response",) if previous is not None and previous.calls else LINKS
    own = [f for link in links for f in index.by_turn.get((current.turn, link), [])]
    state, broken = _state(own)
    tools = _list(body.get("tools"))
    chained = (
        f", previous_response_id {body['previous_response_id']}" if "previous_response_id" in body else ""
    )
    said = (f"{len(_list(current.raw_body.get('messages')))} message(s)" if _is_chat(current)
            else f"{len(_list(body.get('input')))} input item(s)")
    lines = [
        "",
        f"turn {current.turn}  [{_MARK[state]}]",
        f"  request_{current.turn}: {said}, "
        f"{len(function_tools_by_alias(tools))} tool(s){added_summary(body.get('input'))}, "
        f"tool_choice {excerpt(body.get('tool_choice'))}{chained}",
        *[f"  {note}" for note in [turn_note(run, current.turn)] if note],
        f"  response_{current.turn}: {_response_line(current, answer)}",
        *compaction_lines(run, current),
        *search_lines(run, current),
        *_stream_lines(current),
    ]
    if broken is not None:
        lines += _problem(broken, "    ")
    compact = len(current.calls) > COMPACT_AFTER and not expand_all
    for call in current.calls:
        stages = _stages(call, run, facts, index)
        if compact and all(state != "broken" for _, state, _, _ in stages):
            lines.append(_call_line(call, stages))
        else:
            lines += _call_block(call, stages, spans)
    return lines


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object; an empty one otherwise (a hand-edited record)."""
    return value if isinstance(value, dict) else {}


def _response_line(current: ModelRound, answer: dict[str, Any]) -> str:
    if current.response is None:
        return "none (the run stopped while waiting)"
    if not answer:
        return f"HTTP {current.response.get('status')}: {excerpt(current.response.get('body'), 80)}"
    calls = len(current.calls) + sum(len(call.duplicates) for call in current.calls)
    texts = [
        block.get("text")
        for item in current.output()
        if isinstance(item, dict) and item.get("type") == MESSAGE
        for block in item.get("content") or []
        if isinstance(block, dict) and block.get("type") == OUTPUT_TEXT
    ]
    said = f", message {excerpt(texts[0], 70)}" if texts else ""
    read = current.read()
    tokens = usage_text(read.usage) if isinstance(read, ModelTurn) else ""
    said += f" · tokens: {tokens}" if tokens else ""
    if _is_chat(current):
        return f"{answer.get('id')} ({_status(current)}): {calls} tool call(s){said}"
    return f"{answer.get('id')} ({answer.get('status')}): {calls} function_call(s){said}"


def _is_chat(current: ModelRound | None) -> bool:
    return current is not None and current.dialect == CHAT_DIALECT


def _status(current: ModelRound) -> str | None:
    """The answer's status as its reader reads it (a chat completion has none of its own)."""
    read = current.read()
    return read.status if isinstance(read, ModelTurn) else None


def _tool_call_index(call: CallTrace, current: ModelRound | None) -> int:
    """Which of its answer's ``tool_calls`` a call is (a chat answer's name for it)."""
    output = current.output() if current is not None else []
    return sum(1 for item in output[:call.index]
               if isinstance(item, dict) and item.get("type") == FUNCTION_CALL)


def _stream_lines(current: ModelRound) -> list[str]:
    """When the streamed response's events came, and when each of its calls started: a call
    started during the stream ran while the model was still writing."""
    if not current.stream:
        return []
    start = _time(current.request)
    last = current.stream[-1]
    ending = _stream_ending(current)
    lines = [f"  stream_{current.turn}: {len(current.stream)} events over {_offset(last, start)}, {ending}"]
    closing = StreamBySeq(current)  # a turn's calls are many: each looks its event up
    for call in current.calls:
        first = call.parsed[0] if call.parsed else None
        if first is None:
            continue
        closed = closing.event(call.closed_seq)
        if early_start(call, current) is not None and closed is not None:
            when = (f"during the stream (its item closed at {_offset(closed, start)}, stream event "
                    f"{closed.get('index')}): it ran while the model was still writing")
        else:
            when = "after the response"
        lines.append(f"    {call.call_id} started at {_offset(first, start)}, {when}")
        contradicted = inconsistency(call)
        if contradicted is not None:
            lines.append(f"    the endpoint contradicted itself: {contradicted}; no output went back for it")
    return lines


def _stream_ending(current: ModelRound) -> str:
    """How the turn's stream ended, as the recorded response says."""
    answer = current.answer
    if answer is not None:
        return f"ended {_status(current) if _is_chat(current) else answer.get('status')}"
    return "broke off before its end" if current.response is None else "ended without a usable response"


def _time(event: dict[str, Any] | None) -> float | None:
    value = (event or {}).get("time")
    return float(value) if isinstance(value, int | float) else None


def _offset(event: dict[str, Any], start: float | None) -> str:
    at = _time(event)
    return "?" if at is None or start is None else f"{max(0.0, at - start):.2f} s"


def _stages(
    call: CallTrace, run: RunRecord, facts: RunFacts, index: _Index
) -> list[tuple[str, str, str, Finding | None]]:
    """(link, state, recorded values, broken finding) for each of the seven links."""
    values = _values(call, run, facts, index)
    stages = []
    for link in LINKS:
        found = list(index.by_call.get((call.call_id, link), []))
        if link == "model_response":  # one response per turn: its findings carry no call_id
            found += index.by_turn.get((call.turn, link), [])
        elif link in ("next_input", "correlation"):  # the next request's findings, likewise
            found += index.by_turn.get((call.turn + 1, link), [])
        state, broken = _state(found)
        stages.append((link, state, values[link], broken))
    return stages


def _values(call: CallTrace, run: RunRecord, facts: RunFacts, index: _Index) -> dict[str, str]:
    parsed, routed = call.first("parsed"), call.first("routed")
    request, response = call.first("mcp_requests"), call.first("mcp_responses")
    feedback = call.first("feedbacks")
    sent = facts.sent_after(call)
    mcp_id = request.get("message", {}).get("id") if request else None
    current = run.round(call.turn)
    response_id = (current.answer or {}).get("id") if current else None
    contradicted = inconsistency(call) is not None
    where = "its stream item; the final response contradicts it" if contradicted else (
        f"output[{call.index}] of {response_id}")
    values = {
        "model_response": f"function_call {call.alias} ({where}), arguments "
        f"text {excerpt(call.item.get('arguments'), 70)}",
        "parse": _parse_value(parsed),
        "routing": (
            f"{call.alias} → {routed.get('server')}/{routed.get('tool')}" + _policy_suffix(run, call)
            if routed
            else "unknown alias: sent to no server"
            if call.status == "unknown_tool"
            else "not routed"
        ),
        "server_check": _server_value(call, request, response),
        "feedback": (
            f"function_call_output {excerpt(feedback.get('item', {}).get('output'), 70)}"
            if feedback
            else "no output: the final response contradicts the call (an endpoint inconsistency)"
            if contradicted
            else "no output yet"
        ),
        "correlation": (f"{call.call_id} ↔ mcp id {mcp_id}" if request else f"{call.call_id} (no MCP id)")
        + (f"; output in request {sent[0][0]} input[{sent[0][1]}]" if sent else "; no output sent"),
        "next_input": (
            f"request {call.turn + 1} carries the output" if sent else "no later request (the run ended)"
        ),
    }
    if _is_chat(current):
        values.update(_chat_values(call, run, current, sent, mcp_id, contradicted, index))
    return values


def _chat_values(call: CallTrace, run: RunRecord, current: ModelRound | None, sent: list[Any], mcp_id: Any,
                 contradicted: bool, index: _Index) -> dict[str, str]:
    """The chat dialect's names for the same values: tool_calls[i], the tool message."""
    response_id = (current.answer or {}).get("id") if current else None
    where = "its stream chunks; the final completion contradicts it" if contradicted else (
        f"of {response_id}")
    feedback = call.first("feedbacks")
    position = index.tool_message(call, run, sent[0][0]) if sent else None
    carried = (f"; tool message in request {sent[0][0]} messages[{position}]" if sent
               else "; no tool message sent")
    values = {
        "model_response": f"tool_calls[{_tool_call_index(call, current)}] {call.alias} ({where}), id "
        f"{call.call_id}, arguments text {excerpt(call.item.get('arguments'), 70)}",
        "correlation": (f"tool_calls[].id {call.call_id} ↔ tool_call_id ↔ mcp id {mcp_id}"
                        if mcp_id is not None else f"{call.call_id} (no MCP id)") + carried,
        "next_input": (f"request {call.turn + 1} carries the assistant message and the tool message" if sent
                       else "no later request (the run ended)"),
    }
    if feedback:
        values["feedback"] = f"tool message {excerpt(feedback.get('item', {}).get('output'), 70)}"
    return values


def _policy_suffix(run: RunRecord, call: CallTrace) -> str:
    """``; policy: denied by policy rule #2 of policy.json`` when the policy decided the call."""
    note = policy_note(run, call)
    return f"; {note}" if note else ""


def _parse_value(parsed: dict[str, Any] | None) -> str:
    if parsed is None:
        return "not parsed"
    if parsed.get("error") is not None:
        return f"refused: {excerpt(parsed.get('error'), 80)}"
    return f"object {excerpt(parsed.get('arguments'), 70)}"


def _server_value(call: CallTrace, request: dict[str, Any] | None, response: dict[str, Any] | None) -> str:
    outcome = call.outcome or {}
    status = outcome.get("status", "no outcome")
    if request is None:
        return f"not sent ({status_words(str(status), outcome.get('refused_by'))})"
    message = request.get("message", {})
    params = message.get("params") or {}
    sent = (f"uri {excerpt(params.get('uri'), 60)}" if message.get("method") == "resources/read"
            else f"arguments object {excerpt(params.get('arguments'), 60)}")
    answered = "answered" if response is not None else "no answer"
    failure = f": {excerpt(outcome.get('message'), 60)}" if outcome.get("message") else ""
    return (
        f"{message.get('method')} mcp id {message.get('id')} on {request.get('server')} (connection "
        f"{request.get('connection')}), {sent}; {answered}, {status}{failure}{_tasked(call)}{_asked(call)}"
        f"{_reported(call)}"
    )


def _tasked(call: CallTrace) -> str:
    """`` · as task 318e844b… working → completed → result`` for a call run as a task."""
    trace = task_of(call)
    return f" · as {trace.summary()}" if trace is not None else ""


def _asked(call: CallTrace) -> str:
    """What the server asked toolrelay during the call (sampling, elicitation, roots...)."""
    asked = [f"{e.get('method')} {json.dumps(e.get('mcp_id'))}" for e in call.server_requests
             if e["kind"] == MCP_SERVER_REQUEST]
    return f"; the server asked {', '.join(asked)} during it" if asked else ""


def _reported(call: CallTrace) -> str:
    """How much the server reported during the call (progress, log messages)."""
    methods = [e.get("method") for e in call.mcp_other if e.get("direction") == "in"]
    counted = [f"{methods.count(method)} {what}" for method, what in
               (("notifications/progress", "progress"), ("notifications/message", "log message(s)"))
               if method in methods]
    return f"; it reported {' and '.join(counted)}" if counted else ""


def _call_line(call: CallTrace, stages: list[tuple[str, str, str, Finding | None]]) -> str:
    reached = sum(1 for _, state, _, _ in stages if state == "ok")
    request = call.first("mcp_requests")
    mcp = f"mcp id {request.get('message', {}).get('id')}" if request else "no MCP id"
    return f"  [{reached}/7 ok] {call.call_id} {call.alias} · {mcp} · {call.status or 'no outcome'}"


class _Spans:
    """The ``call_span`` records of a traced run, by call_id and alias (a run's calls are
    many: each finds its own without walking every event)."""

    def __init__(self, run: RunRecord) -> None:
        self._by_call: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
        for event in run.of_kind("call_span"):
            self._by_call.setdefault((event.get("call_id"), event.get("alias")), []).append(event)

    def of(self, call: CallTrace) -> dict[str, Any] | None:
        """``call``'s span: its call_id and alias, after the response that asked for it (the first such)."""
        found = self._by_call.get((call.call_id, call.alias), ())
        return next((event for event in found if _whole_seq(event) > call.response_seq), None)


def _whole_seq(event: dict[str, Any]) -> int:
    seq = event.get("seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else -1


def _call_block(call: CallTrace, stages: list[tuple[str, str, str, Finding | None]],
                spans: _Spans) -> list[str]:
    lines = [f"  call {call.call_id}"]
    for number, (link, state, value, broken) in enumerate(stages, 1):
        lines.append(f"    {number} {LINK_TITLES[link]:<17} {_MARK[state]:<6} {value}")
        if broken is not None:
            lines += _problem(broken, "        ")
    span = spans.of(call)
    if span is not None:  # a traced run: where the call is in the trace (verify --otel holds them together)
        lines.append(f"    · span {span.get('span_id')} in trace {span.get('trace_id')}")
    for duplicate in call.duplicates:  # the same call_id again in this response: refused, not run
        said = "refused as a duplicate, not run" if duplicate.outcomes else "no refusal recorded"
        where = f"output[{duplicate.index}] {duplicate.alias}"
        lines.append(f"    · {where} reuses call_id {call.call_id}: {said}")
    return lines


def _problem(finding: Finding, pad: str) -> list[str]:
    return [f"{pad}✗ {finding.message}", f"{pad}  check next: {NEXT_STEP[finding.link]}"]


def _footer(run: RunRecord, verdict: Verdict) -> list[str]:
    lines = [""]
    final = run.run_end.get("final_text") if run.run_end else None
    if final is not None:
        lines.append(f"answer: {excerpt(final, 100)}")
    if verdict.broken is None:
        lines.append(f"verdict: every recorded link holds ({len(verdict.findings)} checks)")
    else:
        broken = verdict.broken
        lines.append(f"verdict: BROKEN at {broken.link} ({LINK_TITLES[broken.link]}): {broken.message}")
        lines.append("check, in this order:")
        lines += [
            f"  {n}. {LINK_TITLES[link]}: {NEXT_STEP[link]}"
            for n, link in enumerate(LINKS[link_rank(broken.link) :], 1)
        ]
    lines += [f"unfinished: {reason}" for reason in verdict.unfinished]
    return lines


def walk(run: RunRecord, verdict: Verdict) -> str:
    """The chain of the first executed call, one short line per stage."""
    calls = executed(run)
    if not calls:
        return f"{no_call_text(run)}: there is no chain to walk\n"
    call = calls[0]
    rows = _walk_rows(run, call)
    width = max(len(label) for label, _ in rows)
    lines = [f"{label:<{width}}  {value}" for label, value in rows]
    state = (
        "all 7 links hold" if verdict.ok else f"BROKEN at {verdict.broken.link if verdict.broken else '?'}"
    )
    lines.append(f"{'verify':<{width}}  {state}: {' → '.join(LINKS)}")
    return "\n".join(lines) + "\n"


def _walk_rows(run: RunRecord, call: CallTrace) -> list[tuple[str, str]]:
    routed, parsed = call.first("routed") or {}, call.first("parsed") or {}
    request = _dict(call.mcp_requests[0].get("message"))
    response = _dict((call.first("mcp_responses") or {}).get("message"))
    feedback = _dict((call.first("feedbacks") or {}).get("item"))
    first = run.rounds[call.turn - 1]
    target = f"{routed.get('server')}/{routed.get('tool')}"
    rows = [
        ("declaration", f"{call.alias} ← {target}: parameters {{{_rule(run, call)}}} "
                        "(a rule: types, no values)"),
        (f"request_{first.turn}", f"input {excerpt(first.body.get('input'), 70)}, "
                                  f"{len(function_tools_by_alias(first.body.get('tools')))} tool(s)"),
        (FUNCTION_CALL, f"{call.call_id}: {call.alias}, arguments (JSON text) "
                        f"{excerpt(call.item.get('arguments'))}"),
        ("parse", f"→ object {excerpt(parsed.get('arguments'))}"),
        ("route", f"{call.alias} → {target}"),
        ("MCP request", f"id {request.get('id')} tools/call, params.arguments (object) "
                        f"{excerpt(_dict(request.get('params')).get('arguments'))}"),
        ("MCP response", f"id {response.get('id')}: {_answer_shape(response)} → {call.status}"),
        (FUNCTION_CALL_OUTPUT, f"{feedback.get('call_id')} (same call_id): "
                               f"{excerpt(feedback.get('output'), 70)}"),
    ]
    later = run.round(call.turn + 1)
    if later is not None:
        items = _list(later.body.get("input"))
        shown = ", ".join(item_label(item) for item in items[:4]) + (", …" if len(items) > 4 else "")
        rows.append((f"request_{later.turn}", f"input: {shown}"))
    final = run.run_end.get("final_text") if run.run_end else None
    rows.append(("answer", excerpt(final, 80) if final is not None else "none (the run did not complete)"))
    return rows


def _answer_shape(response: dict[str, Any]) -> str:
    """What the server's answer holds: result content blocks (isError?) or a JSON-RPC error."""
    if "error" in response:
        return f"JSON-RPC error {_dict(response.get('error')).get('code')}"
    result = _dict(response.get("result"))
    blocks = [str(b.get("type")) for b in _list(result.get("content")) if isinstance(b, dict)]
    flag = ", isError: true" if result.get("isError") is True else ""
    return f"result.content [{', '.join(blocks)}]{flag}"


def _rule(run: RunRecord, call: CallTrace) -> str:
    """The called tool's parameters as ``name: type`` pairs (the rule, shown without values)."""
    declaration = next((d for d in called_declarations(run) if d["alias"] == call.alias), None)
    function_tool = _dict((declaration or {}).get("function_tool"))
    properties = _dict(_dict(function_tool.get("parameters")).get("properties"))
    return ", ".join(f"{name}: {_dict(schema).get('type')}" for name, schema in properties.items())
