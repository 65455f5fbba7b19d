"""What a task's transcript says about its run, and where a stopped run goes on from.

``read_state(path, read_only)`` reads the transcript a task left (after a kill its last
line may be cut: the file is cut back to its last whole line first) and finds:

- the run had ended (a ``run_end`` other than Ctrl-C's ``aborted``): only its result line
  was lost, and it is rebuilt from the record;
- a call was sent without a recorded answer (a ``tools/call`` request with no response:
  it may have run) and its tool is not read-only: the task is ``uncertain`` and nothing is
  sent again; so is a call that is not read-only started early in a response that was
  never recorded whole (asking that turn again could ask for it again);
- otherwise the ``relay.resume.ResumePoint`` to go on from: the last request's context,
  and, when its response was recorded whole, that turn finished with the recorded results
  (an outcome that is not ``cancelled``, its output when that was rendered too); a
  read-only call without a recorded result is run (again).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from ..events import (
    MCP_REQUEST,
    MCP_RESPONSE,
    CallOutcomeEvent,
    CompactionEvent,
    FeedbackEvent,
    ModelRequestEvent,
    ModelResponseEvent,
    RunEndEvent,
    RunResumedEvent,
    RunStartEvent,
)
from ..relay.resume import ResumePoint
from ..relay.stages.dialects import dialect_of, known_reader
from ..relay.stages.parse import FunctionCall, ModelTurn
from ..relay.stages.request import Conversation, user_message
from ..relay.stages.result import OUTCOME_STATUSES, CallExchange, CallOutcome, CallRoute, Verdict
from ..relay.stages.usage import add_counts
from ..transcript.reader import read_transcript
from .results import cut_back_to_whole_lines

__all__ = ["TaskState", "read_state"]

Event = dict[str, Any]
ReadOnly = Callable[[str], bool]
"""alias → whether its tool is read-only (may be run again)."""
_TOOLS_CALL: Final = "tools/call"


@dataclass(slots=True, kw_only=True)
class TaskState:
    """A task's recorded run: how it ended, or where it goes on."""

    run_id: str
    task: str
    next_seq: int
    connections: int
    """The highest connection number recorded (a resumed run's connections come after)."""
    ended: Event | None = None
    """The run's ``run_end`` when it had ended."""
    uncertain: list[str] = field(default_factory=list)
    """Calls that may have run without a recorded answer, each in words."""
    turns: int = 0
    """The last turn a request was recorded for."""
    point: ResumePoint | None = None
    usage: dict[str, int] = field(default_factory=dict)
    calls: int = 0
    failed_calls: int = 0


def read_state(path: Path, read_only: ReadOnly) -> TaskState | None:
    """The state ``path`` records; None when no run began in it (start the task afresh)."""
    cut_back_to_whole_lines(path)
    if path.stat().st_size == 0:
        return None  # killed before its first line was whole: nothing began
    events = read_transcript(path).events
    starts = [e for e in events if e["kind"] in (RunStartEvent.kind, RunResumedEvent.kind)]
    if not starts:
        return None
    state = TaskState(
        run_id=str(events[-1].get("run") or starts[0].get("run_id")), task=str(starts[0].get("task")),
        next_seq=events[-1]["seq"] + 1, connections=max(_connections(events), default=0),
        usage=_usage(events),
    )
    outcomes = _outcomes(events)
    state.calls = len(outcomes)
    state.failed_calls = sum(1 for o in outcomes.values() if o.get("status") != "ok")
    ends = [e for e in events if e["kind"] == RunEndEvent.kind and e["seq"] > starts[-1]["seq"]]
    if ends and ends[-1].get("status") != "aborted":
        state.ended = ends[-1]
        return state
    _plan(state, events, outcomes, read_only)
    if state.point is not None:  # the resumed run's usage goes on from the recorded one's
        state.point.usage = dict(state.usage)
    return state


