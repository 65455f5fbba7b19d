"""Start-up with the 500-tool catalog: spawn to the first model request, 20 stdio MCP servers
connected in parallel, beside the OpenAI Agents SDK with the same servers.

The servers are ``tests/testkit/servers/catalog_server.py``'s 20 (github, slack, calendar,
files, postgres, ... × 25 tools). Each runner is a fresh process doing one task against
the loop bench's fake Responses endpoint (``fake_responses.py``, in its own process), which
notes ``time.monotonic()`` when the first Responses request arrives (CLOCK_MONOTONIC is one
clock for every process here): the figure is that instant minus the spawn.

  toolrelay  ``python -m toolrelay run TASK --config catalog.json --base-url URL --no-stream
             --yes``: the CLI starts the 20 servers at once (``ServerPool``), lists, declares
             the 500 tools and sends turn 1
  agents     this script with ``--agents-peer``: imports the Agents SDK, 20 ``MCPServerStdio``
             (``cache_tools_list=True``) under ``MCPServerManager(connect_in_parallel=True)``,
             ``Agent(mcp_config={"include_server_in_tool_names": True})`` (without it the SDK
             refuses the catalog: several servers have a ``list_issues``), ``Runner.run``

Both then finish the run (the endpoint asks for one call to the first tool offered, then
answers), so each also reports spawn to exit. Runs alternate between the runners; medians.
Goal: toolrelay's start-up to the first request ≤ 1/3 of the Agents SDK's.

    python bench/catalog_startup_bench.py                  7 runs each
    BENCH_QUICK=1 python bench/catalog_startup_bench.py    2 runs each
    options: --runs N, --servers N, --json-out FILE
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agents_catalog import agents_catalog_run
from common import (
    BENCH_DIR,
    TEST_SERVERS,
    append_jsonl,
    arg_parser,
    endpoint_stats,
    print_ratios,
    print_table,
    quick,
    ratio,
    rotated,
    scaled,
)
from loop_bench import fake_endpoint

TASK = "Open an issue about the failing build"
RUN_TIMEOUT = 180.0
API_KEY = "sk-fake-bench"


# -- the peer: the Agents SDK with the same servers ---------------------------------------


async def agents_peer(entries: dict[str, dict[str, Any]], base_url: str) -> str:
    return await agents_catalog_run(entries, base_url, task=TASK, model="fake-model", api_key=API_KEY)


# -- measuring ----------------------------------------------------------------------------


def commands(python: str, config: Path, base_url: str) -> dict[str, list[str]]:
    return {
        "toolrelay": [python, "-m", "toolrelay", "run", TASK, "--config", str(config), "--base-url", base_url,
                      "--model", "fake-model", "--no-stream", "--yes"],
        "agents": [python, str(BENCH_DIR / "catalog_startup_bench.py"), "--agents-peer", str(config),
                   base_url],
    }


def timed_run(command: list[str], base_url: str, folder: Path) -> dict[str, float]:
    """Spawn → first request and spawn → exit, in ms, of one run."""
    endpoint_stats(base_url, reset=True)
    env = {**os.environ, "OPENAI_API_KEY": API_KEY}
    started = time.monotonic()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                          env=env)
    ended = time.monotonic()
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])}... failed ({done.returncode}):\n{done.stderr[-3000:]}")
    first = endpoint_stats(base_url)["first_request_monotonic"]
    if first is None:
        raise RuntimeError(f"{' '.join(command[:4])}... never sent a model request")
    return {"first_request_ms": (first - started) * 1e3, "exit_ms": (ended - started) * 1e3}


def measure(python: str, servers: int, runs: int) -> dict[str, list[dict[str, float]]]:
    sys.path.insert(0, str(TEST_SERVERS))
    import catalog_server

    records: dict[str, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="catalog-startup-") as folder, fake_endpoint(python) as base_url:
        config = Path(folder) / "catalog.json"
        config.write_text(json.dumps(catalog_server.config(python, servers)))
        named = commands(python, config, base_url)
        records = {label: [] for label in named}
        for number in range(runs + 1):  # run 0 warms the file cache and is not counted
            for label in rotated(list(named), number):
                record = timed_run(named[label], base_url, Path(folder))
                if number:
                    records[label].append(record)
    return records


Table = dict[str, dict[str, float | None]]


def report(records: dict[str, list[dict[str, float]]]) -> tuple[Table, dict[str, float | None]]:
    table: Table = {
        label: {field: statistics.median(record[field] for record in found)
                for field in ("first_request_ms", "exit_ms")}
        for label, found in records.items()
    }
    print_table(table, title="spawn to (ms, medians)")
    ratios = {
        "toolrelay / agents, spawn to first request (goal <= 0.333)":
            ratio(table["toolrelay"]["first_request_ms"], table["agents"]["first_request_ms"]),
        "toolrelay / agents, spawn to exit": ratio(table["toolrelay"]["exit_ms"], table["agents"]["exit_ms"]),
    }
    print()
    print_ratios(ratios)
    return table, ratios


def main() -> None:
    parser = arg_parser(__doc__)
    parser.add_argument("--runs", type=int, default=scaled(7, 2))
    parser.add_argument("--servers", type=int, default=20, help="how many catalog servers (25 tools each)")
    parser.add_argument("--json-out", help="append the summary as one JSON line")
    parser.add_argument("--agents-peer", nargs=2, metavar=("CONFIG", "URL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.agents_peer:
        config, base_url = args.agents_peer
        print(asyncio.run(agents_peer(json.loads(Path(config).read_text())["mcpServers"], base_url)))
        return
    from setup_peers import bench_python, compile_toolrelay

    python = str(bench_python())
    compile_toolrelay()
    records = measure(python, args.servers, args.runs)
    table, ratios = report(records)
    append_jsonl(args.json_out, {"bench": "catalog_startup", "quick": quick(), "runs": args.runs,
                                 "servers": args.servers, "medians_ms": table, "ratios": ratios,
                                 "records": records})


if __name__ == "__main__":
    main()
