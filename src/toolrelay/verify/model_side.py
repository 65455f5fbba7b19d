"""Links 1 and 2: the model's responses, and how each call's arguments text was parsed.

``model_response``: every request has its response; an HTTP error or a body that is not
a Responses object may only end the run, never be followed by more turns; the answer
the run presents is the last response's own message text, and that response asked for
no more calls. ``parse``: each function_call was parsed once, from its arguments text
verbatim (a string: the model side holds text, never an object), into exactly what the
live parser (``relay.stages.arguments.parse_arguments``) gives for that text.
"""

from __future__ import annotations

from typing import Any

from ..events import CallParsed
from ..protocol.responses import FUNCTION_CALL, MESSAGE
from ..relay.stages.arguments import ArgumentError, parse_arguments
from ..relay.stages.dialects import UnknownDialect, known_reader, reader_for
from ..relay.stages.parse import ModelTurn
from ..relay.stages.strict import json_type_name
from .evidence import call_finding, seqs_of
from .facts import RunFacts
from .jsonpath import excerpt, json_equal
from .record import CallTrace, ModelRound, RunRecord, is_2xx
from .verdict import Finding

__all__ = ["check_answer", "check_parse", "check_rounds", "parse_of_call", "parsed_said"]

_ENDING_STATUSES = frozenset({"failed", "error", "aborted", "timeout", None})


