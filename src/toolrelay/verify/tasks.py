"""Link 6, correlation, for calls run as MCP tasks: every ``tasks/get``, ``tasks/result``
and ``tasks/cancel`` recorded with a call names the task its ``tools/call`` created, and
none is recorded with a call that created no task. (Their ids are paired like every
request's, in ``correlation.py``; the call's outcome is its ``tasks/result``'s answer,
judged at server_check.) A task of the 2026-07-28 tasks extension is judged the same way
in its names (``tasks/get``, ``tasks/update``, ``tasks/cancel``).
"""

from __future__ import annotations

from .evidence import call_finding
from .ext_task_rounds import ext_task_rounds
from .facts import RunFacts
from .record import CallTrace, RunRecord, message_of
from .task_trace import TaskTrace
from .verdict import Finding

__all__ = ["check_tasks"]


def check_tasks(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """correlation: each call's task requests name the task it created (and, for a task of
    the tasks extension, echo its state and answer only what it asked: ext_task_rounds.py)."""
    found: list[Finding] = []
    extended: list[tuple[CallTrace, TaskTrace]] = []  # judged after every call's links, as ever
    for call in run.calls:
        trace = facts.task(call)
        if trace is None and not call.task_messages:
            continue  # most calls: no task, no task request (what _task_links finds nothing in)
        linked = _task_links(call, trace)
        if linked is not None:
            found.append(linked)
        if trace is not None and trace.extension:
            extended.append((call, trace))
    found.extend(ext_task_rounds(call, trace) for call, trace in extended)
    return found


def _task_links(call: CallTrace, trace: TaskTrace | None) -> Finding | None:
    requests = [e for e in call.task_messages if e["kind"] == "mcp_request"]
    if trace is None:
        if not requests:
            return None
        first = requests[0]
        return call_finding(call, "correlation", False,
                            f"{call.call_id}: {first.get('method')} mcp id {first.get('mcp_id')} is recorded "
                            "with this call, whose tools/call created no task", "task_links", first)
    for request in requests:
        params = message_of(request).get("params")
        named = params.get("taskId") if isinstance(params, dict) else None
        if named != trace.task_id:
            said = (f"{call.call_id}: {request.get('method')} mcp id {request.get('mcp_id')} names task "
                    f"{named!r}, but its tools/call created task {trace.task_id!r}")
            return call_finding(call, "correlation", False, said, "task_links", trace.created, request)
    message = (f"{call.call_id}: {trace.summary()}; its {len(requests)} task request(s) name the task "
               "its tools/call created")
    return call_finding(call, "correlation", True, message, "task_links", trace.created, *requests)
