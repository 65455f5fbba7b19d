"""The Ray engine: the same batch on Ray actors, each running many tasks at once.

``ray_cluster`` connects: to ``--ray-address`` or ``RAY_ADDRESS`` when given, else to a
Ray of its own, started for the batch on 127.0.0.1 only (Ray would otherwise take the
machine's interface address), with usage statistics off and no dashboard, and shut down
when the batch ends, so no Ray process outlives it. It never joins a cluster that was not
named. A program that has called ``ray.init`` itself keeps its Ray (used, not shut down).

``run_ray`` starts the workers (``--actors``, default one per node, spread over the
nodes), feeds them the tasks with back-pressure (at most ``concurrency`` in flight over
the whole cluster, each to the least busy worker) and yields each result as it comes
back. A worker that dies: a new one takes its place and its unfinished tasks go to the
workers again, where each resumes from its transcript (``resume.py``): a call with a
recorded result is never sent again; Ray's own retries are off.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from ..errors import UsageError
from ..runner import RunOptions
from .ray_worker import BatchWorker
from .results import TaskResult
from .session import transcript_path
from .tasks import TaskSpec

__all__ = ["LOCAL_RAY_ENV", "MAX_LOST_WORKERS", "import_ray", "ray_cluster", "run_ray"]

LOCAL_RAY_ENV: Final = {
    "RAY_USAGE_STATS_ENABLED": "0",
    # Ray resolves 127.0.0.1 to the interface address unless it thinks clusters are off;
    # with this, a local node binds to loopback (read when ray is imported).
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
}
MAX_LOST_WORKERS: Final = 3
"""A task whose worker died this many times ends with status ``error``."""
INSTALL_HINT: Final = "--engine ray needs Ray: pip install 'toolrelay[ray]'"


def import_ray(*, local: bool = False) -> Any:
    """The ``ray`` module (typed loosely: Ray is an optional extra); ``local`` sets the
    environment of a local Ray first."""
    if local:
        os.environ.update(LOCAL_RAY_ENV)
        constants = sys.modules.get("ray._private.ray_constants")
        if constants is not None:  # imported before the environment was set
            setattr(constants, "ENABLE_RAY_CLUSTER", False)  # noqa: B010
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise UsageError(INSTALL_HINT) from None


@contextlib.contextmanager
def ray_cluster(address: str | None) -> Iterator[Any]:
    """Ray, connected for the batch (see the module docstring); disconnected after it."""
    address = address or os.environ.get("RAY_ADDRESS") or None
    ray = import_ray(local=address is None)
    if ray.is_initialized():
        yield ray
        return
    settings: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
    if address is None:
        settings.update(address="local", include_dashboard=False, _node_ip_address="127.0.0.1")
    try:
        ray.init(address=settings.pop("address", address), **settings)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise UsageError(f"cannot connect to Ray at {address or 'a local Ray'}: {exc}") from None
    try:
        if address is None and ray.util.get_node_ip_address() != "127.0.0.1":
            raise UsageError("the local Ray did not bind to 127.0.0.1; not running the batch on it")
        yield ray
    finally:
        ray.shutdown()


@dataclass(slots=True)
class _Worker:
    handle: Any
    busy: int = 0


class _Pool:
    """The workers: started, picked by load, replaced when one dies."""

    def __init__(self, ray: Any, options: RunOptions, out: Path, *, collect: bool, concurrency: int) -> None:
        self.ray = ray
        self._actor = ray.remote(BatchWorker).options(
            max_restarts=0, max_task_retries=0, num_cpus=0, max_concurrency=max(concurrency, 1),
            scheduling_strategy="SPREAD",
        )
        self._args = (options, os.path.abspath(out), collect)
        self.workers: list[_Worker] = []

    async def start(self, count: int) -> None:
        new = [_Worker(self._actor.remote(*self._args)) for _ in range(count)]
        self.workers += new
        try:
            await asyncio.gather(*(_awaitable(w.handle.open.remote()) for w in new))
        except Exception as exc:
            raise _cause(exc) from None

    def pick(self) -> _Worker:
        worker = min(self.workers, key=lambda w: w.busy)
        worker.busy += 1
        return worker

    async def replace(self, lost: _Worker) -> None:
        if lost in self.workers:
            self.workers.remove(lost)
            with contextlib.suppress(Exception):
                self.ray.kill(lost.handle, no_restart=True)
            await self.start(1)

    async def close(self) -> None:
        closing = [_awaitable(w.handle.close.remote()) for w in self.workers]
        await asyncio.gather(*closing, return_exceptions=True)
        for worker in self.workers:
            with contextlib.suppress(Exception):
                self.ray.kill(worker.handle, no_restart=True)


def _awaitable(ref: Any) -> asyncio.Future[Any]:
    return asyncio.wrap_future(ref.future())


def _cause(exc: BaseException) -> BaseException:
    """The worker's own exception inside Ray's wrapper (a server that cannot start...)."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc


