"""The Ray engine: the same batch on Ray actors, each running many tasks at once.

``ray_cluster`` connects: to ``--ray-address`` or ``RAY_ADDRESS`` when given, else to a
Ray of its own, started for the batch on 127.0.0.1 only (Ray would otherwise take the
machine's interface address), with usage statistics off and no dashboard, and shut down
when the batch ends, so no Ray process outlives it. It never joins a cluster that was not
named. Joining one at an address: on a loopback address the driver's node is 127.0.0.1
too (else Ray offers the cluster an address it cannot reach, and waits forever); with a
token at hand, token authentication is on when the cluster asks for it (Ray turns it on by itself only
for ``auto``);
the join runs on a thread of its own, given up after ``join_timeout`` s (exit 3) and
interruptible meanwhile; at the end the driver disconnects, the cluster runs on, the
workers killed. A program that has called ``ray.init`` itself keeps its Ray (used, not
shut down).

``run_ray`` starts the workers (``--actors``, default one per node, spread over the
nodes), feeds them the tasks with back-pressure (at most ``concurrency`` in flight over
the whole cluster, shared out between the workers) and yields each result as it comes
back. Each worker has one call in flight at a time, ``exchange``, carrying the tasks
that fill its free places and bringing back every result ready, as soon as there is
one: a Ray round trip costs more than a stand-in task, so tasks travel several per call.
A worker that dies: a new one takes its place and its unfinished tasks go to it again,
where each resumes from its transcript (``resume.py``): a call with a recorded result
is never sent again; Ray's own retries are off.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import ipaddress
import logging
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..assembly.options import RunOptions
from ..assembly.prices import load_prices
from ..errors import TransportError, UsageError
from .ray_worker import BatchWorker, Handed
from .results import TaskResult
from .session import transcript_path
from .tasks import TaskSpec

if TYPE_CHECKING:
    from ..otel.batch_spans import BatchTrace, ShippedTrace

__all__ = [
    "LOCAL_RAY_ENV", "MAX_LOST_WORKERS", "hide_ray_notes", "import_ray", "ray_cluster", "run_ray", "windows",
]

LOCAL_RAY_ENV: Final = {
    "RAY_USAGE_STATS_ENABLED": "0",
    # Ray resolves 127.0.0.1 to the interface address unless it thinks clusters are off;
    # with this, a local node binds to loopback (read when ray is imported).
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
}
MAX_LOST_WORKERS: Final = 3
"""A task whose worker died this many times ends with status ``error``."""
JOIN_TIMEOUT: Final = 30.0
"""Seconds to join a cluster at an address before giving up (``--ray-join-timeout``)."""
AUTH_MODE_ENV: Final = "RAY_AUTH_MODE"
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


@contextlib.asynccontextmanager
async def ray_cluster(address: str | None, *, workers: int = 1,
                      join_timeout: float = JOIN_TIMEOUT) -> AsyncIterator[Any]:
    """Ray, connected for the batch (see the module docstring); disconnected after it. A
    local Ray gets ``workers`` CPUs: it starts that many worker processes ahead, which
    become the batch's actors (they ask for no CPU), and none that would sit idle."""
    address = address or os.environ.get("RAY_ADDRESS") or None
    on_loopback = address is None or is_loopback(address)
    ray = import_ray(local=on_loopback)
    if ray.is_initialized():
        yield ray
        return
    settings: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
    if on_loopback:  # the driver's node address: one the cluster reaches (Ray's own guess is not)
        settings["_node_ip_address"] = "127.0.0.1"
    if address is None:
        settings.update(address="local", include_dashboard=False, num_cpus=workers)
        _init(ray, None, settings)
    else:
        await _join(ray, address, settings, join_timeout)
    try:
        if address is None and ray.util.get_node_ip_address() != "127.0.0.1":
            raise UsageError("the local Ray did not bind to 127.0.0.1; not running the batch on it")
        yield ray
    finally:
        ray.shutdown()  # a joined cluster is only disconnected from, never stopped


