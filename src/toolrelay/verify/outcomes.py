"""A call's outcome rebuilt from what was recorded, and the feedback it must have given.

For a call the server answered, the outcome is classified again from the recorded
JSON-RPC request and response (for a call run as a task, the answer to its
``tasks/result``) by the live path's own function
(``relay.call.outcome_from_exchange``, fed an ``Exchange`` settled with the recorded
answer exactly as the peer settles it); an answer with the request's id that is not a
JSON-RPC response is the protocol error the connection made of it, in its words
(``client.refusals.malformed_answer_message``). For a call that never got an answer (invalid
arguments, unknown tool, refused, cancelled, transport failure) the recorded outcome
record is the evidence. The expected ``function_call_output`` is then what the one
rendering (``relay.stages.feedback.render_output``) gives, with the run's recorded budgets.
"""

from __future__ import annotations

import marshal
from dataclasses import dataclass
from typing import Any, Final, cast

from ..client.refusals import malformed_answer_message
from ..client.task_rules import settled_problem
from ..protocol.exchange import Exchange, input_required
from ..protocol.jsonrpc import DecodeError, ErrorResponse, RequestId, Response, classify
from ..protocol.mcp import READ_RESOURCE
from ..protocol.tasks_ext import no_result_reason, settled_answer
from ..relay.stages.feedback import (
    DEFAULT_MEDIA_BUDGET,
    DEFAULT_OUTPUT_BUDGET,
    FeedbackOutput,
    feedback_item,
    render_output,
    with_refusals,
)
from ..relay.stages.outcomes import outcome_from_exchange
from ..relay.stages.parse import FunctionCall
from ..relay.stages.resource_reading import outcome_from_read
from ..relay.stages.result import (
    OUTCOME_STATUSES,
    CallExchange,
    CallOutcome,
    CallRoute,
    OutcomeStatus,
    Verdict,
)
from .record import CallTrace, RunRecord
from .task_trace import TaskTrace, answer_of

__all__ = [
    "ANSWERED", "NEVER_SENT", "MalformedAnswer", "RenderingKey", "expected_item", "expected_output",
    "rebuild_outcome", "recorded_exchange", "rendering_key", "result_key",
]

ANSWERED = frozenset({"ok", "tool_error", "invalid_output", "protocol_error"})
"""Classes that rest on a server's answer."""
NEVER_SENT = frozenset(
    {"invalid_arguments", "unknown_tool", "not_approved", "refused_by_hook", "duplicate_call_id"}
)
"""Classes of calls that must never reach a server."""
_RENDERED_BY_RESULT: Final = frozenset({"ok", "tool_error"})
"""Classes whose rendering is the result's alone (the marker is the class's): ``expected_item``."""


@dataclass(frozen=True, slots=True)
class MalformedAnswer:
    """The recorded answer to a call's tools/call carries its id but is not a JSON-RPC
    response (no result, both result and error, an error without code...)."""

    server: str
    mcp_id: RequestId
    reason: str
    """What the decoder says is wrong with it."""

    @property
    def message(self) -> str:
        """The protocol error the live connection failed the call with."""
        return malformed_answer_message(self.server, "tools/call", self.mcp_id, self.reason)


def recorded_exchange(call: CallTrace, trace: TaskTrace | None) -> Exchange | MalformedAnswer | str | None:
    """The call's tools/call exchange rebuilt from the recorded messages (or the malformed
    answer it got), given its ``task_of``; a string says why the recorded answer cannot be
    its response; None when nothing was answered."""
    answer_event = answer_of(call, trace)  # a task's: its tasks/result's answer
    if not call.mcp_requests or answer_event is None:
        return None
    request = call.mcp_requests[0].get("message")
    response = answer_event.get("message")
    if not isinstance(request, dict) or not isinstance(response, dict):
        return "the recorded message is not a JSON object"
    try:
        answer = classify(response)
    except DecodeError as exc:
        server = call.mcp_requests[0].get("server")
        if exc.id is not None and exc.id == answer_event.get("mcp_id") and "method" not in response:
            return MalformedAnswer(str(server), exc.id, exc.message)
        return str(exc)
    if not isinstance(answer, Response | ErrorResponse):
        return "the recorded answer is a request or notification, not a response"
    method = request.get("method") if isinstance(request.get("method"), str) else "tools/call"
    exchange = Exchange(mcp_id=request.get("id"), method=method, request=request)  # type: ignore[arg-type]
    if trace is not None and trace.extension and isinstance(answer, Response):
        # the task's end answers the tools/call, as the live path reads it (client/ext_tasks.py)
        settled = settled_answer(exchange.mcp_id, response)
        if isinstance(settled, str):  # the live path's words (client/ext_tasks.py)
            server = str(call.mcp_requests[0].get("server"))
            return MalformedAnswer(server, exchange.mcp_id, no_result_reason(str(trace.task_id), settled))
        answer = settled
    exchange.settle(answer)
    return exchange


def _call(call: CallTrace) -> FunctionCall:
    """The call as the model made it, from its record."""
    parsed = call.first("parsed") or {}
    text = parsed.get("arguments_text")
    return FunctionCall(call_id=call.call_id or "", name=call.alias if isinstance(call.alias, str) else "",
                        arguments_text=text if isinstance(text, str) else "")


def _route(call: CallTrace, connection: Any = None) -> CallRoute:
    """Where the record says the call went (``connection``: its recorded request's)."""
    routed = call.first("routed") or {}
    return CallRoute(server=routed.get("server"), tool=routed.get("tool"), connection=connection)