def check_rounds(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """model_response: each turn's request was answered by a usable answer of its dialect
    (a Responses object), which verify has a reader for."""
    findings: list[Finding] = []
    last = len(run.rounds)
    for current in run.rounds:
        findings.extend(_round(current, current.turn == last, run, facts))
    return findings


def _broken(current: ModelRound, message: str, check: str) -> Finding:
    return Finding(
        link="model_response",
        ok=False,
        message=f"turn {current.turn}: {message}",
        check=check,
        turn=current.turn,
        seqs=seqs_of(current.request, current.response),
    )


def _round(current: ModelRound, is_last: bool, run: RunRecord, facts: RunFacts) -> list[Finding]:
    if current.request is None:
        return [_broken(current, "a model_response without a model_request", "request_answered")]
    if known_reader(current.dialect) is None:
        unknown = UnknownDialect(current.dialect)
        return [_broken(current, f"{unknown}, so its answer cannot be checked", "dialect")]
    if current.response is None:
        if is_last:
            return []  # the run stopped while waiting: unfinished, not contradicted
        return [
            _broken(
                current,
                f"the request has no response, yet turn {current.turn + 1} was sent",
                "request_answered",
            )
        ]
    ends_here = is_last and run.status in _ENDING_STATUSES
    status = current.response.get("status")
    if not is_2xx(status):
        if ends_here:
            return [_ok(current, f"the endpoint answered HTTP {status}; the run ended there")]
        return [_broken(current, f"the endpoint answered HTTP {status}, yet the run went on", "http_status")]
    turn = facts.turns.get(current.turn)
    if not isinstance(turn, ModelTurn):
        why, what = turn or "the body is not a JSON object", reader_for(current.dialect).answer
        if ends_here:
            return [_ok(current, f"the answer is not {what} ({why}); the run ended there")]
        return [_broken(current, f"the answer is not {what}: {why}", "responses_object")]
    if turn.malformed and not ends_here:
        return [_broken(current, "; ".join(turn.malformed) + ", yet the run went on", "call_items")]
    return [_ok(current, f"HTTP {status}, {turn.response_id} ({turn.status}): {_describe(turn.output)}")]


def _ok(current: ModelRound, message: str) -> Finding:
    return Finding(
        link="model_response",
        ok=True,
        message=f"turn {current.turn}: {message}",
        check="response",
        turn=current.turn,
        seqs=seqs_of(current.request, current.response),
    )


def _describe(output: list[Any]) -> str:
    parts: list[str] = []
    for item in output:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == FUNCTION_CALL:
            parts.append(f"function_call {item.get('call_id')} → {item.get('name')}")
        elif kind == MESSAGE:
            parts.append(MESSAGE)
        else:
            parts.append(str(kind))
    return ", ".join(parts) if parts else "no output items"


def check_answer(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """model_response: the answer the run presents is the model's, from a response without calls."""
    end = run.run_end
    if end is None or end.get("status") not in ("completed", "refused") or not run.rounds:
        return []
    last = run.rounds[-1]
    ok, message = _answer(end, last.turn, facts.turn(last.turn))
    return [
        Finding(link="model_response", ok=ok, check="answer", turn=last.turn, message=message,
                seqs=seqs_of(last.response, end))
    ]


def _answer(end: dict[str, Any], number: int, turn: ModelTurn | None) -> tuple[bool, str]:
    if turn is None:
        return False, f"the run ended {end.get('status')} but turn {number} has no usable response"
    if turn.calls:
        ids = ", ".join(c.call_id for c in turn.calls)
        return False, f"the run claims an answer, but the last response (turn {number}) asks for calls: {ids}"
    given = turn.refusal if end.get("status") == "refused" else (turn.text or "")
    if given != end.get("final_text"):
        return False, (
            f"the answer presented, {excerpt(end.get('final_text'))}, is not the text of "
            f"response {turn.response_id} (turn {number}): {excerpt(given)}"
        )
    response = f"{turn.response_id} (turn {number})"
    return True, f"the answer presented is the message text of {response}: {excerpt(given)}"


def check_parse(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """parse: every call's arguments text parsed once, verbatim, to the live parser's value."""
    findings: list[Finding | None] = [*facts.judged(parse_of_call)]
    findings.extend(
        Finding(
            link="parse",
            ok=False,
            check="parsed_call_exists",
            call_id=event.get("call_id"),
            seqs=seqs_of(event),
            message=f"call_parsed for {event.get('call_id')}, which no model "
            "response holds: a call was parsed that the model never made",
        )
        for event in run.orphans
        if event["kind"] == CallParsed.kind
    )
    return [finding for finding in findings if finding is not None]


def parse_of_call(call: CallTrace, facts: RunFacts) -> Finding | None:
    """check_parse's finding about one call."""
    later = call.routed or call.mcp_requests or call.outcomes or call.feedbacks or facts.sent_after(call)
    if not call.parsed:
        if not later:
            return None  # the run stopped before reading it: unfinished
        return call_finding(
            call,
            "parse",
            False,
            f"{call.call_id} was processed further but no call_parsed "
            "was recorded: parsed, called and succeeded are separate facts",
            "parsed_once",
        )
    parsed = call.parsed[0]
    if len(call.parsed) > 1 and call.duplicates:
        return None  # its repeats were run too: the duplicate check says so
    if len(call.parsed) > 1:
        return call_finding(
            call,
            "parse",
            False,
            f"{call.call_id} was parsed {len(call.parsed)} times",
            "parsed_once",
            *call.parsed,
        )
    problem = _parse_problem(call, parsed, facts)
    if problem is not None:
        return call_finding(call, "parse", False, f"{call.call_id}: {problem}", "arguments_text", parsed)
    return call_finding(call, "parse", True, lambda: parsed_said(call, parsed), "arguments_text", parsed)


def parsed_said(call: CallTrace, parsed: dict[str, Any]) -> str:
    """The words of the finding that the call's arguments text was parsed as recorded."""
    if parsed.get("error") is not None:
        return (f"{call.call_id}: arguments text {excerpt(parsed.get('arguments_text'))} was refused: "
                f"{parsed.get('error')}")
    return (f"{call.call_id}: arguments text {excerpt(parsed.get('arguments_text'))} parsed to "
            f"{excerpt(parsed.get('arguments'))}")


def _parse_problem(call: CallTrace, parsed: dict[str, Any], facts: RunFacts) -> str | None:
    function_call = facts.function_call(call)
    if function_call is None:
        return "the live reader finds no such function_call in the response"
    if parsed.get("alias") != function_call.alias:
        return f"call_parsed names {parsed.get('alias')!r}, the model called {function_call.alias!r}"
    sent, error = call.item.get("arguments"), parsed.get("error")
    if not isinstance(sent, str) and error is None:
        return (
            f"the model's arguments is a JSON {json_type_name(sent)}, not JSON text (a string), "
            f"yet call_parsed records text {excerpt(parsed.get('arguments_text'))} parsed without error"
        )
    text = function_call.arguments_text
    if parsed.get("arguments_text") != text:
        return (
            f"call_parsed records arguments text {excerpt(parsed.get('arguments_text'))}, the model "
            f"sent {excerpt(text)}"
        )
    expected: dict[str, Any] | ArgumentError = (
        ArgumentError(kind="json", message=function_call.problem)
        if function_call.problem
        else parse_arguments(text)
    )
    if isinstance(expected, ArgumentError):
        if error != expected.message:
            return (
                f"the text does not parse ({expected.message}), but call_parsed records "
                f"{excerpt(parsed.get('arguments'))} (error {error!r})"
            )
        return None
    if error is not None or not json_equal(parsed.get("arguments"), expected):
        return (
            f"the text parses to {excerpt(expected)}, call_parsed records {excerpt(parsed.get('arguments'))}"
            f" (error {error!r})"
        )
    return None
