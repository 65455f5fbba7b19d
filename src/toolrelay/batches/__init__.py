"""Many tasks: ``toolrelay batch`` and ``toolrelay.batch(tasks, options)`` (the package is
``batches``: ``toolrelay.batch`` is the function).

A tasks file (``tasks.py``) becomes one relay run per task, run ``concurrency`` at a time
on servers and model endpoints started once per process (``session.py``, ``routing.py``),
locally (``local_engine.py``) or on Ray actors (``ray_engine.py``); each task's transcript and
its line in ``results.jsonl`` (``results.py``) are written as it goes, so a batch that is
stopped resumes where it was (``resume.py``); one batch at a time holds the folder
(``folder_lock.py``); ``driver.py`` ties it together.

Layering: batches/ sits just above ``runner``; each task's run is built from ``RunOptions``
by ``assembly.parts.Assembly``, as ``run_async``'s is. It imports assembly/, relay/, client/,
model/, offline/, transcript/ and the bottom modules;
never cli/, verify/, view/ or demo. Only cli/ imports it.
"""

from __future__ import annotations

from .driver import ENGINES, BatchOptions, batch, batch_async, default_concurrency
from .results import TaskResult, read_results
from .summary import Summary
from .tasks import TaskFile, TaskSpec

__all__ = [
    "ENGINES",
    "BatchOptions",
    "Summary",
    "TaskFile",
    "TaskResult",
    "TaskSpec",
    "batch",
    "batch_async",
    "default_concurrency",
    "read_results",
]
