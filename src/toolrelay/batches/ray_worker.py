"""One Ray worker of a batch: an async actor holding a ``BatchSession`` (its MCP servers
and model endpoints, opened once) and running many tasks on it at once.

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
from typing import Any

from ..runner import RunOptions
from .results import TaskResult
from .session import BatchSession, transcript_path
from .tasks import TaskSpec

__all__ = ["BatchWorker"]


class BatchWorker:
    """The actor's body: ``open`` starts the servers, ``run_task`` runs one task."""

    def __init__(self, options: RunOptions, out: str, collect: bool) -> None:
        self._options = options
        self._collect = collect
        self._own = Path(tempfile.mkdtemp(prefix="toolrelay-batch-")) if collect else None
        self._out = self._own if self._own is not None else Path(out)
        self._session: BatchSession | None = None
        self._opening = asyncio.Lock()

    def pid(self) -> int:
        """The worker's process id (tests kill it)."""
        return os.getpid()

    async def open(self) -> None:
        """Start the servers and the endpoint (their errors surface here, before any task)."""
        async with self._opening:
            if self._session is None:
                (self._out / "transcripts").mkdir(parents=True, exist_ok=True)
                self._session = await BatchSession(self._options, self._out).__aenter__()

    async def run_task(self, spec: TaskSpec, held: str | None = None) -> tuple[TaskResult, str | None]:
        """The task's result, and with ``collect`` its transcript's text (``held``: the part
        of it the driver already has, to resume from)."""
        await self.open()
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
        """Stop the servers (the driver calls it before it lets the worker go)."""
        session, self._session = self._session, None
        if session is not None:
            await session.__aexit__(None, None, None)
        if self._own is not None:
            shutil.rmtree(self._own, ignore_errors=True)

    async def __ray_shutdown__(self) -> Any:  # Ray calls it when the actor exits gracefully
        await self.close()
