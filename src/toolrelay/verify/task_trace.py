"""A call run as an MCP task (2025-11-25), read from its recorded messages.

The call's ``tools/call`` carries ``params.task`` and is answered by a ``CreateTaskResult``
naming the task; then come toolrelay's ``tasks/get`` polls, its ``tasks/result`` (whose
answer is the call's result) and, when it gave up, ``tasks/cancel`` — each tagged with
the model's call_id (``CallTrace.task_messages``), each request paired with its answer
by JSON-RPC id.

A call a 2026-07-28 server made a task of the tasks extension (SEP-2663) reads the same
way in the extension's names: the plain ``tools/call`` is answered ``resultType: "task"``
(the task's fields at the top level), then come ``tasks/get`` polls, ``tasks/update``
(the host's input) and perhaps ``tasks/cancel``; the call's answer is the ``tasks/get``
that showed the task ended (``TaskTrace.extension``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from ..events import MCP_REQUEST
from ..protocol.mcp import TERMINAL_TASK_STATUSES
from ..protocol.tasks_ext import created_ext_task
from .record import CallTrace, Event, message_of

__all__ = ["TaskTrace", "answer_of", "call_answer", "task_of", "task_summary"]


@dataclass(slots=True, kw_only=True)
class TaskTrace:
    """One tool call's task: its creation and every exchange about it."""

    task_id: Any
    created: Event
    """The tools/call's answer: the ``CreateTaskResult``."""
    exchanges: list[tuple[Event, Event | None]] = field(default_factory=list)
    """(request, its answer or None), in the order the requests went out."""
    extension: bool = False
    """A task of the 2026-07-28 tasks extension (its answer is a ``tasks/get``'s)."""

    def of(self, method: str) -> list[tuple[Event, Event | None]]:
        return [pair for pair in self.exchanges if pair[0].get("method") == method]

    @property
    def result(self) -> tuple[Event, Event] | None:
        """The answered ``tasks/result`` (the last one, if several); for an extension task
        the first ``tasks/get`` that showed it ended."""
        if self.extension:
            ended = [(request, answer) for request, answer in self.of("tasks/get")
                     if answer is not None and _status(answer) in TERMINAL_TASK_STATUSES]
            return ended[0] if ended else None
        answered = [(request, answer) for request, answer in self.of("tasks/result") if answer is not None]
        return answered[-1] if answered else None

    @property
    def statuses(self) -> list[Any]:
        """The task's status at creation and in each answered ``tasks/get``, in order."""
        result = message_of(self.created).get("result")
        found = [(result if self.extension and isinstance(result, dict) else _task(result)).get("status")]
        for _, answer in self.of("tasks/get"):
            result = message_of(answer).get("result") if answer is not None else None
            if isinstance(result, dict):
                found.append(result.get("status"))
        return found

    def summary(self) -> str:
        """``task 318e844b… working ×3 → completed → result``: what happened, compactly."""
        return task_summary(self.task_id, self.statuses, cancelled=bool(self.of("tasks/cancel")),
                            result=self.result is not None)


def task_summary(task_id: Any, statuses: list[Any], *, cancelled: bool, result: bool) -> str:
    """``task 318e844b… working ×3 → completed → result`` (verify's findings, view's rows)."""
    steps = []
    for status, run in groupby(statuses):
        count = len(list(run))
        steps.append(f"{status} ×{count}" if count > 1 else str(status))
    if cancelled:
        steps.append("cancelled by toolrelay (tasks/cancel)")
    elif result:
        steps.append("result")
    return f"task {str(task_id)[:8]}… " + " → ".join(steps)


def _task(result: Any) -> dict[str, Any]:
    task = result.get("task") if isinstance(result, dict) else None
    return task if isinstance(task, dict) else {}


def _status(answer: Event) -> Any:
    result = message_of(answer).get("result")
    return result.get("status") if isinstance(result, dict) else None


def task_of(call: CallTrace) -> TaskTrace | None:
    """The call's task, when its tools/call asked for one and was answered with one, or
    was answered with a task of the tasks extension."""
    if not call.mcp_requests or not call.mcp_responses:
        return None  # asked once per call by several checks: the common answer comes first
    params = message_of(call.mcp_requests[0]).get("params")
    created = call.mcp_responses[0]
    if not isinstance(params, dict):
        return None
    made = created_ext_task(message_of(created).get("result"))
    if made is None and not isinstance(params.get("task"), dict):
        return None
    task_id = (made if made is not None else _task(message_of(created).get("result"))).get("taskId")
    if task_id is None:
        return None
    trace = TaskTrace(task_id=task_id, created=created, extension=made is not None)
    answers = {repr(message_of(e).get("id")): e for e in call.task_messages if e["kind"] != MCP_REQUEST}
    for event in call.task_messages:
        if event["kind"] == MCP_REQUEST:
            trace.exchanges.append((event, answers.get(repr(message_of(event).get("id")))))
    return trace


def call_answer(call: CallTrace) -> Event | None:
    """The answer that ends the call: its tools/call's, or for a task its tasks/result's
    (an extension task's: the tasks/get that showed it ended)."""
    return answer_of(call, task_of(call))


def answer_of(call: CallTrace, trace: TaskTrace | None) -> Event | None:
    """``call_answer`` given the call's ``task_of`` (``RunFacts.task`` reads it once)."""
    if trace is None:
        return call.first("mcp_responses")
    result = trace.result
    return result[1] if result is not None else None
