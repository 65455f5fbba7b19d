"""``batch(tasks, options)``: run many tasks, each result written and handed over as it ends.

The driver locks the batch folder for the whole batch (``folder_lock``: a second batch on
it is refused), prepares it (``--restart`` empties it; otherwise a folder that already
holds a batch is resumed: its finished tasks are skipped), hands the tasks that are left
to an engine (``local``, or ``ray``), appends each result to ``results.jsonl`` (flushed)
and yields it. ``batch_async`` is the same as an async iterator; the CLI uses it.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import shutil
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from ..assembly.options import OFFLINE_MODEL, RunOptions
from ..errors import UsageError, os_reason
from .endpoints import check_batch_endpoint, first_without_endpoint
from .folder_lock import LOCK_FILE, folder_lock
from .results import RESULTS_FILE, TRANSCRIPTS, ResultsFile, TaskResult
from .tasks import TaskFile, TaskSpec, task_specs

if TYPE_CHECKING:
    from ..otel.setup import ExportSettings

__all__ = ["ENGINES", "BatchOptions", "batch", "batch_async", "default_concurrency"]

ENGINES: Final = ("local", "ray")
Engine = Literal["local", "ray"]
Start = Literal["auto", "resume", "restart"]
TaskSource = str | Path | TaskFile | Iterable[Mapping[str, Any] | TaskSpec]


@dataclass(kw_only=True)
class BatchOptions:
    """Where a batch writes, how many tasks run at once, and the options of every run."""

    out: str | Path
    """The batch folder: ``results.jsonl`` and ``transcripts/<id>.jsonl``."""
    run: RunOptions = field(default_factory=RunOptions)
    """Each task's run options (a task line may override some); ``approve`` None refuses
    tools that are not read-only (a batch never prompts), ``consent.approve_all`` runs them."""
    concurrency: int | None = None
    """Tasks in flight at once over the whole batch (None: ``default_concurrency``)."""
    start: Start = "auto"
    """``auto``: resume a folder that holds a batch, else start; ``resume``: the same, said
    explicitly; ``restart``: delete the folder's batch and start over."""
    ray_address: str | None = None
    """``--engine ray``: the cluster (default ``RAY_ADDRESS``, else a local Ray started for
    the batch and stopped after it)."""
    actors: int | None = None
    """``--engine ray``: workers (default one per node)."""
    ray_join_timeout: float = 30.0
    """``--engine ray`` with an address: seconds to join the cluster before giving up."""
    collect: bool = False
    """``--engine ray``: each transcript is sent back and written by the driver."""
    on_started: Callable[[TaskSpec], None] | None = None
    """Told each task as it is handed to a worker (progress)."""
    on_ready: Callable[[], None] | None = None
    """Told once the folder is this batch's (locked and prepared), before any task starts."""
    otel: ExportSettings | None = None
    """Trace the batch, exporting as these settings say, in this process and in every Ray
    worker (``batch --otel``: ``ExportSettings.from_environment(os.environ, file)``; needs
    the otel extra). None: the tasks are traced with ``run.tracer_provider`` (or the global
    provider) when one is set, by the local engine only."""


def default_concurrency(run: RunOptions) -> int:
    """The stand-in takes many requests at once; a hosted endpoint gets a polite number."""
    return 32 if run.model == OFFLINE_MODEL else 8


def check_folder(out: Path) -> None:
    """``out`` can be a batch folder: new, empty, or a batch's. A folder holding anything
    else is never deleted or written into."""
    holds_batch = any((out / name).exists() for name in (RESULTS_FILE, TRANSCRIPTS, LOCK_FILE))
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file, not a folder")
    if out.is_dir() and not holds_batch and any(out.iterdir()):
        raise UsageError(f"--out {out} holds files that are not a batch's (no {RESULTS_FILE}, "
                         f"no {TRANSCRIPTS}/): give a new or empty folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot make the batch folder {out}: {os_reason(exc)}") from None


def prepare_folder(out: Path, start: Start) -> None:
    """Make the locked ``out`` a batch folder; ``restart`` deletes the batch it holds first."""
    if start == "restart":
        (out / RESULTS_FILE).unlink(missing_ok=True)
        shutil.rmtree(out / TRANSCRIPTS, ignore_errors=True)
    (out / TRANSCRIPTS).mkdir(parents=True, exist_ok=True)


def _specs(tasks: TaskSource) -> Iterable[TaskSpec]:
    if isinstance(tasks, str | Path):
        return TaskFile(tasks)
    if isinstance(tasks, TaskFile):
        return tasks
    return task_specs(tasks)


