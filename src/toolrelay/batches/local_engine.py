"""The local engine: the tasks of a batch run ``concurrency`` at a time in this process.

One ``BatchSession`` (servers and endpoints started once) and ``concurrency`` workers on
one event loop, each taking the next task from the iterator when its last one ended: the
tasks are read as they are needed and each result leaves as soon as it exists, so memory
does not grow with the number of tasks. A worker takes its next task only once its last
result was taken (the caller has seen it end), so what the caller counts running is never
more than ``concurrency``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..assembly.options import RunOptions
from .results import TaskResult
from .session import BatchSession
from .tasks import TaskSpec

if TYPE_CHECKING:
    from ..otel.batch_spans import BatchTrace

__all__ = ["run_local"]

_DONE = None
_Handed = tuple[TaskResult, asyncio.Event]
"""A result, and the event set once the caller has taken it."""


async def run_local(
    specs: Iterable[TaskSpec], options: RunOptions, out: Path, *, concurrency: int,
    on_started: Callable[[TaskSpec], None] | None = None, trace: BatchTrace | None = None,
) -> AsyncIterator[TaskResult]:
    """Each task's result as it finishes (in no fixed order); ``trace``: the tasks' spans."""
    async with BatchSession(options, out, trace=trace) as session:
        finished: asyncio.Queue[_Handed | None] = asyncio.Queue()
        source = iter(specs)
        workers = [asyncio.create_task(_work(session, source, finished, on_started))
                   for _ in range(max(1, concurrency))]
        try:
            for _ in workers:
                while (handed := await finished.get()) is not _DONE:
                    assert handed is not None
                    result, taken = handed
                    try:
                        yield result
                    finally:
                        taken.set()
            for worker in workers:
                await worker  # raises what a worker raised
        finally:
            for worker in workers:
                worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*workers, return_exceptions=True)


async def _work(
    session: BatchSession, source: Iterator[TaskSpec], finished: asyncio.Queue[_Handed | None],
    on_started: Callable[[TaskSpec], None] | None,
) -> None:
    try:
        for spec in source:  # workers share the iterator: each takes the next task
            if on_started is not None:
                on_started(spec)
            taken = asyncio.Event()
            await finished.put((await session.run_task(spec), taken))
            await taken.wait()
    finally:
        finished.put_nowait(_DONE)
