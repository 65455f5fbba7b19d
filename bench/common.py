"""Small, generic helpers shared by the benches: quick mode, statistics, pass order, a
process's RSS, CPU time and children from Linux /proc, and running a measuring child
process, and timing N runs of a loop against an endpoint that counts its own handler time
(``measure_runs``, ``run_record``, ``endpoint_stats``: the loop benches' method)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "BENCH_DIR",
    "CACHE",
    "ECHO_SERVERS",
    "TEST_SERVERS",
    "append_jsonl",
    "arg_parser",
    "child_pids",
    "cpu_seconds",
    "echo_server_command",
    "endpoint_stats",
    "measure_runs",
    "median_of",
    "medians_by",
    "print_ratios",
    "print_table",
    "quick",
    "ratio",
    "rotated",
    "rss_kb",
    "run_child",
    "run_record",
    "scaled",
    "served_base_url",
    "summary",
]

BENCH_DIR = Path(__file__).resolve().parent
CACHE = BENCH_DIR / ".cache"
TEST_SERVERS = BENCH_DIR.parent / "tests" / "testkit" / "servers"
"""The test servers the benches share with the tests (run by path)."""
ECHO_SERVERS = {
    "minimal": ("minimal_echo_server.py",),  # stdlib: shows a client's own cost
    "sdk": ("sdk_server.py", "stdio", "--echo-only"),  # the SDK's MCPServer with one tool
}


def echo_server_command(python: str, name: str) -> list[str]:
    """How to start the MCP echo server ``name`` (a key of ``ECHO_SERVERS``) over stdio."""
    script, *args = ECHO_SERVERS[name]
    return [python, str(TEST_SERVERS / script), *args]


def quick() -> bool:
    """BENCH_QUICK=1: fewer calls and passes, for a smoke run."""
    return os.environ.get("BENCH_QUICK", "") not in ("", "0")


def scaled(full: int, quick_value: int) -> int:
    return quick_value if quick() else full


def summary(samples_s: list[float]) -> dict[str, float]:
    """Median and p90 in milliseconds, and calls per second over the samples."""
    ordered = sorted(samples_s)
    return {
        "median_ms": statistics.median(ordered) * 1e3,
        "p90_ms": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))] * 1e3,
        "calls_per_s": len(ordered) / sum(ordered),
    }


def rss_kb(pid: int) -> dict[str, int]:
    """VmRSS (now) and VmHWM (peak) of a live process, in kB."""
    found: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0])
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def arg_parser(doc: str | None) -> argparse.ArgumentParser:
    """A parser whose --help shows the script's docstring as written."""
    return argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)


def child_pids(parent: int) -> list[int]:
    """The direct children of ``parent`` (a /proc walk)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # it ended while we looked
        if int(fields[1]) == parent:
            found.append(int(entry.name))
    return found


def rotated(names: Sequence[str], number: int) -> list[str]:
    """The order of pass ``number``: rotated by one each pass, so nobody always goes first."""
    shift = number % len(names) if names else 0
    return [*names[shift:], *names[:shift]]


def median_of(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def medians_by(
    records: Sequence[dict[str, Any]], key: str, fields: Sequence[str]
) -> dict[str, dict[str, float | None]]:
    """For each value of ``key`` (a client, a runner), the median of each field over its records."""
    names = list(dict.fromkeys(record[key] for record in records))
    return {name: {field: median_of([r.get(field) for r in records if r[key] == name]) for field in fields}
            for name in names}


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    return numerator / denominator if numerator and denominator else None


def run_child(command: list[str], *, timeout: float, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run a measuring child process; its last stdout line is its JSON record."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          env=None if env is None else {**os.environ, **env})
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(command[:4])}... failed ({done.returncode}):\n{done.stderr[-3000:]}")
    record: dict[str, Any] = json.loads(lines[-1])
    return record


def append_jsonl(path: str | None, record: dict[str, Any]) -> None:
    """Append one JSON line (with a timestamp and the interpreter) when ``path`` is given."""
    if path:
        stamped = {"ts": time.strftime("%Y-%m-%dT%H:%M:%S"), "python": sys.version.split()[0], **record}
        with open(path, "a") as handle:
            handle.write(json.dumps(stamped) + "\n")


def print_table(table: dict[str, dict[str, float | None]], *, title: str = "") -> None:
    """Columns are the table's keys (e.g. clients), rows their fields; '-' where missing."""
    columns = list(table)
    fields = list(dict.fromkeys(field for row in table.values() for field in row))
    width = max([14, *(len(c) + 2 for c in columns)])
    label = max([28, *(len(f) + 2 for f in fields)])
    print(f"\n{title:{label}}" + "".join(f"{c:>{width}}" for c in columns))
    for field in fields:
        cells = (table[c].get(field) for c in columns)
        shown = (f"{'-':>{width}}" if v is None else f"{v:>{width}.3f}" for v in cells)
        print(f"{field:{label}}" + "".join(shown))


