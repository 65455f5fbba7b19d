"""A task line's sampling fields (``temperature``, ``top_p``, ``seed``, ``max_output_tokens``,
``top_logprobs``): checked when the line is read, by the one check ``RunOptions`` has too
(``relay.stages.sampling_fields``), and given to the task's run as its ``RunOptions`` fields.
A task with ``seed`` runs with ``api`` ``chat``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import UsageError
from ..relay.stages.sampling_fields import SAMPLING, SEED_NEEDS_CHAT, sampling_problem

__all__ = ["SAMPLING", "check_sampling", "check_task_seed"]


def check_sampling(key: str, value: Any, task_id: str) -> str | None:
    """Why ``value`` is not a ``key`` of task ``task_id``, or None when it is one."""
    why = sampling_problem(key, value)
    return None if why is None else f"task {task_id}: {why}"


def check_task_seed(fields: Mapping[str, Any], api: str, task_id: str) -> None:
    """A task's ``seed`` needs the chat dialect: said in the task's words."""
    if "seed" in fields and api != "chat":
        raise UsageError(f"task {task_id}: {SEED_NEEDS_CHAT}: give the task api chat (its api is {api})")