def _first_without_endpoint(tasks: TaskSource, specs: Iterable[TaskSpec]) -> str | None:
    """Where the first task that needs the batch's endpoint is, when the tasks are known
    before they run (a file, a list); None for tasks given one by one (each says so itself)."""
    if isinstance(specs, TaskFile):
        return specs.first_without_endpoint
    return first_without_endpoint(tasks) if isinstance(tasks, list | tuple) else None


async def batch_async(
    tasks: TaskSource, options: BatchOptions, *, engine: Engine = "local"
) -> AsyncIterator[TaskResult]:
    """Run every task of ``tasks`` not finished in ``options.out`` yet; each result as it ends."""
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r} (engines: {', '.join(ENGINES)})")
    specs = _specs(tasks)
    check_batch_endpoint(options.run, _first_without_endpoint(tasks, specs))
    out = Path(options.out)
    check_folder(out)
    with folder_lock(out):
        prepare_folder(out, options.start)
        results = ResultsFile(out / RESULTS_FILE)
        tally = _Tally()
        try:
            if options.on_ready is not None:
                options.on_ready()
            left = (spec for spec in specs if spec.id not in results.finished)
            concurrency = options.concurrency or default_concurrency(options.run)
            with _batch_trace(options, engine, concurrency, tally) as trace:
                source = _engine_results(engine, left, options, out, concurrency, trace)
                async for result in source:
                    if results.append(result):
                        tally.count(result)
                        yield result
        finally:
            results.close()


@dataclass
class _Tally:
    """The batch span's counts."""

    tasks: int = 0
    failed: int = 0

    def count(self, result: TaskResult) -> None:
        self.tasks += 1
        self.failed += result.status != "completed"


@contextlib.contextmanager
def _batch_trace(options: BatchOptions, engine: Engine, concurrency: int, tally: _Tally) -> Iterator[Any]:
    """The batch's ``BatchTrace`` (``otel/batch_spans.py``) while it runs, its span open;
    None, and no OpenTelemetry import, when the batch is not traced."""
    traced = options.otel is not None or options.run.tracer_provider is not None
    if not traced and "opentelemetry.trace" not in sys.modules:
        yield None
        return
    from ..otel.batch_spans import BatchTrace

    run = options.run
    trace = BatchTrace.of(run.tracer_provider, options.otel, meter_provider=run.meter_provider)
    if trace is None:
        yield None
        return
    with trace:
        trace.open({"toolrelay.batch.engine": engine, "toolrelay.batch.concurrency": concurrency,
                    "gen_ai.request.model": options.run.model})
        try:
            yield trace
        finally:
            trace.ended({"toolrelay.batch.tasks": tally.tasks, "toolrelay.batch.failed": tally.failed},
                        failed=tally.failed > 0)


def _engine_results(
    engine: Engine, specs: Iterable[TaskSpec], options: BatchOptions, out: Path, concurrency: int,
    trace: Any = None,
) -> AsyncIterator[TaskResult]:
    if engine == "ray":
        from .ray_engine import run_ray  # Ray is an optional extra: imported when asked for

        return run_ray(specs, options.run, out, concurrency=concurrency, address=options.ray_address,
                       actors=options.actors, collect=options.collect, on_started=options.on_started,
                       join_timeout=options.ray_join_timeout, trace=trace)
    from .local_engine import run_local

    return run_local(specs, options.run, out, concurrency=concurrency, on_started=options.on_started,
                     trace=trace)


def batch(tasks: TaskSource, options: BatchOptions, *, engine: Engine = "local") -> Iterator[TaskResult]:
    """``batch_async`` for synchronous code: its event loop runs in a thread of its own,
    handing each result over as it ends; closing the iterator early (or leaving the loop
    over it by an exception) cancels the batch: its servers are stopped before it returns."""
    handoff: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
    loop = asyncio.new_event_loop()

    async def drive() -> None:
        try:
            async for result in batch_async(tasks, options, engine=engine):
                handoff.put(("result", result))
        except asyncio.CancelledError:
            pass
        except BaseException as exc:  # handed to the caller's thread, raised there
            handoff.put(("error", exc))
        finally:
            handoff.put(("end", None))

    main = loop.create_task(drive())
    thread = threading.Thread(target=loop.run_until_complete, args=(main,), name="toolrelay-batch",
                              daemon=True)
    thread.start()
    try:
        while True:
            kind, value = handoff.get()
            if kind == "error":
                raise value
            if kind == "end":
                return
            yield value
    finally:
        if thread.is_alive():
            loop.call_soon_threadsafe(main.cancel)
        thread.join()
        loop.close()
