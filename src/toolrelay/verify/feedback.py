"""Link 5, feedback: what the model was given is what the server's answer renders to.

For each call the outcome is classified again from the recorded answer by the live path's
own function, and the ``function_call_output`` it must give is rendered again by the one
rendering (``relay.stages.feedback.render_output``) with the run's recorded budgets (calls
whose results are equal by content share that classification and that text: each is
made once per distinct result, ``RunFacts.verdict`` and ``RunFacts.expected``). The feedback
event and every copy of the output sent to the model must be exactly that: the same
result, not re-run, not altered. A failure (``isError``, a JSON-RPC error, a dead channel)
fed back as a success is named as such.
"""

from __future__ import annotations

from typing import Any

from ..relay.stages.feedback import ERROR_PREFIX
from ..relay.stages.result import Verdict
from .evidence import call_finding
from .facts import RunFacts
from .jsonpath import excerpt, first_difference, json_equal
from .mcp_side import tagged_for_another
from .record import CallTrace, RunRecord
from .verdict import Finding

__all__ = ["check_feedback", "feedback_of_call", "rendered_said"]


def check_feedback(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """feedback: each output equals render_output of the recorded answer."""
    return facts.judged(feedback_of_call)


def feedback_of_call(call: CallTrace, facts: RunFacts) -> Finding | None:
    """check_feedback's finding about one call."""
    sent, feedbacks = facts.sent_after(call), call.feedbacks
    if not feedbacks and not sent:
        return None  # no output yet: unfinished, or not reached
    if not call.outcomes:
        return _bad(call, "an output was given, but no outcome was recorded for the call", *feedbacks)
    if tagged_for_another(call, facts) is not None:
        return None  # its MCP exchange is another call's: correlation names the swapped tags
    outcome, expected = facts.verdict(call), facts.expected(call)
    if outcome is None or expected is None:
        return None  # the claimed answer is missing: server_check names it
    recorded_outcome, answer = call.outcome, call.first("mcp_responses")
    status = recorded_outcome.get("status") if isinstance(recorded_outcome, dict) else None  # call.status
    if outcome.status != status:
        return _bad(call, f"call_outcome records {status}, but the recorded answer is {_class(outcome)}",
                    call.outcomes[0], answer)
    recorded = recorded_outcome or {}
    if outcome.status != "ok":
        for name, value in (("message", outcome.message), ("error_code", outcome.error_code)):
            if recorded.get(name) != value:
                return _bad(
                    call,
                    f"call_outcome records the {name} {excerpt(recorded.get(name))}, but the recorded answer "
                    f"gives {excerpt(value)}",
                    call.outcomes[0],
                    answer,
                )
    if len(feedbacks) > 1:
        return _bad(call, f"{len(feedbacks)} feedback events for one call", *feedbacks)
    if not feedbacks:
        return _bad(call, f"request {sent[0][0]} sends an output for it, but no feedback was recorded")
    given = feedbacks[0].get("item")
    same = json_equal(given, expected)
    problem = None if same else _differs(given, expected, outcome, "the feedback event")
    if problem is not None:
        return _bad(call, problem, feedbacks[0], answer)
    checked = {id(given)}  # that very item in a request (format 2 shares it) is render_output's: judged
    for turn, index, item in sent:
        if id(item) in checked:
            continue  # the same item carried on (a delta-recorded transcript shares it): judged once
        checked.add(id(item))
        if json_equal(item, given):
            continue  # a copy of the feedback event's item (whole bodies), which is render_output's
        if facts.swapped_with(call, item) is not None:
            continue  # another call's output under this call_id: correlation names it
        problem = _differs(item, expected, outcome, f"request {turn} input[{index}]")
        if problem is not None:
            return _bad(call, problem, answer, _request_event(facts, turn))
    copies = len(sent)
    return call_finding(call, "feedback", True, lambda: rendered_said(call, outcome, expected, copies),
                        "rendering", answer, feedbacks[0])


def rendered_said(call: CallTrace, outcome: Verdict, expected: dict[str, Any], copies: int) -> str:
    """The words of the finding that the output (and its ``copies`` in requests) is what
    render_output gives."""
    return _ok_message(outcome, expected, copies) + _refusals_note(call)


def _request_event(facts: RunFacts, turn: int) -> dict[str, Any] | None:
    current = facts.run.round(turn)
    return current.request if current is not None else None


def _bad(call: CallTrace, message: str, *events: dict[str, Any] | None) -> Finding:
    return call_finding(call, "feedback", False, f"{call.call_id}: {message}", "rendering", *events)


def _class(outcome: Verdict) -> str:
    if outcome.status == "tool_error":
        return "a tool error (isError: true)"
    if outcome.status == "protocol_error":
        return f"a protocol error ({outcome.message})"
    if outcome.status == "ok":
        return "a success (no isError)"
    return outcome.status.replace("_", " ")


def _differs(actual: Any, expected: dict[str, Any], outcome: Verdict, where: str) -> str | None:
    path = first_difference(expected, actual)
    if path is None:
        return None
    given = actual.get("output") if isinstance(actual, dict) else actual
    if outcome.status != "ok" and not _reads_as_failure(given):
        return (
            f"{where} feeds a failure ({_class(outcome)}) back as success: "
            f'{excerpt(given)} has no "{ERROR_PREFIX}…): " marker'
        )
    return (
        f"{where} holds {excerpt(given)}; render_output gives {excerpt(expected.get('output'))} for the "
        f"recorded answer, {_class(outcome)} (differs at {path})"
    )


def _reads_as_failure(output: Any) -> bool:
    if isinstance(output, str):
        return output.startswith(ERROR_PREFIX)
    if isinstance(output, list) and output and isinstance(output[0], dict):
        return str(output[0].get("text", "")).startswith(ERROR_PREFIX)
    return False


def _refusals_note(call: CallTrace) -> str:
    refused = sum(1 for duplicate in call.duplicates if duplicate.outcomes)
    return f"; it carries the refusal of {refused} duplicate(s) of its call_id" if refused else ""


def _ok_message(outcome: Verdict, expected: dict[str, Any], copies: int) -> str:
    output = expected.get("output")
    size = f"{len(output)} characters" if isinstance(output, str) else f"{len(output or [])} parts"
    sent = f"sent {copies} time(s)" if copies else "not sent to the model (the run ended)"
    if outcome.status == "ok":
        return f"the output is the tool's own result ({size}, as render_output gives it), {sent}"
    return f"the output keeps the failure ({_class(outcome)}), {sent}: {excerpt(output)}"