def _plan(state: TaskState, events: list[Event], outcomes: dict[str, Event], read_only: ReadOnly) -> None:
    turns = _turns(events)
    if not turns:  # stopped before its first request: ask it, from the task
        conversation = Conversation()
        conversation.start([user_message(state.task)])
        state.point = ResumePoint(conversation=conversation, turn=1, note="resumed before its first request")
        return
    last = state.turns = max(turns)
    request, response = turns[last]
    body = _request_body(request)
    recorded = _whole_turn(response)
    calls = _sent_calls(events, request["seq"])
    if recorded is None:
        state.uncertain = [_said(c, "started early in a response never recorded whole")
                           for c in calls.values() if not read_only(str(c.get("alias")))]
    else:
        answered = _answers(events, request["seq"])
        state.uncertain = [
            _said(calls[c.call_id], "sent, its answer never recorded") for c in recorded.calls
            if c.call_id in calls and c.call_id not in answered and _no_result(outcomes.get(c.call_id))
            and not read_only(c.alias)
        ]
    if state.uncertain:
        return
    state.point = _point(body, last, recorded, events, turns, outcomes, request["seq"])
    for call_id in state.point.unrecorded:
        # recorded now, by the resumed run, whose transcript moves every connection number
        # past the old ones (``records.TaskTranscript``): this one names an old connection
        outcome = state.point.outcomes[call_id]
        if outcome.route.connection is not None:
            outcome.route = replace(outcome.route, connection=outcome.route.connection - state.connections)


def _point(
    body: dict[str, Any], turn: int, recorded: ModelTurn | None, events: list[Event],
    turns: dict[int, tuple[Event, Event | None]], outcomes: dict[str, Event], since: int,
) -> ResumePoint:
    items = [item for item in body.get("input") or [] if isinstance(item, dict)]
    previous = body.get("previous_response_id")
    conversation = Conversation(history=list(items), pending=list(items),
                                previous_response_id=previous if isinstance(previous, str) else None)
    earlier = [_outcome(outcomes[c.call_id], None, c) for t, (_, r) in sorted(turns.items()) if t < turn
               for c in (_whole_turn(r) or _NO_TURN).calls if c.call_id in outcomes]
    ids = [answered.response_id for t, (_, r) in sorted(turns.items())
           if t < turn and (answered := _whole_turn(r)) is not None and answered.response_id]
    point = ResumePoint(conversation=conversation, turn=turn, earlier=earlier, response_ids=ids)
    if recorded is None:
        point.note = f"turn {turn} is asked again: its response was never recorded whole"
        return point
    conversation.add_response(recorded.response_id, recorded.output, prune=False)  # the loop compacts
    point.recorded = recorded
    point.compaction_recorded = any(e["kind"] == CompactionEvent.kind and e.get("turn") == turn
                                    for e in events)
    if recorded.response_id:
        point.response_ids.append(recorded.response_id)
    outputs, answers = _outputs(events, since), _answers(events, since)
    for call in recorded.calls:
        kept, answer = outcomes.get(call.call_id), answers.get(call.call_id)
        if kept is not None and not _no_result(kept):
            point.outcomes[call.call_id] = _outcome(kept, answer, call)
        elif answer is not None:  # answered, its outcome not yet written: the answer is the result
            point.outcomes[call.call_id] = _answered_outcome(call, answer, events)
            point.unrecorded.add(call.call_id)
        if call.call_id in point.outcomes and call.call_id in outputs:
            point.outputs[call.call_id] = outputs[call.call_id]
    again = len(point.still_to_run())
    point.note = (f"turn {turn} is finished: {len(point.outcomes)} recorded call result(s) kept, "
                  f"{again} call(s) to run")
    return point


def _request_body(request: Event) -> dict[str, Any]:
    """The recorded request in the loop's (Responses) vocabulary: a chat body read back, so
    that the resumed run goes on from the same input in either dialect."""
    body = request.get("body")
    if not isinstance(body, dict):
        return {}
    reader = known_reader(dialect_of(request))
    return reader.request(body) if reader is not None else body


_NO_TURN: Final = ModelTurn(response_id=None, status="completed", output=[])


def _turns(events: list[Event]) -> dict[int, tuple[Event, Event | None]]:
    """turn → (its last request, the response to that request, if any)."""
    found: dict[int, tuple[Event, Event | None]] = {}
    for event in events:
        turn = event.get("turn")
        if not isinstance(turn, int):
            continue
        if event["kind"] == ModelRequestEvent.kind:
            found[turn] = (event, None)
        elif event["kind"] == ModelResponseEvent.kind and turn in found:
            found[turn] = (found[turn][0], event)
    return found


def _whole_turn(response: Event | None) -> ModelTurn | None:
    """The response read as a turn, when it arrived whole (a 2xx Responses object, not cut)."""
    if response is None or response.get("cut") or not isinstance(response.get("body"), dict):
        return None
    status = response.get("status")
    if not isinstance(status, int) or not 200 <= status < 300:
        return None
    reader = known_reader(dialect_of(response))
    try:
        return reader.turn(response["body"]) if reader is not None else None
    except ValueError:
        return None