def is_loopback(address: str) -> bool:
    """Whether a Ray address (``HOST:PORT``, ``ray://HOST:PORT``) names this machine's loopback."""
    host = address.partition("://")[2] or address
    host = host.rpartition(":")[0] or host
    if host.strip("[]") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


_AUTH_PROBE: Final = """
import signal, sys
signal.alarm(int(sys.argv[2]))  # no handler: the kernel ends this process, GIL held or not
from ray._raylet import GcsClient
try:
    GcsClient(address=sys.argv[1]).internal_kv_get(b"toolrelay-probe", None, timeout=5)
except Exception as exc:
    print(type(exc).__name__)
"""
"""Asks the cluster's GCS for nothing; prints ``AuthenticationError`` when it wants a token.
A process of its own: Ray's GCS client holds the GIL while it connects, which would keep
this process from handling a signal."""


def use_token_if_asked(address: str, timeout: float) -> None:
    """Token authentication for joining when the cluster asks for it (the probe tells):
    Ray turns it on by itself only for ``auto``; a cluster started with it (the default)
    refuses a driver without, and one without it loses the actors of a driver with it."""
    if os.environ.get(AUTH_MODE_ENV) or "://" in address or address == "auto":
        return  # said explicitly (``disabled`` too), or Ray's own ways
    seconds = str(max(1, int(timeout)))
    env = {**os.environ, AUTH_MODE_ENV: "disabled", **LOCAL_RAY_ENV}
    try:
        probe = subprocess.run([sys.executable, "-c", _AUTH_PROBE, address, seconds], env=env,
                               capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return  # ray.init will not do better: the join's own timeout says so
    if probe.stdout.strip() != "AuthenticationError":
        return
    token_file = os.environ.get("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray" / "auth_token"
    if not (os.environ.get("RAY_AUTH_TOKEN") or Path(token_file).is_file()):
        raise UsageError(f"the Ray cluster at {address} asks for a token: put it in RAY_AUTH_TOKEN "
                         "or ~/.ray/auth_token (ray get-auth-token prints it on the head)")
    os.environ[AUTH_MODE_ENV] = "token"
    if "ray" in sys.modules:  # Ray read its configuration already: read it again
        importlib.import_module("ray._raylet").Config.initialize("")


def _init(ray: Any, address: str | None, settings: dict[str, Any]) -> None:
    try:
        ray.init(address=settings.pop("address", address), **settings)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise UsageError(f"cannot connect to Ray at {address or 'a local Ray'}: {exc}") from None


def hide_ray_notes() -> None:
    """``batch --quiet``: Ray's note that the local Ray it started uses token authentication
    (nothing to do about it) is not shown either; its warnings of trouble still are."""
    logging.getLogger(_TOKEN_SETUP_LOGGER).addFilter(_not_the_token_note)


_TOKEN_SETUP_LOGGER: Final = "ray._private.authentication.authentication_token_setup"


def _not_the_token_note(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith("Token authentication is enabled for this Ray cluster")


def _not_the_signal_note(record: logging.LogRecord) -> bool:
    return "SIGTERM handler is not set" not in record.getMessage()


async def _join(ray: Any, address: str, settings: dict[str, Any], timeout: float) -> None:
    """``ray.init`` on a thread of its own, so that a cluster that never answers is given up
    after ``timeout`` s and a signal meanwhile is handled (Ray's connecting holds the thread
    it runs on, signals included). The thread is a daemon: one given up does not hold exit."""
    loop = asyncio.get_running_loop()
    joined: asyncio.Future[BaseException | None] = loop.create_future()

    def settle(outcome: BaseException | None) -> None:
        if not joined.done():
            joined.set_result(outcome)

    def join() -> None:
        outcome: BaseException | None = None
        try:
            use_token_if_asked(address, timeout)
            _init(ray, address, settings)
        except BaseException as exc:  # handed to the event loop, raised there
            outcome = exc
        with contextlib.suppress(RuntimeError):  # the loop closed: the batch is over
            loop.call_soon_threadsafe(settle, outcome)

    # Ray notes that it sets no SIGTERM handler off the main thread: toolrelay has its own
    logging.getLogger("ray._private.worker").addFilter(_not_the_signal_note)
    threading.Thread(target=join, name="toolrelay-ray-join", daemon=True).start()
    try:
        outcome = await asyncio.wait_for(asyncio.shield(joined), timeout)
    except TimeoutError:
        raise TransportError(
            f"cannot join the Ray cluster at {address} within {timeout:g} s: check that its head "
            "is running there (ray status --address ADDRESS), that this machine reaches that "
            "address and port, and, with token authentication, that RAY_AUTH_TOKEN or "
            "~/.ray/auth_token holds the cluster's token") from None
    if outcome is not None:
        raise outcome


@dataclass(slots=True, eq=False)
class _Worker:
    handle: Any
    window: int
    """The tasks it holds at most at once: its share of the batch's concurrency."""
    tasks: dict[str, TaskSpec] = field(default_factory=dict)
    """Its tasks in flight, by id."""
    call: asyncio.Future[Any] | None = None
    """Its ``exchange`` in flight (one at a time)."""


def windows(concurrency: int, workers: int) -> list[int]:
    """``concurrency`` shared out as evenly as it goes (``-j`` bounds the whole cluster)."""
    share, extra = divmod(max(concurrency, 1), workers)
    return [share + (1 if number < extra else 0) for number in range(workers)]


class _Pool:
    """The workers: started, replaced when one dies, closed."""

    def __init__(self, ray: Any, options: RunOptions, out: Path, *, collect: bool,
                 trace: ShippedTrace | None = None) -> None:
        self.ray = ray
        # tasks run as asyncio tasks inside the actor, not as Ray calls: a few calls at once
        # suffice (an exchange, and close or a test's pid)
        self._actor = ray.remote(BatchWorker).options(
            max_restarts=0, max_task_retries=0, num_cpus=0, max_concurrency=8, scheduling_strategy="SPREAD",
        )
        self._args = (options, os.path.abspath(out), collect, trace)
        self.workers: list[_Worker] = []

    async def start(self, shares: list[int]) -> list[_Worker]:
        new = [_Worker(self._actor.remote(*self._args), share) for share in shares]
        self.workers += new
        try:
            await asyncio.gather(*(_awaitable(w.handle.open.remote()) for w in new))
        except Exception as exc:
            raise _cause(exc) from None
        return new

    async def replace(self, lost: _Worker) -> _Worker:
        self.workers.remove(lost)
        with contextlib.suppress(Exception):
            self.ray.kill(lost.handle, no_restart=True)
        [new] = await self.start([lost.window])
        return new

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
    if options.on_event is not None:  # a worker's events have no way back to this process
        raise UsageError("RunOptions.on_event is not told the events of tasks run by Ray workers (they "
                         "run in other processes): use the local engine to watch them as they happen, "
                         "or read each task's transcript and results.jsonl")
    if options.tools:  # each worker imports them by module path
        from ..functions.servers import check_importable

        check_importable(options.tools)
    config = options.config
    return replace(
        options, config=Path(config).resolve() if isinstance(config, str | Path) else config,
        script=Path(options.script).resolve() if options.script is not None else None,
        prices=load_prices(options.prices),  # read here: the file need not be on the workers' machines
        events=None, on_result=None, on_event=None, transcript=None,
        tracer_provider=None, meter_provider=None,  # providers cannot travel: the workers get a ShippedTrace
    )


def _spec_shipped(spec: TaskSpec) -> TaskSpec:
    script = spec.overrides.get("script")
    if script is None:
        return spec
    return replace(spec, overrides={**spec.overrides, "script": str(Path(script).resolve())})


async def run_ray(
    specs: Iterable[TaskSpec], options: RunOptions, out: Path, *, concurrency: int,
    address: str | None = None, actors: int | None = None, collect: bool = False,
    on_started: Callable[[TaskSpec], None] | None = None, join_timeout: float = JOIN_TIMEOUT,
    trace: BatchTrace | None = None,
) -> AsyncIterator[TaskResult]:
    """Each task's result as it finishes (in no fixed order); ``trace``: the batch's spans,
    the workers exporting alike (``BatchTrace.shipped``)."""
    ship = shipped(options)  # its usage errors before Ray starts
    async with ray_cluster(address, workers=actors or 1, join_timeout=join_timeout) as ray:
        pool = _Pool(ray, ship, out, collect=collect,
                     trace=trace.shipped() if trace is not None else None)
        try:
            await pool.start(windows(concurrency, actors or node_count(ray)))
            feeder = _Feeder(pool, iter(specs), out, collect, on_started)
            async for result in feeder.results():
                yield result
        finally:
            await pool.close()


class _Feeder:
    """Hands each worker tasks up to its window, several per call, and takes their results
    back as they come; a lost worker's tasks go to the worker that replaces it."""

    def __init__(self, pool: _Pool, source: Iterator[TaskSpec], out: Path, collect: bool,
                 on_started: Callable[[TaskSpec], None] | None) -> None:
        self.pool = pool
        self.source = source
        self.out = out
        self.collect = collect
        self.on_started = on_started
        self.again: list[TaskSpec] = []
        """Tasks of lost workers, to be handed out again (before new ones)."""
        self.lost: dict[str, int] = {}
        """Task id → how many of its workers were lost."""

    async def results(self) -> AsyncIterator[TaskResult]:
        for worker in self.pool.workers:
            self.send(worker)
        try:
            while calls := {w.call: w for w in self.pool.workers if w.call is not None}:
                done, _ = await asyncio.wait(calls, return_when=asyncio.FIRST_COMPLETED)
                for call in done:
                    worker = calls[call]
                    try:
                        finished = call.result()
                    except self.pool.ray.exceptions.RayActorError:
                        for result in await self.worker_lost(worker):
                            yield result
                        continue
                    except Exception as exc:
                        raise _cause(exc) from None
                    for result, text in finished:
                        del worker.tasks[result.id]
                        if text is not None:
                            transcript_path(self.out, result.id).write_text(text, encoding="utf-8")
                        yield result
                    self.send(worker)
        finally:
            for worker in self.pool.workers:
                if worker.call is not None:
                    worker.call.cancel()

    def send(self, worker: _Worker) -> None:
        """Start ``worker``'s next exchange: new tasks up to its window (none left: only
        the results of those it holds); no call when it holds none and none are left."""
        handed: list[Handed] = []
        while len(worker.tasks) < worker.window and (spec := self._next()) is not None:
            worker.tasks[spec.id] = spec
            handed.append((_spec_shipped(spec), _held(self.out, spec.id) if self.collect else None))
            if self.on_started is not None and spec.id not in self.lost:
                self.on_started(spec)
        worker.call = None
        if handed or worker.tasks:
            worker.call = _awaitable(worker.handle.exchange.remote(handed))

    def _next(self) -> TaskSpec | None:
        return self.again.pop() if self.again else next(self.source, None)

    async def worker_lost(self, worker: _Worker) -> list[TaskResult]:
        """Its tasks handed out again, to resume from their transcripts, up to
        ``MAX_LOST_WORKERS`` losses each; the results of those given up."""
        given_up = []
        for spec in worker.tasks.values():
            times = self.lost[spec.id] = self.lost.get(spec.id, 0) + 1
            if times < MAX_LOST_WORKERS:
                self.again.append(spec)
            else:
                given_up.append(_given_up(spec, times))
        worker.call = None
        self.send(await self.pool.replace(worker))
        return given_up


def _held(out: Path, task_id: str) -> str | None:
    path = transcript_path(out, task_id)
    return path.read_text(encoding="utf-8") if path.exists() else None


def _given_up(spec: TaskSpec, times: int) -> TaskResult:
    return TaskResult(id=spec.id, status="error", error=f"its Ray worker was lost {times} times; "
                      "run the batch again to resume it", transcript=f"transcripts/{spec.id}.jsonl")
