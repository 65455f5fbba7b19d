"""Link 6, correlation, for calls a 2026-07-28 server made tasks of the tasks extension
(SEP-2663): each ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` toolrelay sent echoes
the latest ``requestState`` the server gave before it was sent (the ``CreateTaskResult``'s,
then each answered poll's), and carries none when that message had none (the locked
2026-07-28 spec's tasks never give one; an older draft's did); each
``tasks/update`` answers only input requests a poll showed, each key once.
"""

from __future__ import annotations

from typing import Any

from ..events import MCP_REQUEST
from ..protocol.tasks_ext import TASKS_UPDATE
from .evidence import call_finding
from .record import CallTrace, Event, message_of
from .task_trace import TaskTrace
from .verdict import Finding

__all__ = ["ext_task_rounds"]

_ABSENT = "(none)"


def ext_task_rounds(call: CallTrace, trace: TaskTrace) -> Finding:
    """correlation: the extension task's requests echo its state and answer what it asked."""
    created = message_of(trace.created).get("result")
    latest: Any = created.get("requestState", _ABSENT) if isinstance(created, dict) else _ABSENT
    asked: set[str] = set()
    answered: set[str] = set()
    for event in call.task_messages:
        message = message_of(event)
        if event["kind"] != MCP_REQUEST:
            result = message.get("result")
            if event.get("method") == "tasks/get" and isinstance(result, dict):
                latest = result.get("requestState", _ABSENT)
                inputs = result.get("inputRequests")
                asked.update(inputs if isinstance(inputs, dict) else ())
            continue
        problem = _request_problem(call, event, message, latest, asked, answered)
        if problem is not None:
            return call_finding(call, "correlation", False, problem, "task_state", trace.created, event)
    requests = sum(1 for e in call.task_messages if e["kind"] == MCP_REQUEST)
    said = (f"{call.call_id}: its {requests} task request(s) echo the task's latest requestState; "
            f"{len(answered)} input request(s) answered, each once and each asked")
    return call_finding(call, "correlation", True, said, "task_state", trace.created)


def _request_problem(call: CallTrace, event: Event, message: dict[str, Any], latest: Any,
                     asked: set[str], answered: set[str]) -> str | None:
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    method, mcp_id = event.get("method"), event.get("mcp_id")
    echoed = params.get("requestState", _ABSENT)
    if echoed != latest and latest == _ABSENT:  # the locked spec's tasks: no requestState to echo
        return (f"{call.call_id}: {method} mcp id {mcp_id} carries requestState {echoed!r}, but the task "
                "gave none before it")
    if echoed != latest:
        return (f"{call.call_id}: {method} mcp id {mcp_id} carries requestState {echoed!r}, but the task's "
                f"latest before it was {latest!r}")
    if method != TASKS_UPDATE:
        return None
    responses = params.get("inputResponses")
    for key in responses if isinstance(responses, dict) else ():
        if key not in asked:
            return (f"{call.call_id}: tasks/update mcp id {mcp_id} answers input request {key!r}, which no "
                    "tasks/get of the task asked")
        if key in answered:
            return f"{call.call_id}: tasks/update mcp id {mcp_id} answers input request {key!r} a second time"
        answered.add(key)
    return None
