"""The rules of tool calls run as MCP tasks (2025-11-25), without the event loop: which
tools must run as tasks and where they can, the created task in an answer, the poll
interval, and when a settled task's result cannot stand as the call's (``verify`` judges
a recorded task call by the same rules). ``tool_tasks.py`` runs such a call."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from ..protocol import mcp as m
from ..protocol.exchange import Exchange
from ..protocol.versions import MODERN_VERSIONS

__all__ = [
    "CANCEL_WAIT",
    "DEFAULT_POLL",
    "MAX_POLL",
    "MIN_POLL",
    "TASKS_VERSION",
    "TASK_TTL_MS",
    "created_task",
    "poll_seconds",
    "settled_problem",
    "task_required",
    "task_required_names",
    "tasks_unavailable",
]

TASKS_VERSION: Final = "2025-11-25"
"""The only revision toolrelay speaks with tasks in its core."""
TASK_TTL_MS: Final = 600_000
"""How long toolrelay asks the server to keep a task (its result must still be there)."""
MIN_POLL: Final = 0.02
MAX_POLL: Final = 5.0
DEFAULT_POLL: Final = 1.0
"""Seconds between ``tasks/get`` polls: the server's ``pollInterval``, within bounds."""
CANCEL_WAIT: Final = 5.0
"""Seconds toolrelay waits for the answer to its ``tasks/cancel``."""


def task_required(tool: dict[str, Any]) -> bool:
    """Whether a listed tool may only be called as a task."""
    execution = tool.get("execution")
    return isinstance(execution, dict) and execution.get("taskSupport") == m.TASK_SUPPORT_REQUIRED


def task_required_names(tools: Iterable[dict[str, Any]]) -> frozenset[str]:
    return frozenset(str(tool.get("name")) for tool in tools if task_required(tool))


def tasks_unavailable(version: str | None, capabilities: dict[str, Any]) -> str | None:
    """Why this connection cannot run tool calls as tasks, or None when it can."""
    if version in MODERN_VERSIONS:
        return (f"MCP {version} has no task-augmented calls: in its tasks extension the server "
                "decides which calls become tasks")
    if version != TASKS_VERSION:
        return f"tasks need MCP {TASKS_VERSION}; the connection speaks {version}"
    tasks = capabilities.get("tasks")
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    tools = requests.get("tools") if isinstance(requests, dict) else None
    if not isinstance(tools, dict) or not isinstance(tools.get("call"), dict):
        return "the server does not declare tasks for tools/call (capabilities.tasks.requests.tools.call)"
    return None


def created_task(result: Any) -> dict[str, Any] | None:
    """The ``task`` of a ``CreateTaskResult`` (None: not one)."""
    task = result.get("task") if isinstance(result, dict) else None
    return task if isinstance(task, dict) else None


def settled_problem(server: str, tool: str, task_id: str, status: Any, final: Exchange) -> str | None:
    """Why a task's ``tasks/result`` cannot stand as the call's result: the task ended
    ``failed`` or ``cancelled`` yet the answer is a plain success. None otherwise (an
    error or ``isError`` result is the outcome it gives)."""
    if status not in ("failed", "cancelled") or final.error is not None:
        return None
    if isinstance(final.result, dict) and final.result.get("isError") is True:
        return None
    return (f"server {server}: the task {task_id} of tools/call {tool} ended {status}, "
            "yet tasks/result answered with a result that is not an error")


def poll_seconds(task: dict[str, Any], previous: float, field: str = "pollInterval") -> float:
    """The wait before the next poll: the task's ``field`` (milliseconds) within our bounds,
    else ``previous``."""
    interval = task.get(field)
    if isinstance(interval, (int, float)) and not isinstance(interval, bool) and interval > 0:
        return min(MAX_POLL, max(MIN_POLL, interval / 1000))
    return previous