def node_count(ray: Any) -> int:
    return max(1, sum(1 for node in ray.nodes() if node.get("Alive")))


def shipped(options: RunOptions) -> RunOptions:
    """The options as a worker needs them: paths absolute, nothing of this process."""
    config = options.config
    return replace(
        options, config=Path(config).resolve() if isinstance(config, str | Path) else config,
        script=Path(options.script).resolve() if options.script is not None else None,
        events=None, on_result=None, on_event=None, transcript=None,
    )


def _spec_shipped(spec: TaskSpec) -> TaskSpec:
    script = spec.overrides.get("script")
    if script is None:
        return spec
    return replace(spec, overrides={**spec.overrides, "script": str(Path(script).resolve())})


async def run_ray(
    specs: Iterable[TaskSpec], options: RunOptions, out: Path, *, concurrency: int,
    address: str | None = None, actors: int | None = None, collect: bool = False,
    on_started: Callable[[TaskSpec], None] | None = None,
) -> AsyncIterator[TaskResult]:
    """Each task's result as it finishes (in no fixed order)."""
    with ray_cluster(address) as ray:
        pool = _Pool(ray, shipped(options), out, collect=collect, concurrency=concurrency)
        try:
            await pool.start(actors or node_count(ray))
            async for result in _feed(pool, iter(specs), out, concurrency, collect, on_started):
                yield result
        finally:
            await pool.close()


async def _feed(
    pool: _Pool, source: Iterator[TaskSpec], out: Path, concurrency: int, collect: bool,
    on_started: Callable[[TaskSpec], None] | None,
) -> AsyncIterator[TaskResult]:
    flying: dict[asyncio.Future[Any], tuple[TaskSpec, _Worker]] = {}
    again: list[TaskSpec] = []
    lost: dict[str, int] = {}
    try:
        while True:
            while len(flying) < concurrency and (spec := again.pop() if again else next(source, None)):
                worker = pool.pick()
                held = _held(out, spec.id) if collect else None
                flying[_awaitable(worker.handle.run_task.remote(_spec_shipped(spec), held))] = (spec, worker)
                if on_started is not None and spec.id not in lost:
                    on_started(spec)
            if not flying:
                return
            done, _ = await asyncio.wait(flying, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                spec, worker = flying.pop(future)
                worker.busy -= 1
                try:
                    result, text = future.result()
                except pool.ray.exceptions.RayActorError:
                    lost[spec.id] = lost.get(spec.id, 0) + 1
                    await pool.replace(worker)
                    if lost[spec.id] < MAX_LOST_WORKERS:
                        again.append(spec)
                        continue
                    result, text = _given_up(spec, lost[spec.id]), None
                except Exception as exc:
                    raise _cause(exc) from None
                if text is not None:
                    transcript_path(out, spec.id).write_text(text, encoding="utf-8")
                yield result
    finally:
        for future in flying:
            future.cancel()


def _held(out: Path, task_id: str) -> str | None:
    path = transcript_path(out, task_id)
    return path.read_text(encoding="utf-8") if path.exists() else None


def _given_up(spec: TaskSpec, times: int) -> TaskResult:
    return TaskResult(id=spec.id, status="error", error=f"its Ray worker was lost {times} times; "
                      "run the batch again to resume it", transcript=f"transcripts/{spec.id}.jsonl")
