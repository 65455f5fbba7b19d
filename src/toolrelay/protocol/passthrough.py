"""What of a result a proxy passes on unchanged: the result minus its era's envelope.

A 2026-07-28 result carries ``resultType`` and ``io.modelcontextprotocol/...`` keys in its
``_meta`` (the server's info, cache hints): they belong to the leg they crossed, not to
the result. ``toolrelay proxy`` passes every upstream result on as ``passed_on`` gives it,
and ``verify`` holds the host's answer to the same function, so a result's content,
``structuredContent``, ``isError`` and its server's own ``_meta`` entries cross unchanged.
A task's result crosses with one change, the same on both sides: ``with_task_id`` says the
upstream's task id as the host's.
"""

from __future__ import annotations

from typing import Any, Final

from .mcp import RELATED_TASK

__all__ = ["ENVELOPE_PREFIX", "passed_on", "with_task_id"]

ENVELOPE_PREFIX: Final = "io.modelcontextprotocol/"
_RESULT_TYPE: Final = "resultType"


def passed_on(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` without its era's envelope (a new dict; ``result`` is left as it is)."""
    out = {key: value for key, value in result.items() if key != _RESULT_TYPE}
    meta = out.get("_meta")
    if isinstance(meta, dict):
        kept = {key: value for key, value in meta.items() if not key.startswith(ENVELOPE_PREFIX)}
        if kept:
            out["_meta"] = kept
        else:
            del out["_meta"]
    return out


def with_task_id(result: dict[str, Any], upstream_id: str, task_id: str) -> dict[str, Any]:
    """``result`` with the upstream's task id said as the host's where a task id is said: a
    task's own ``taskId``, a ``CreateTaskResult``'s ``task``, the related-task meta."""
    out = dict(result)
    if out.get("taskId") == upstream_id:
        out["taskId"] = task_id
    task = out.get("task")
    if isinstance(task, dict) and task.get("taskId") == upstream_id:
        out["task"] = {**task, "taskId": task_id}
    meta = out.get("_meta")
    related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
    if isinstance(meta, dict) and isinstance(related, dict) and related.get("taskId") == upstream_id:
        out["_meta"] = {**meta, RELATED_TASK: {**related, "taskId": task_id}}
    return out
