"""Which endpoint a batch task asks: its own (``base_url``, or ``model`` ``offline``), else
the batch's.

A batch whose every task names its own endpoint needs none of its own: no ``--base-url``,
no ``OPENAI_API_KEY``. So the batch's endpoint is opened when a task first asks for it,
and a batch that cannot open one still runs the tasks that name theirs. Where the tasks
are known before they run (a tasks file, a list), a task that names none while the batch
has none is a usage error before anything starts, naming the task's line; a task met
later (tasks given one by one) ends with that error as its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..assembly.options import OFFLINE_MODEL, RunOptions
from ..assembly.parts import hosted_endpoint
from ..errors import UsageError
from .tasks import TaskSpec, names_its_endpoint

__all__ = [
    "batch_endpoint_problem", "check_batch_endpoint", "first_without_endpoint", "no_endpoint_error",
    "task_place",
]


def batch_endpoint_problem(run: RunOptions) -> str | None:
    """Why the batch's own endpoint cannot be asked (no key for a hosted one, a bad URL), or None."""
    if run.model == OFFLINE_MODEL:
        return None
    try:
        hosted_endpoint(run)
    except UsageError as exc:
        return str(exc)
    return None


def check_batch_endpoint(run: RunOptions, first_without: str | None) -> None:
    """A usage error when a task (``first_without``: where it is) needs the batch's endpoint
    and the batch has none."""
    if first_without is None:
        return
    problem = batch_endpoint_problem(run)
    if problem is not None:
        raise UsageError(f"{problem} ({first_without} names no base_url of its own, so it needs the batch's "
                         "endpoint)")


def first_without_endpoint(tasks: Sequence[Mapping[str, Any] | TaskSpec]) -> str | None:
    """Where the first of ``tasks`` (given by a program) that names no endpoint is, or None."""
    for position, row in enumerate(tasks, 1):
        overrides = row.overrides if isinstance(row, TaskSpec) else row
        if isinstance(overrides, Mapping) and not names_its_endpoint(overrides):
            return f"task {position}"
    return None


def task_place(spec: TaskSpec) -> str:
    """``task t3 (line 3 of the tasks file)``, or ``task t3`` for one given by a program."""
    return f"task {spec.id} (line {spec.line} of the tasks file)" if spec.line else f"task {spec.id}"


def no_endpoint_error(spec: TaskSpec, problem: str) -> str:
    """What a task that needed the batch's missing endpoint ends with."""
    return (f"{task_place(spec)} names no base_url, and the batch has no endpoint of its own: {problem}; "
            "give the task a base_url, or the batch --base-url (or its key)")
