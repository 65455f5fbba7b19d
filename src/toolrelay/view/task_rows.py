"""The rows of a tool call run as an MCP task, inside their call: the task-augmented
``tools/call``, the ``CreateTaskResult`` (its detail says how the whole task went:
``task 318e844b… working ×3 → completed → result``), the ``tasks/get`` polls folded into
one pair per status (``task working ×3``), ``tasks/result`` and ``tasks/cancel``. A task
of the 2026-07-28 tasks extension (a plain ``tools/call`` answered ``resultType: "task"``)
is drawn the same way, with its ``tasks/update`` (``input given``) and no ``tasks/result``:
its result is the ``tasks/get`` that shows it ended.

A poll is folded only when neither of its rows carries one of verify's findings.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ..events import MCP_REQUEST, MCP_RESPONSE
from ..protocol.mcp import TERMINAL_TASK_STATUSES
from ..protocol.tasks_ext import TASKS_UPDATE, created_ext_task
from ..verify.task_trace import task_summary
from .model import Row, RowState

__all__ = ["compact_tasks", "task_text"]

_TASK_METHODS: Final = frozenset({"tasks/get", "tasks/result", "tasks/cancel", TASKS_UPDATE})
_STATES: Final[dict[Any, RowState]] = {"failed": "failed", "cancelled": "warn", "input_required": "warn"}


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _short(task_id: Any) -> str:
    return f"{str(task_id)[:8]}…"


def task_text(record: dict[str, Any], message: dict[str, Any]) -> tuple[str, str, RowState] | None:
    """Label, detail and state of a task message (None: not one; errors are drawn as any)."""
    kind, method = record.get("kind"), record.get("method")
    method = method if isinstance(method, str) else ""
    params, result = _mapping(message.get("params")), message.get("result")
    if kind == MCP_REQUEST and method == "tools/call" and isinstance(params.get("task"), dict):
        arguments = params.get("arguments")
        return f"tools/call {params.get('name')} · as a task", f"arguments {arguments}", "ok"
    if kind == MCP_REQUEST and method in _TASK_METHODS:
        return str(method), f"task {_short(params.get('taskId'))}", "ok"
    if kind != MCP_RESPONSE or not isinstance(result, dict) or "error" in message:
        return None
    task = _created(result)
    if method == "tools/call" and task:
        return "task created", f"task {_short(task.get('taskId'))} {task.get('status')}", "ok"
    if method == TASKS_UPDATE:
        return "input given", "", "ok"
    if method in ("tasks/get", "tasks/cancel"):
        status = result.get("status")
        state = _STATES.get(status, "ok") if isinstance(status, str) else "ok"
        return f"task {status}", str(result.get("statusMessage") or ""), state
    return None


def _created(result: Any) -> dict[str, Any]:
    """The task a tools/call's result created: a ``CreateTaskResult``'s ``task``, or the
    tasks extension's result itself ({}: none)."""
    made = created_ext_task(result)
    return made if made is not None else _mapping(_mapping(result).get("task"))


@dataclass(slots=True)
class _Task:
    created: Row
    task_id: Any
    statuses: list[Any] = field(default_factory=list)
    cancelled: bool = False
    result: bool = False
    extension: bool = False
    """A task of the tasks extension: the poll that shows it ended gives its result."""
    kept: Row | None = None
    """The response row of the last poll drawn, and how many polls it stands for."""
    count: int = 0


def compact_tasks(
    rows: Sequence[Row], events: Sequence[dict[str, Any]]
) -> Iterator[tuple[Row, dict[str, Any]]]:
    """The (row, event) pairs to draw: repeated polls folded, each task's summary on its
    creation row."""
    tasks: dict[str, _Task] = {}
    dropped: set[int] = set()
    pending: dict[str, Row] = {}  # a poll's request row, until its answer says whether it folds
    for row, event in zip(rows, events, strict=True):
        if row.call_id is None:  # most rows of a run without tasks: nothing to look at
            continue
        task = tasks.get(row.call_id)
        if row.label == "task created":
            result = _mapping(event.get("message")).get("result")
            created = _created(result)
            tasks[row.call_id] = _Task(row, str(created.get("taskId")), [created.get("status")],
                                       extension=created_ext_task(result) is not None)
        elif task is not None and event.get("method") == "tasks/get":
            _poll(task, row, event, _mapping(event.get("message")), pending, dropped)
        elif task is not None and event.get("method") == "tasks/cancel":
            task.cancelled = True
        elif task is not None and event.get("method") == "tasks/result" and event.get("kind") == MCP_RESPONSE:
            task.result = True
    for task in tasks.values():
        task.created.detail = task_summary(task.task_id, task.statuses, cancelled=task.cancelled,
                                           result=task.result)
    return ((row, event) for row, event in zip(rows, events, strict=True) if row.seq not in dropped)


def _poll(task: _Task, row: Row, event: dict[str, Any], message: dict[str, Any],
          pending: dict[str, Row], dropped: set[int]) -> None:
    if event.get("kind") == MCP_REQUEST:
        pending[repr(message.get("id"))] = row
        return
    request = pending.pop(repr(message.get("id")), None)
    status = _mapping(message.get("result")).get("status")
    task.statuses.append(status)
    task.result = task.result or (task.extension and status in TERMINAL_TASK_STATUSES)
    kept = task.kept
    foldable = request is not None and not row.links and not request.links
    if kept is not None and foldable and kept.label.startswith(f"task {status}") and row.state == kept.state:
        assert request is not None
        dropped.update((request.seq, row.seq))
        task.count += 1
        kept.label = f"task {status} ×{task.count}"
        return
    task.kept, task.count = row, 1
