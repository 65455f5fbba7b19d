"""Loop overhead per model turn: toolrelay's relay loop beside the OpenAI Agents SDK and a
hand-written openai + mcp loop, against one fake endpoint and one stdio echo server.

A run = model request 1 (answered with a ``function_call`` to the echo tool) -> MCP
``tools/call`` -> model request 2 (carrying the ``function_call_output``; answered with
the final message). Runners (peer_adapters.py), each keeping its MCP connection open
across runs:

  toolrelay      relay.Relay over an open Catalog and a ResponsesClient
  agents         OpenAI Agents SDK, Runner.run + MCPServerStdio, its defaults
                 (tools/list sent to the server every turn)
  agents-cached  the same with cache_tools_list=True
  raw            hand-written loop: AsyncOpenAI.responses.create + ClientSession.call_tool

The endpoint (tests/testkit/servers/fake_responses.py) runs in its own process and reports its
own handler time; the MCP server is the stdlib minimal echo server for everyone (``--server
sdk`` for the SDK's MCPServer). Each runner runs in its own child process (the bench
venv's python). Overhead per run = median wall time of a run - the endpoint's own time
per run; per turn = that / model requests per run. It includes the MCP round trip and
the HTTP round trips. Passes rotate the order; figures are medians over passes, ratios
are from this run only. Floor: a bare http.client keep-alive POST to the endpoint.

Goal: toolrelay's overhead per turn <= 1/8 of the Agents SDK's and <= 1/3 of the raw loop's.

    python bench/loop_bench.py                   5 passes of 200 runs
    BENCH_QUICK=1 python bench/loop_bench.py     1 pass of 30 runs
    options: --runner NAME (repeatable), --server minimal|sdk, --runs, --passes, --json-out FILE,
             --profile [RUNNER] (cProfile of one child's runs, on stderr), --baseline-src DIR
             (also toolrelay@baseline: toolrelay with DIR, another checkout's src/, first on
             PYTHONPATH; before and after in one run)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from common import (
    BENCH_DIR,
    ECHO_SERVERS,
    TEST_SERVERS,
    append_jsonl,
    arg_parser,
    echo_server_command,
    endpoint_stats,  # noqa: F401  (re-exported: otel_bench.py imports it from here)
    measure_runs,
    medians_by,
    print_ratios,
    print_table,
    quick,
    ratio,
    rotated,
    run_child,
    scaled,
    served_base_url,
    summary,
)

PROMPT = "Please echo something, then tell me what you got."
EXPECTED = "Done. The tool returned: hello from the fake model"
SERVERS = ECHO_SERVERS
DEFAULT_RUNNERS = ["toolrelay", "agents", "agents-cached", "raw"]
FIELDS = ("connect_ms", "wall_median_ms", "wall_p90_ms", "endpoint_ms_per_run", "requests_per_run",
          "overhead_ms_per_run", "overhead_ms_per_turn", "client_cpu_ms_per_run", "server_cpu_ms_per_run")


# -- the endpoint ---------------------------------------------------------------------------


@contextlib.contextmanager
def fake_endpoint(python: str) -> Iterator[str]:
    """The fake Responses endpoint in its own process; yields its base URL."""
    command = [python, str(TEST_SERVERS / "fake_responses.py"), "--max-seconds", "3600"]
    with served_base_url(command, "FAKE_RESPONSES_BASE_URL") as base_url:
        yield base_url


def http_floor(base_url: str, requests: int) -> float:
    """Median ms of a bare keep-alive POST of a final-turn request (no SDK, no framework)."""
    parts = urlsplit(base_url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
    body = json.dumps({"model": "fake-model", "input": [{"type": "function_call_output", "call_id": "c1",
                                                           "output": "x"}]}).encode()
    samples = []
    for number in range(requests + 20):
        started = time.perf_counter()
        connection.request("POST", parts.path + "/responses", body, {"Content-Type": "application/json"})
        connection.getresponse().read()
        if number >= 20:
            samples.append(time.perf_counter() - started)
    connection.close()
    return summary(samples)["median_ms"]


# -- child: one runner ----------------------------------------------------------------------


async def measure(
    name: str, base_url: str, server_cmd: list[str], args: argparse.Namespace
) -> dict[str, Any]:
    from peer_adapters import RUNNERS, preload, resolve

    factory = resolve(name, RUNNERS)
    preload(name)
    started = time.perf_counter()
    async with factory(base_url, server_cmd) as run_once:
        connect_ms = (time.perf_counter() - started) * 1e3
        return await measure_runs(run_once, prompt=PROMPT, expected=EXPECTED, runs=args.runs,
                                  warmup=args.warmup, base_url=base_url, connect_ms=connect_ms,
                                  profile=bool(args.profile))


# -- parent ---------------------------------------------------------------------------------


def child_command(python: str, name: str, base_url: str, args: argparse.Namespace) -> list[str]:
    server_cmd = echo_server_command(python, args.server)
    return [python, str(BENCH_DIR / "loop_bench.py"), "--child", name, "--base-url", base_url,
            "--server-cmd", json.dumps(server_cmd), "--runs", str(args.runs), "--warmup", str(args.warmup)]


BASELINE = "toolrelay@baseline"
"""toolrelay run from ``--baseline-src`` (another checkout's src/ first on PYTHONPATH)."""


def run_passes(python: str, base_url: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    records = []
    names = [*(args.runner or DEFAULT_RUNNERS), *([BASELINE] if args.baseline_src else [])]
    for number in range(args.passes):
        for name in rotated(names, number):
            print(f"# pass {number + 1}/{args.passes}: {name}", file=sys.stderr)
            child, env = (("toolrelay", {"PYTHONPATH": args.baseline_src}) if name == BASELINE
                          else (name, None))
            record = run_child(child_command(python, child, base_url, args), timeout=1200, env=env)
            records.append({"runner": name, "pass": number + 1, **record})
    return records


def report(records: list[dict[str, Any]], floor_ms: float) -> tuple[dict[str, Any], dict[str, float | None]]:
    table = medians_by(records, "runner", FIELDS)
    print_table(table, title="per run (ms)")
    print(f"\nfloor: bare http.client keep-alive POST to the endpoint, median {floor_ms:.3f} ms per request")
    goals = {"agents": " (goal <= 0.125)", "raw": " (goal <= 0.333)"}
    ratios = {
        f"overhead per turn, {mine} / {peer}{goals.get(peer, '')}": ratio(
            table[mine]["overhead_ms_per_turn"], table[peer]["overhead_ms_per_turn"])
        for mine in table if mine.startswith("toolrelay")
        for peer in table if not peer.startswith("toolrelay")
    }
    if BASELINE in table and "toolrelay" in table:  # before and after, same run
        ratios[f"overhead per turn, toolrelay / {BASELINE}"] = ratio(
            table["toolrelay"]["overhead_ms_per_turn"], table[BASELINE]["overhead_ms_per_turn"])
        ratios[f"client CPU per run, toolrelay / {BASELINE}"] = ratio(
            table["toolrelay"]["client_cpu_ms_per_run"], table[BASELINE]["client_cpu_ms_per_run"])
    print()
    print_ratios(ratios)
    return table, ratios


def parse_args() -> argparse.Namespace:
    parser = arg_parser(__doc__)
    parser.add_argument("--runner", action="append", help=f"runner to measure (default {DEFAULT_RUNNERS})")
    parser.add_argument("--server", default="minimal", choices=sorted(SERVERS), help="the MCP echo server")
    parser.add_argument("--runs", type=int, default=scaled(200, 30), help="timed runs per runner and pass")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--passes", type=int, default=scaled(5, 1), help="cheap, and the loop is noisy")
    parser.add_argument("--json-out", help="append the summary as one JSON line")
    parser.add_argument("--profile", nargs="?", const="toolrelay", metavar="RUNNER",
                        help="cProfile one child's timed runs (stderr)")
    parser.add_argument("--baseline-src", help="also run toolrelay from this src/ directory (before/after)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--server-cmd", help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if args.child:
        record = asyncio.run(measure(args.child, args.base_url, json.loads(args.server_cmd), args))
        print(json.dumps(record))
        return
    from setup_peers import bench_python

    python = str(bench_python())
    with fake_endpoint(python) as base_url:
        if args.profile:
            command = [*child_command(python, args.profile, base_url, args), "--profile", args.profile]
            subprocess.run(command, check=True)
            return
        floor_ms = http_floor(base_url, args.runs)
        records = run_passes(python, base_url, args)
    table, ratios = report(records, floor_ms)
    append_jsonl(args.json_out, {"bench": "loop", "quick": quick(), "server": args.server, "runs": args.runs,
                                 "passes": args.passes, "http_floor_ms": floor_ms, "medians": table,
                                 "ratios": ratios, "records": records})


if __name__ == "__main__":
    main()
