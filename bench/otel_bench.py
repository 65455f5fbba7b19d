"""What tracing costs: toolrelay's loop with OpenTelemetry on and off, in the same run, the
OpenTelemetry SDK's own floor for the same trace, and the start-up of a command with the
``otel`` extra installed but not asked for.

Loop (as loop_bench.py's toolrelay runner: ``Relay.run`` over one open Catalog and one
ResponsesClient, the fake Responses endpoint in its own process, the stdlib minimal echo
server): a run = model request 1 (a ``function_call``) -> ``tools/call`` -> request 2.

  off       no tracing (no OpenTelemetry module is imported in that child)
  absent    the same with ``opentelemetry`` unimportable, as if the extra were not
            installed: tracing off must cost nothing (off / absent = 1)
  listened  no tracing, but a subscriber that does nothing on the run's event stream, as a
            transcript or the progress lines of ``toolrelay run`` subscribe: the events are
            built (every wire message, each turn) and fanned out
  on        each run traced as ``toolrelay run --otel`` traces it: ``RunTracing`` (the run, its
            turns, its call; the traceparent in the call's ``_meta``) with a
            ``BatchSpanProcessor`` and the OTLP/HTTP exporter, and the metrics with a periodic
            OTLP/HTTP metric reader, exporting to a real receiver on loopback (``oteltap``, in
            this process); every span is counted there
  floor     no loop and no toolrelay code: the SDK alone making what one traced run made
            (captured from one run of ``on``: the same spans, kinds, parents, attributes --
            all given at start, in one call -- the same traceparent injection and the same
            metric points), with the same processor, exporters and receiver

Each mode runs in its own child process; passes rotate the order. Overhead per turn =
(median wall time of a run - the endpoint's own time per run) / model requests per run;
client CPU per call = the child's CPU time (all its threads: the exporter's too) over the
timed runs / calls; for ``on`` and ``floor`` the timed window ends with the span processor
flushed, so it holds the export of every span it made. Ratios are from this run only.
Goal: tracing on costs <= 10% more, per turn and per call. The floor says how much of the
rest is the SDK's own (its share of an untraced run) and how much toolrelay's code.

Start-up: ``python -m toolrelay tools --json`` in a folder (spawns the file server, lists
its tools, exits), alternating between this environment (the extra installed, tracing not
asked for) and the same with ``opentelemetry`` made unimportable, median wall time each;
``-X importtime`` then checks that no OpenTelemetry module is imported when tracing is
off. Goal: no worse than without the extra.

It needs the otel extra and oteltap: ``bench/setup_peers.py``'s venv has them (run_all.py
runs it there), as has the project's test venv (``pip install -e '.[test]'``).

    python bench/otel_bench.py                  5 passes of 200 runs, 10 start-ups each
    BENCH_QUICK=1 python bench/otel_bench.py    1 pass of 30 runs, 3 start-ups each
    options: --runs, --passes, --mode NAME (repeatable), --startups, --no-startup,
             --json-out FILE
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from common import (
    BENCH_DIR,
    append_jsonl,
    arg_parser,
    echo_server_command,
    median_of,
    print_ratios,
    print_table,
    quick,
    ratio,
    rotated,
    run_child,
    scaled,
    summary,
)
from loop_bench import EXPECTED, PROMPT, endpoint_stats, fake_endpoint

MODES = ("off", "absent", "listened", "on", "floor")
LOOP_MODES = ("off", "listened", "on")
"""The modes a child measures in-process (``absent`` is ``off`` with OpenTelemetry blocked)."""
FIELDS = ("wall_median_ms", "endpoint_ms_per_run", "requests_per_run", "overhead_ms_per_turn",
          "client_cpu_ms_per_call", "main_thread_cpu_ms_per_call", "spans_per_run")
_BLOCK_OTEL = """import sys
class _NoOtel:
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ImportError("opentelemetry blocked by otel_bench")
        return None
