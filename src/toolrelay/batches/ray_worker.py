"""One Ray worker of a batch: an async actor holding a ``BatchSession`` (its MCP servers
and model endpoints, opened once) and running many tasks on it at once, handed over and
handed back several at a time (``exchange``).

This module never imports Ray: ``ray_engine`` wraps ``BatchWorker`` with ``ray.remote``
(no restarts, no task retries: a lost worker's tasks are handed to another worker by the
driver, which resumes them from their transcripts, so Ray never re-runs a tool call
behind toolrelay's back). The class is pickled by reference, so toolrelay must be
importable where the workers run (``pip install 'toolrelay[ray]'`` there, or a runtime
env).

With ``collect`` the worker writes each transcript into a folder of its own and hands its
text back with the result (the driver writes it into ``--out``); the driver sends the part
it already holds of a resumed task's transcript with the task.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..assembly.options import RunOptions
from .results import TaskResult
from .session import BatchSession, transcript_path
from .tasks import TaskSpec

if TYPE_CHECKING:
    from ..otel.batch_spans import BatchTrace, ShippedTrace

__all__ = ["BatchWorker", "Finished", "Handed"]


Handed = tuple[TaskSpec, str | None]
"""A task as the driver hands it over: with ``collect``, the part of its transcript the
driver already holds (to resume from), else None."""
Finished = tuple[TaskResult, str | None]
"""A task's result, with ``collect`` its transcript's text."""


class BatchWorker:
    """The actor's body: ``open`` starts the servers; ``exchange`` takes new tasks and hands
    back the results of those that finished since the last call.

    One ``exchange`` call carries many tasks each way (a Ray round trip costs more than a
    stand-in task), and returns as soon as one result is ready, with every other result
    ready by then: the driver's next call brings the tasks that fill the freed places."""

    def __init__(self, options: RunOptions, out: str, collect: bool,
                 trace: ShippedTrace | None = None) -> None:
        """``trace``: the batch's tracing as data (the worker exports as the driver does)."""
        self._options = options
        self._shipped_trace = trace
        self._trace: BatchTrace | None = None
        self._collect = collect
        self._own = Path(tempfile.mkdtemp(prefix="toolrelay-batch-")) if collect else None
        self._out = self._own if self._own is not None else Path(out)
        self._session: BatchSession | None = None
        self._opening = asyncio.Lock()
        self._running: set[asyncio.Task[None]] = set()
        self._finished: list[Finished] = []
        self._failure: BaseException | None = None
        self._ready = asyncio.Event()

    def pid(self) -> int:
        """The worker's process id (tests kill it)."""
        return os.getpid()

    async def open(self) -> None:
        """Start the servers and the endpoint (their errors surface here, before any task)."""
        async with self._opening:
            if self._session is None:
                (self._out / "transcripts").mkdir(parents=True, exist_ok=True)
                if self._shipped_trace is not None and self._trace is None:
                    self._trace = self._shipped_trace.open()
                self._session = await BatchSession(self._options, self._out, trace=self._trace).__aenter__()

    async def exchange(self, tasks: list[Handed]) -> list[Finished]:
        """Start ``tasks``; then the results finished since the last call, waiting for one
        when there is none yet (and tasks are running). Raises what a task raised (an
        interruption: what ends a task is in its result)."""
        await self.open()
        for handed in tasks:
            running = asyncio.create_task(self._run(*handed))
            self._running.add(running)
            running.add_done_callback(self._running.discard)
        while not self._finished and self._failure is None and self._running:
            self._ready.clear()
            await self._ready.wait()
        if self._failure is not None:
            raise self._failure
        finished, self._finished = self._finished, []
        return finished

    async def _run(self, spec: TaskSpec, held: str | None) -> None:
        try:
            finished = await self._run_task(spec, held)
            self._finished.append(finished)  # the list of now: exchange swaps it for a new one
        except BaseException as exc:  # handed to the driver by the next exchange
            self._failure = self._failure or exc
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._ready.set()

    async def _run_task(self, spec: TaskSpec, held: str | None) -> Finished:
        assert self._session is not None
        path = transcript_path(self._out, spec.id)
        if self._collect and held is not None:
            path.write_text(held, encoding="utf-8")
        result = await self._session.run_task(spec)
        if not self._collect:
            return result, None
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        path.unlink(missing_ok=True)
        return result, text

    async def close(self) -> None:
        """Stop the tasks and the servers (the driver calls it before it lets the worker go)."""
        for running in list(self._running):
            running.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)
        session, self._session = self._session, None
        if session is not None:
            await session.__aexit__(None, None, None)
        if self._own is not None:
            shutil.rmtree(self._own, ignore_errors=True)
        trace, self._trace = self._trace, None
        if trace is not None:  # its last spans flushed before Ray lets the process go
            trace.__exit__(None, None, None)

    async def __ray_shutdown__(self) -> Any:  # Ray calls it when the actor exits gracefully
        await self.close()