def _failed(call: CallTrace, request: dict[str, Any], mcp_id: Any, verdict: Verdict) -> CallOutcome:
    """A protocol error the live path made of a request (no answer it could use)."""
    return CallOutcome(call=_call(call), route=_route(call, request.get("connection")), verdict=verdict,
                       exchange=CallExchange(mcp_id=mcp_id, request=request.get("message")))


def rebuild_outcome(
    call: CallTrace, exchange: Exchange | MalformedAnswer | str | None, *, output_schema: Any = None,
    trace: TaskTrace | None = None,
) -> CallOutcome | None:
    """The call's outcome as the live path would classify the recorded evidence (its
    ``recorded_exchange``, the tool's ``output_schema`` as last listed before the call), or
    None when the record lacks what it rests on (no outcome; an answered class without an
    answer; ``trace``: the call's ``task_of``, which matters only with an exchange)."""
    request = call.first("mcp_requests") or {}
    if isinstance(exchange, Exchange) and input_required(exchange) is not None:
        return _given_up(call, exchange, request)
    unsettled = _unsettled_task(call, exchange, trace)
    if unsettled is not None:
        verdict = Verdict(status="protocol_error", message=unsettled)
        return _failed(call, request, request.get("mcp_id"), verdict)
    where = _route(call, request.get("connection"))
    if isinstance(exchange, Exchange) and exchange.method == READ_RESOURCE:
        return outcome_from_read(exchange, call=_call(call), route=where)
    if isinstance(exchange, Exchange):
        return outcome_from_exchange(exchange, call=_call(call), route=where, output_schema=output_schema)
    if isinstance(exchange, MalformedAnswer):
        verdict = Verdict(status="protocol_error", message=exchange.message)
        return _failed(call, request, exchange.mcp_id, verdict)
    recorded = call.outcome
    if not isinstance(recorded, dict) or recorded.get("status") not in OUTCOME_STATUSES:
        return None
    status = cast(OutcomeStatus, recorded["status"])
    if status in ANSWERED:
        return None
    refused_by = recorded.get("refused_by")  # absent in older transcripts: a hook's refusal
    if not isinstance(refused_by, str) or status != "refused_by_hook":
        refused_by = None
    verdict = Verdict(status=status, message=str(recorded.get("message", "")),
                      error_code=recorded.get("error_code"), error_data=recorded.get("error_data"),
                      transport_kind=recorded.get("transport_kind"),
                      refused_by=refused_by)
    return CallOutcome(call=_call(call), route=_route(call, recorded.get("connection")), verdict=verdict,
                       exchange=CallExchange(mcp_id=recorded.get("mcp_id")))


def _unsettled_task(call: CallTrace, exchange: Exchange | MalformedAnswer | str | None,
                    trace: TaskTrace | None) -> str | None:
    """For a task that ended failed or cancelled yet whose tasks/result is a plain success:
    the protocol error the live path made of it (``client.tool_tasks.settled_problem``)."""
    if trace is None or not isinstance(exchange, Exchange):
        return None
    request = call.mcp_requests[0]
    params = request.get("message", {}).get("params") or {}
    return settled_problem(str(request.get("server")), str(params.get("name")), str(trace.task_id),
                           trace.statuses[-1], exchange)


def _given_up(call: CallTrace, exchange: Exchange, request: dict[str, Any]) -> CallOutcome | None:
    """A chain whose last answer still asked for input: toolrelay gave up on it (too many
    rounds, an input it could not give), a protocol error in the recorded words; None
    when the record claims anything else."""
    recorded = call.outcome or {}
    if recorded.get("status") != "protocol_error" or recorded.get("mcp_id") != exchange.mcp_id:
        return None
    return _failed(call, request, exchange.mcp_id,
                   Verdict(status="protocol_error", message=str(recorded.get("message", ""))))


def expected_item(
    outcome: CallOutcome, run: RunRecord, refusals: list[CallOutcome] | None = None, *,
    structured: bool = False,
) -> dict[str, Any]:
    """The function_call_output the run's own rendering gives for ``outcome``, followed by
    the ``refusals`` of function_calls that reused its call_id (``structured``: the request
    declared its tool with ``output_schema``)."""
    assert outcome.call_id is not None
    return feedback_item(outcome.call_id, with_refusals(expected_output(outcome, run, structured=structured),
                                                        refusals or []))


def expected_output(outcome: CallOutcome, run: RunRecord, *, structured: bool = False) -> FeedbackOutput:
    """``render_output`` of ``outcome`` with the run's recorded budgets."""
    start = run.run_start or {}
    budget, media_budget = start.get("output_budget"), start.get("media_budget")
    multimodal = start.get("multimodal", True)
    return render_output(
        outcome,
        budget=budget if isinstance(budget, int) else DEFAULT_OUTPUT_BUDGET,
        media_budget=media_budget if isinstance(media_budget, int) else DEFAULT_MEDIA_BUDGET,
        multimodal=multimodal is not False, structured=structured,
    )


RenderingKey = tuple[str, bool, bytes]


def rendering_key(verdict: Verdict, structured: bool) -> RenderingKey | None:
    """What a success's or a tool error's rendering rests on besides the run's budgets: its
    class and its result, by content (``render_feedback`` reads nothing else of such an
    outcome), so calls with the same result can share one rendering; None: render it anew."""
    status, result = verdict.status, verdict.result
    key = result_key(result) if status in _RENDERED_BY_RESULT and type(result) is dict else None
    return (status, structured, key) if key is not None else None


def result_key(result: dict[str, Any]) -> bytes | None:
    """A result by content: version 2 writes no back-references, so equal JSON values give
    equal bytes (``jsonpath._dump``), and bytes tell true from 1; None for a value no
    transcript holds (not JSON), which is then judged on its own."""
    try:
        return marshal.dumps(result, 2)
    except ValueError:
        return None
