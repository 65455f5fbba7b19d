"""Verify the status notices a 2025 host was sent of its bridged task (``task_bridge.py``).

Such a task stands for a 2026-07-28 upstream's extension task, which sends no
notification: the proxy tells the host ``notifications/tasks/status`` when one of its own
``tasks/get`` polls sees the state change, recorded (``proxy_task_status``) with that
poll's id (``mcp_id``). Each is ``status_owned`` (correlation) when it went to the host that
owns the task, rests on one upstream ``tasks/get`` of the task's own call (its key),
answered before the notice with a state of that task, and its params are that state in
2025 terms (``as_2025_task``, the proxy's id).
"""

from __future__ import annotations

from ..protocol.tasks_ext import as_2025_task
from .proxy_answers import Event
from .proxy_tasks import Legs
from .verdict import Finding

__all__ = ["judge_bridged_status"]


def judge_bridged_status(status: Event, legs: Legs) -> Finding:
    """One notice of a bridged task's state (its record names the upstream poll: ``mcp_id``)."""
    task = legs.tasks.get(str(status.get("task_id")))
    triple = (status.get("server"), status.get("connection"), status.get("mcp_id"))
    requests, responses = legs.requests.get(triple, []), legs.responses.get(triple, [])
    problem = _problem(status, task, requests, responses)
    seqs = (status["seq"], *(e["seq"] for e in (*requests, *responses)), *((task["seq"],) if task else ()))
    told = (status.get("host") or {}).get("status")
    return Finding(link="correlation", check="status_owned", ok=not problem, seqs=seqs,
                   call_id=task.get("key") if task is not None else None,
                   message=f"task status of {status.get('task_id')!r}: " + (
                       problem or f"the upstream task's state ({told}) its tasks/get {triple[2]!r} saw, told "
                                  "to the host that owns it"))


def _problem(status: Event, task: Event | None, requests: list[Event], responses: list[Event]) -> str:
    if task is None:
        return "for no task of the proxy's"
    if status.get("to_host") != task.get("host"):
        return (f"sent to host {status.get('to_host')!r}, which does not own it "
                f"(host {task.get('host')!r} does)")
    asked = requests[0] if len(requests) == 1 else {}
    if len(responses) != 1 or asked.get("message", {}).get("method") != "tasks/get" or \
            asked.get("call_id") != task.get("key") or responses[0]["seq"] > status["seq"]:
        return "it rests on no upstream tasks/get of the task's own answered before it"
    state = responses[0].get("message", {}).get("result")
    if not isinstance(state, dict) or state.get("taskId") != task.get("upstream_task_id"):
        return "the upstream tasks/get it rests on names another task"
    if status.get("host") != as_2025_task(state, str(task.get("task_id"))):
        return "its params are not the upstream task's state it rests on, in 2025 terms"
    return ""