sys.meta_path.insert(0, _NoOtel())
"""


# -- child: one mode --------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def opened(base_url: str, server_cmd: list[str]) -> AsyncIterator[tuple[Any, Any, Any]]:
    """The catalog, the model client and their event stream, open for every run."""
    from toolrelay.client.config import ServerConfig
    from toolrelay.events import EventStream
    from toolrelay.model import ModelEndpoint, ResponsesClient
    from toolrelay.relay.catalog import Catalog

    events = EventStream()
    server = ServerConfig(name="echo", transport="stdio", command=server_cmd[0], args=tuple(server_cmd[1:]))
    endpoint = ModelEndpoint(base_url=base_url, api_key="sk-bench")
    async with (Catalog([server], events=events) as catalog,
                ResponsesClient(endpoint, events=events) as model):
        yield catalog, model, events


def tracing_parts(endpoint: str) -> tuple[Any, Any]:
    """The tracer and meter providers of ``toolrelay run --otel``, exporting to ``endpoint``."""
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource({"service.name": "toolrelay-bench"})
    tracers = TracerProvider(resource=resource)
    tracers.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces")))
    reader = PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=f"{endpoint}/v1/metrics"))
    return tracers, MeterProvider(metric_readers=[reader], resource=resource)


def flush(providers: tuple[Any, Any] | None) -> None:
    if providers is not None:
        providers[0].force_flush()


async def measure(mode: str, base_url: str, server_cmd: list[str], endpoint: str, runs: int,
                  warmup: int) -> dict[str, Any]:
    from toolrelay.relay.loop import Relay
    from toolrelay.relay.stages.request import RequestSettings

    providers = tracing_parts(endpoint) if mode in ("on", "floor") else None
    async with opened(base_url, server_cmd) as (catalog, model, events):
        settings = RequestSettings(model="fake-model", stream=False)
        if mode == "listened":
            events.subscribe(lambda event: None)

        async def run_once(tracers: Any = None, meters: Any = None) -> None:
            hooks: tuple[Any, ...] = ()
            with contextlib.ExitStack() as stack:
                if tracers is not None:
                    from toolrelay.otel.metrics import RunMetrics, run_metrics
                    from toolrelay.otel.run_spans import RunTracing

                    metrics = run_metrics(meters) if mode == "on" else RunMetrics(meters)
                    tracing = RunTracing(tracers.get_tracer("toolrelay"), catalog=catalog, metrics=metrics)
                    hooks = (stack.enter_context(tracing.listen(events)),)
                relay = Relay(catalog, model, settings, events=events, endpoint=model.url, hooks=hooks)
                result = await relay.run(PROMPT)
            if result.final_text != EXPECTED or not all(call.ok for call in result.calls):
                raise RuntimeError(f"the run ended {result.status}: {result.final_text!r}")

        if mode == "floor":  # one traced run, captured; then the SDK alone makes it again, runs times
            captured = Captured()
            await run_once(captured.tracers, captured)
            return captured.replay(providers, runs, warmup)
        for _ in range(warmup):
            await run_once(*(providers or ()))
        endpoint_stats(base_url, reset=True)
        samples, cpu_before, main_before = [], time.process_time(), time.thread_time()
        for _ in range(runs):
            started = time.perf_counter()
            await run_once(*(providers or ()))
            samples.append(time.perf_counter() - started)
        main_cpu = time.thread_time() - main_before  # the loop's thread alone, before the flush
        flush(providers)  # the export of every span made is part of the cost
        client_cpu = time.process_time() - cpu_before
        stats = endpoint_stats(base_url)
    if providers is not None:  # the metrics flushed after the timing, as at a command's exit
        providers[0].shutdown()
        providers[1].shutdown()
    wall = summary(samples)
    endpoint_ms = stats["handler_s_total"] / runs * 1e3
    requests = stats["requests"] / runs
    return {"wall_median_ms": wall["median_ms"], "endpoint_ms_per_run": endpoint_ms,
            "requests_per_run": requests,
            "overhead_ms_per_turn": (wall["median_ms"] - endpoint_ms) / max(requests, 1.0),
            "client_cpu_ms_per_call": client_cpu / runs * 1e3,
            "main_thread_cpu_ms_per_call": main_cpu / runs * 1e3, "runs": runs + warmup,
            "otel_imported": "opentelemetry.trace" in sys.modules, "otel_importable": importable()}


def importable() -> bool:
    """Whether ``opentelemetry`` could be imported here (``absent`` blocks it), asked after the timing."""
    import importlib.util

    try:
        return importlib.util.find_spec("opentelemetry") is not None
    except ImportError:
        return False


class Captured:
    """What one traced run made, kept to be made again by the SDK alone: its finished spans
    (an in-memory exporter) and each metric point recorded (this object is the run's meter
    provider: its histograms keep every ``record``)."""

    def __init__(self) -> None:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        self.spans = InMemorySpanExporter()
        self.tracers = TracerProvider()
        self.tracers.add_span_processor(SimpleSpanProcessor(self.spans))
        self.points: list[tuple[str, float, dict[str, Any]]] = []
        self.instruments: dict[str, dict[str, Any]] = {}

    def get_meter(self, *args: Any, **kwargs: Any) -> Captured:  # the MeterProvider side
        return self

    def create_histogram(self, name: str, **kwargs: Any) -> Any:
        self.instruments[name] = kwargs
        points = self.points

        class Histogram:
            def record(self, amount: float, attributes: Any = None, context: Any = None) -> None:
                points.append((name, amount, dict(attributes or {})))

        return Histogram()

    def replay(self, providers: tuple[Any, Any] | None, runs: int, warmup: int) -> dict[str, Any]:
        """CPU per run of making the captured spans and points ``runs`` times, then flushing."""
        from opentelemetry import propagate, trace

        assert providers is not None
        tracer = providers[0].get_tracer("toolrelay")
        meter = providers[1].get_meter("toolrelay")
        histograms = {name: meter.create_histogram(name, **made) for name, made in self.instruments.items()}
        spans = list(self.spans.get_finished_spans())
        children: dict[int | None, list[Any]] = {}
        for span in spans:
            children.setdefault(span.parent.span_id if span.parent else None, []).append(span)

        def make(template: Any, parent: Any) -> None:
            span = tracer.start_span(template.name, context=parent, kind=template.kind,
                                     attributes=dict(template.attributes or {}))
            inside = trace.set_span_in_context(span, parent)
            if template.name.startswith("execute_tool"):  # the traceparent put in the call's _meta
                propagate.inject({}, context=inside)
            for event in template.events:
                span.add_event(event.name, dict(event.attributes or {}))
            for child in children.get(template.context.span_id, ()):
                make(child, inside)
            if not template.status.is_unset:
                span.set_status(template.status)
            span.end()

        def once() -> None:
            for root in children.get(None, ()):
                make(root, None)
            for name, amount, attributes in self.points:
                histograms[name].record(amount, attributes)

        for _ in range(warmup):
            once()
        cpu_before, main_before, main_cpu = time.process_time(), time.thread_time(), 0.0
        for number in range(runs):
            once()
            if number % 100 == 99:  # no loop pauses here: keep the processor's queue from overflowing
                main_cpu += time.thread_time() - main_before
                providers[0].force_flush()
                main_before = time.thread_time()
        main_cpu += time.thread_time() - main_before
        flush(providers)
        client_cpu = time.process_time() - cpu_before
        providers[0].shutdown()
        providers[1].shutdown()
        return {"wall_median_ms": None, "endpoint_ms_per_run": None, "requests_per_run": None,
                "overhead_ms_per_turn": None, "client_cpu_ms_per_call": client_cpu / runs * 1e3,
                "main_thread_cpu_ms_per_call": main_cpu / runs * 1e3, "runs": runs + warmup,
                "otel_imported": True, "captured_spans": len(spans), "captured_points": len(self.points)}


# -- parent -----------------------------------------------------------------------------------


class SpanCounter:
    """A real OTLP/HTTP receiver (oteltap) on loopback in a thread of its own, counting spans."""

    def __init__(self) -> None:
        self.count = 0
        self.endpoint = ""
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve()), daemon=True)

    def __enter__(self) -> SpanCounter:
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the OTLP receiver did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)

    async def _serve(self) -> None:
        sys.path.insert(0, str(BENCH_DIR.parent / "tests"))
        from testkit.otlp_receiver import otlp_receiver

        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        async with otlp_receiver() as receiver:
            self.endpoint = receiver.endpoint
            self._ready.set()
            while not self._stop.is_set():
                self.count = len(receiver.received)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), 0.05)
            self.count = len(receiver.received)

    def settled(self, timeout: float = 10.0) -> int:
        """The count once no span has arrived for a moment (the last export is in)."""
        deadline, last = time.monotonic() + timeout, -1
        while time.monotonic() < deadline and self.count != last:
            last = self.count
            time.sleep(0.3)
        return self.count


def run_loop(args: argparse.Namespace) -> tuple[dict[str, dict[str, float | None]], list[dict[str, Any]]]:
    python = sys.executable
    records: list[dict[str, Any]] = []
    blocked = without_otel(Path(tempfile.mkdtemp(prefix="otel-bench-")))
    with fake_endpoint(python) as base_url, SpanCounter() as spans:
        for number in range(args.passes):
            for mode in rotated(list(args.mode), number):
                print(f"# pass {number + 1}/{args.passes}: tracing {mode}", file=sys.stderr)
                before = spans.settled()
                command = [python, str(BENCH_DIR / "otel_bench.py"), "--child",
                           "off" if mode == "absent" else mode, "--base-url", base_url,
                           "--endpoint", spans.endpoint, "--server-cmd",
                           json.dumps(echo_server_command(python, "minimal")), "--runs", str(args.runs),
                           "--warmup", str(args.warmup)]
                record = run_child(command, timeout=1200, env=blocked if mode == "absent" else None)
                exported = spans.settled() - before
                record["spans_per_run"] = exported / record["runs"]
                records.append({"mode": mode, "pass": number + 1, **record})
    table = {mode: {name: median_of([r[name] for r in records if r["mode"] == mode]) for name in FIELDS}
             for mode in args.mode}
    return table, records


def without_otel(folder: Path) -> dict[str, str]:
    """The environment of a child in which ``import opentelemetry`` fails (a
    ``sitecustomize`` in ``folder``), as if the extra were not installed."""
    blocker = folder / "no-otel"
    blocker.mkdir(exist_ok=True)
    (blocker / "sitecustomize.py").write_text(_BLOCK_OTEL, encoding="utf-8")
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(blocker), os.environ.get("PYTHONPATH")]))}


def timed_startups(count: int) -> dict[str, float]:
    """Median ms of ``toolrelay tools --json``, the extra importable or not, alternating."""
    folder = Path(tempfile.mkdtemp(prefix="otel-bench-"))
    (folder / "notes.txt").write_text("hello\n", encoding="utf-8")
    base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    envs = {"extra installed, off": base, "no opentelemetry": {**base, **without_otel(folder)}}
    command = [sys.executable, "-m", "toolrelay", "tools", "--json"]
    samples: dict[str, list[float]] = {name: [] for name in envs}
    for number in range(count + 1):
        for name in rotated(list(envs), number):
            started = time.perf_counter()
            done = subprocess.run(command, cwd=folder, env=envs[name], capture_output=True, timeout=120)
            if done.returncode != 0:
                raise RuntimeError(f"{name}: toolrelay tools failed: {done.stderr.decode()[-400:]}")
            if number:  # the first round warms the caches
                samples[name].append(time.perf_counter() - started)
    traced = subprocess.run([sys.executable, "-X", "importtime", *command[1:]], cwd=folder, env=base,
                            capture_output=True, text=True, timeout=120)
    if "opentelemetry" in traced.stderr:
        raise RuntimeError("toolrelay tools imported OpenTelemetry with tracing off")
    return {name: statistics.median(values) * 1e3 for name, values in samples.items()}


def parse_args() -> argparse.Namespace:
    parser = arg_parser(__doc__)
    parser.add_argument("--runs", type=int, default=scaled(200, 30), help="timed runs per mode and pass")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--passes", type=int, default=scaled(5, 1))
    parser.add_argument("--startups", type=int, default=scaled(10, 3), help="start-ups per environment")
    parser.add_argument("--no-startup", action="store_true", help="skip the start-up measurement")
    parser.add_argument("--json-out", help="append the summary as one JSON line")
    parser.add_argument("--mode", action="append", choices=MODES, help="only these modes (repeatable)")
    parser.add_argument("--child", choices=(*LOOP_MODES, "floor"), help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--endpoint", help=argparse.SUPPRESS)
    parser.add_argument("--server-cmd", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.mode = args.mode or list(MODES)
    return args


def cost_ratios(table: dict[str, dict[str, float | None]]) -> dict[str, float | None]:
    """The goal's ratios, and where tracing's added CPU goes (shares of an untraced run)."""
    def field(mode: str, name: str) -> float | None:
        return table.get(mode, {}).get(name)

    cpu = {mode: field(mode, "client_cpu_ms_per_call") for mode in MODES}
    ratios = {"overhead per turn, on / off": ratio(field("on", "overhead_ms_per_turn"),
                                                   field("off", "overhead_ms_per_turn")),
              "client CPU per call, on / off": ratio(cpu["on"], cpu["off"]),
              "client CPU per call, on / listened": ratio(cpu["on"], cpu["listened"]),
              "client CPU per call, off / absent": ratio(cpu["off"], cpu["absent"])}
    off, listened, on, floor = cpu["off"], cpu["listened"], cpu["on"], cpu["floor"]
    if off and listened and on and floor:  # the CPU tracing adds, in three parts, as shares of off
        ratios["added: events built and fanned out, (listened - off) / off"] = (listened - off) / off
        ratios["added: the SDK's floor, floor / off"] = floor / off
        ratios["added: toolrelay's otel code, (on - listened - floor) / off"] = (on - listened - floor) / off
    return ratios


def main() -> None:
    args = parse_args()
    if args.child:
        record = asyncio.run(measure(args.child, args.base_url, json.loads(args.server_cmd), args.endpoint,
                                     args.runs, args.warmup))
        print(json.dumps(record))
        return
    table, records = run_loop(args)
    print_table(table, title="the loop, tracing off and on (medians over passes)")
    print_ratios(ratios := cost_ratios(table))
    startup = None if args.no_startup else timed_startups(args.startups)
    if startup is not None:
        print_table({name: {"median_ms": value} for name, value in startup.items()},
                    title="toolrelay tools --json start-up")
        ratios["start-up, extra installed (off) / without it"] = ratio(startup["extra installed, off"],
                                                                        startup["no opentelemetry"])
        print_ratios({name: value for name, value in ratios.items() if name.startswith("start-up")})
    append_jsonl(args.json_out, {"bench": "otel", "quick": quick(), "runs": args.runs, "passes": args.passes,
                                 "medians": table, "startup_ms": startup, "ratios": ratios,
                                 "records": records})


if __name__ == "__main__":
    main()
