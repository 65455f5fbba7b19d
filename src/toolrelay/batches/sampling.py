"""A task line's sampling fields: ``temperature``, ``top_p``, ``seed``, ``max_output_tokens``
and ``top_logprobs``, checked when the line is read and sent in each request body of the
task under their Responses names (the chat dialect renames ``max_output_tokens`` to
``max_completion_tokens`` and adds ``logprobs: true`` to ``top_logprobs``:
``protocol.chat``). ``top_logprobs`` also asks a Responses endpoint to
``include`` ``message.output_text.logprobs`` (dropped in chat, which has no ``include``).
``seed`` is a Chat Completions field the Responses API has not: a task with it runs with
``api`` ``chat``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..errors import UsageError

__all__ = ["LOGPROBS_INCLUDE", "SAMPLING", "check_sampling", "sampling_body"]

SAMPLING: Final = ("temperature", "top_p", "seed", "max_output_tokens", "top_logprobs")
"""The sampling fields a task line may carry."""
LOGPROBS_INCLUDE: Final = "message.output_text.logprobs"
_RANGES: Final = {"temperature": (0.0, 2.0), "top_p": (0.0, 1.0)}


def check_sampling(key: str, value: Any, task_id: str) -> str | None:
    """Why ``value`` is not a ``key`` of task ``task_id``, or None when it is one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"task {task_id}: {key} must be a number, got {value!r}"
    if key in _RANGES:
        low, high = _RANGES[key]
        if not low <= value <= high:
            return f"task {task_id}: {key} must be from {low:g} to {high:g}, got {value!r}"
        return None
    if not isinstance(value, int):
        return f"task {task_id}: {key} must be a whole number, got {value!r}"
    if key == "max_output_tokens" and value < 1:
        return f"task {task_id}: max_output_tokens must be at least 1, got {value!r}"
    if key == "top_logprobs" and not 0 <= value <= 20:
        return f"task {task_id}: top_logprobs must be from 0 to 20, got {value!r}"
    return None


def sampling_body(
    fields: Mapping[str, Any], extra: Mapping[str, Any], api: str, task_id: str
) -> dict[str, Any]:
    """The request body's extra fields (``extra``, the run's own) with a task's ``fields``."""
    if "seed" in fields and api != "chat":
        raise UsageError(f"task {task_id}: seed is a Chat Completions field the Responses API has not: "
                         f"give the task api chat (its api is {api})")
    body = {**extra, **fields}
    if "top_logprobs" in fields:
        include = extra.get("include")
        given = list(include) if isinstance(include, list) else []
        body["include"] = given if LOGPROBS_INCLUDE in given else [*given, LOGPROBS_INCLUDE]
    return body