def _outcomes(events: list[Event]) -> dict[str, Event]:
    """call_id → its latest recorded outcome."""
    found: dict[str, Event] = {}
    for event in events:
        outcome = event.get("outcome")
        if event["kind"] == CallOutcomeEvent.kind and isinstance(outcome, dict):
            found[str(event.get("call_id"))] = outcome
    return found


def _no_result(outcome: Event | None) -> bool:
    """A cancelled outcome is not a result: the call may or may not have run."""
    return outcome is None or outcome.get("status") == "cancelled"


def _sent_calls(events: list[Event], since: int) -> dict[str, Event]:
    """call_id → ``{"alias", "mcp_id"}`` of each tools/call sent after seq ``since``."""
    aliases = {str(e.get("call_id")): e.get("alias") for e in events if e["kind"] == "call_parsed"}
    sent = [e for e in events
            if e["seq"] > since and e["kind"] == MCP_REQUEST and e.get("method") == _TOOLS_CALL]
    return {str(e["call_id"]): {"call_id": e["call_id"], "alias": aliases.get(str(e["call_id"])),
                                "mcp_id": e.get("mcp_id")} for e in sent if e.get("call_id")}


def _answers(events: list[Event], since: int) -> dict[str, Event]:
    """call_id → the tools/call response recorded for it after seq ``since``."""
    return {str(e.get("call_id")): e for e in events
            if e["seq"] > since and e["kind"] == MCP_RESPONSE and e.get("method") == _TOOLS_CALL}


def _outputs(events: list[Event], since: int) -> dict[str, dict[str, Any]]:
    return {str(e["call_id"]): e["item"] for e in events
            if e["seq"] > since and e["kind"] == FeedbackEvent.kind and isinstance(e.get("item"), dict)}


def _said(call: Event, why: str) -> str:
    return f"{call['call_id']} ({call.get('alias')}, mcp id {call.get('mcp_id')}): {why}"


def _answered_outcome(call: FunctionCall, answer: Event, events: list[Event]) -> CallOutcome:
    """The outcome an answered tools/call had, from its recorded answer (ok, tool error,
    JSON-RPC error) and its recorded route."""
    message = answer.get("message") if isinstance(answer.get("message"), dict) else {}
    assert isinstance(message, dict)
    result, error = message.get("result"), message.get("error")
    routed = next((e for e in events if e["kind"] == "call_routed" and e.get("call_id") == call.call_id), {})
    record: Event = {"server": answer.get("server"),
                     "tool": routed.get("tool"), "mcp_id": answer.get("mcp_id"),
                     "connection": answer.get("connection")}
    if isinstance(error, dict):
        record |= {"status": "protocol_error", "message": str(error.get("message") or ""),
                   "error_code": error.get("code"), "error_data": error.get("data")}
    else:
        failed = isinstance(result, dict) and result.get("isError") is True
        record["status"] = "tool_error" if failed else "ok"
    return _outcome(record, answer, call)


def _outcome(record: Event, answer: Event | None, call: FunctionCall) -> CallOutcome:
    """The recorded outcome of the model's ``call`` as a value (what rendering its output
    reads), with the ``CallToolResult`` of its recorded answer."""
    message = answer.get("message") if answer is not None else None
    result = message.get("result") if isinstance(message, dict) else None
    status = record.get("status")
    verdict = Verdict(
        status=status if status in OUTCOME_STATUSES else "transport_error",
        message=str(record.get("message") or ""), error_code=record.get("error_code"),
        error_data=record.get("error_data"), transport_kind=record.get("transport_kind"),
        result=result if isinstance(result, dict) else None,
    )
    return CallOutcome(
        call=call,
        route=CallRoute(server=record.get("server"), tool=record.get("tool"),
                        connection=record.get("connection")),
        exchange=CallExchange(mcp_id=record.get("mcp_id")), verdict=verdict,
        elapsed=float(record.get("elapsed") or 0.0),
    )


def _usage(events: list[Event]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for event in events:
        body, status = event.get("body"), event.get("status")
        reader = known_reader(dialect_of(event))
        if event["kind"] == ModelResponseEvent.kind and isinstance(body, dict) and status == 200 and reader:
            totals = add_counts(totals, reader.usage(body))
    return totals


def _connections(events: list[Event]) -> list[int]:
    return [e["connection"] for e in events if isinstance(e.get("connection"), int)]