def print_ratios(ratios: dict[str, float | None]) -> None:
    width = max(len(label) for label in ratios) + 2 if ratios else 0
    for label, value in ratios.items():
        print(f"{label:{width}}" + ("-" if value is None else f"{value:.3f}"))


# -- N runs of a loop against a counting endpoint (loop_bench.py's method) ---------------------

RunOnce = Callable[[str], Awaitable[str]]


def endpoint_stats(base_url: str, *, reset: bool = False) -> dict[str, Any]:
    """A bench endpoint's own count: ``requests`` and ``handler_s_total`` (reset: zeroed)."""
    root = base_url.rsplit("/v1", 1)[0]
    request = urllib.request.Request(root + ("/_stats/reset" if reset else "/_stats"),
                                     data=b"" if reset else None, method="POST" if reset else "GET")
    with urllib.request.urlopen(request, timeout=10) as answer:
        found: dict[str, Any] = json.loads(answer.read())
    return found


def run_record(samples: list[float], stats: dict[str, Any], connect_ms: float, client_cpu: float,
               server_cpu: float | None, runs: int) -> dict[str, Any]:
    """One runner's numbers: wall per run, the endpoint's share, the overhead per run and per
    turn (wall minus the endpoint's own time, over the requests), CPU per run."""
    wall = summary(samples)
    endpoint_ms = stats["handler_s_total"] / runs * 1e3
    requests = stats["requests"] / runs
    overhead = wall["median_ms"] - endpoint_ms
    return {"connect_ms": connect_ms, "wall_median_ms": wall["median_ms"], "wall_p90_ms": wall["p90_ms"],
            "endpoint_ms_per_run": endpoint_ms, "requests_per_run": requests, "overhead_ms_per_run": overhead,
            "overhead_ms_per_turn": overhead / max(requests, 1.0),
            "client_cpu_ms_per_run": client_cpu / runs * 1e3,
            "server_cpu_ms_per_run": None if server_cpu is None else server_cpu / runs * 1e3}


async def measure_runs(
    run_once: RunOnce, *, prompt: str, expected: str, runs: int, warmup: int, base_url: str,
    connect_ms: float, servers: bool = True, profile: bool = False,
) -> dict[str, Any]:
    """``warmup`` runs, then ``runs`` timed ones (each checked to answer ``expected``), the
    endpoint's count reset between; this process's CPU over the timed runs and, with
    ``servers``, its child processes' (the MCP servers). ``profile``: a cProfile of the timed
    runs on stderr. The record is ``run_record``'s."""
    for _ in range(warmup):
        said = await run_once(prompt)
        assert said == expected, said
    children = child_pids(os.getpid()) if servers else []
    endpoint_stats(base_url, reset=True)
    server_before, client_before = sum(map(cpu_seconds, children)), time.process_time()
    profiler = cProfile.Profile() if profile else None
    if profiler is not None:
        profiler.enable()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        text = await asyncio.wait_for(run_once(prompt), 60)
        samples.append(time.perf_counter() - started)
        assert text == expected, text
    if profiler is not None:
        profiler.disable()
    client_cpu = time.process_time() - client_before
    server_cpu = sum(map(cpu_seconds, children)) - server_before
    stats = endpoint_stats(base_url)
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(35)
        print(f"# cProfile of {runs} runs\n{out.getvalue()}", file=sys.stderr)
    return run_record(samples, stats, connect_ms, client_cpu, server_cpu if children else None, runs)


@contextlib.contextmanager
def served_base_url(command: list[str], marker: str, *, what: str = "the fake endpoint") -> Iterator[str]:
    """Run a fake endpoint (``command``) in its own process and yield the base URL it prints
    as ``MARKER=url`` on its first line; it is stopped when the block ends."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if not line.startswith(f"{marker}="):
            raise RuntimeError(f"{what} did not start: {line!r}")
        yield line.split("=", 1)[1]
    finally:
        process.terminate()
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()
