"""tools/call through ``toolrelay proxy`` vs straight to the server: added latency and CPU.

The host is toolrelay's own MCP client (client.Connection, the ``toolrelay`` adapter of
peer_adapters.py) over stdio; the server the stdlib echo server (near-zero cost, so the
difference is the proxy's). Two ways, measured in the same run, each in its own child
process: ``direct`` (host → echo server) and ``proxy`` (host → ``toolrelay proxy`` over
stdio → echo server over stdio, no transcript unless ``--transcript``). Per way: spawn,
handshake, 50 warm-up calls, N sequential calls (median latency, calls/s, host CPU per
call, the processes beneath it: the proxy and the server, CPU per call), then N calls
with 16 in flight (calls/s). Passes rotate the order; each figure is the median over
passes; the added latency is proxy median − direct median.

Goal (issue 27): <= 0.3 ms added median latency per call; >= 5,000 calls/s through the
proxy with 16 in flight.

    python bench/proxy_bench.py                    3 passes of 2,000 + 2,000 calls
    BENCH_QUICK=1 python bench/proxy_bench.py      1 pass of 200 + 200 calls
    options: -n, -c, --passes, --transcript (the proxy records both legs), --json-out FILE
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import (
    BENCH_DIR,
    append_jsonl,
    arg_parser,
    child_pids,
    cpu_seconds,
    echo_server_command,
    medians_by,
    print_table,
    rotated,
    run_child,
    scaled,
    summary,
)

WAYS = ("direct", "proxy")
FIELDS = ("seq_median_ms", "seq_calls_per_s", "host_cpu_us_per_call", "below_cpu_us_per_call",
          "c16_calls_per_s", "c16_median_ms")


def _descendants(pid: int) -> list[int]:
    found, queue = [], [pid]
    while queue:
        children = child_pids(queue.pop())
        found += children
        queue += children
    return found


async def measure(way: str, command: list[str], tool: str, args: argparse.Namespace) -> dict[str, Any]:
    from peer_adapters import CLIENTS, resolve

    factory = resolve("toolrelay", CLIENTS)
    arguments = {"text": "x" * args.payload}
    async with factory(command, None) as client:
        assert tool in await client.list_tools()
        for _ in range(args.warmup):
            await client.call_tool(tool, arguments)
        below = _descendants(os.getpid())
        below_before, host_before = sum(map(cpu_seconds, below)), time.process_time()
        samples = []
        for _ in range(args.n):
            started = time.perf_counter()
            text = await client.call_tool(tool, arguments)
            samples.append(time.perf_counter() - started)
        host_cpu, below_cpu = time.process_time() - host_before, sum(map(cpu_seconds, below)) - below_before
        assert text == arguments["text"], text
        stats = summary(samples)
        record = {"seq_median_ms": stats["median_ms"], "seq_calls_per_s": stats["calls_per_s"],
                  "host_cpu_us_per_call": host_cpu / args.n * 1e6,
                  "below_cpu_us_per_call": below_cpu / args.n * 1e6}
        record |= await _concurrent(client, tool, arguments, args.n, args.concurrency)
    return record


async def _concurrent(client: Any, tool: str, arguments: dict[str, str], calls: int,
                      in_flight: int) -> dict[str, float]:
    samples: list[float] = []
    remaining = [calls]

    async def worker() -> None:
        while remaining[0] > 0:
            remaining[0] -= 1
            started = time.perf_counter()
            assert await client.call_tool(tool, arguments) == arguments["text"]
            samples.append(time.perf_counter() - started)

    started = time.perf_counter()
    async with asyncio.TaskGroup() as group:
        for _ in range(in_flight):
            group.create_task(worker())
    wall = time.perf_counter() - started
    return {"c16_calls_per_s": len(samples) / wall, "c16_median_ms": summary(samples)["median_ms"]}


def _way(python: str, way: str, folder: Path, args: argparse.Namespace) -> tuple[list[str], str]:
    """The command the host starts, and the tool's name as the host sees it."""
    echo = echo_server_command(python, "minimal")
    if way == "direct":
        return echo, "echo"
    config = folder / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"echo": {"command": echo[0], "args": echo[1:]}}}))
    command = [python, "-m", "toolrelay", "proxy", "--config", str(config), "--pins", "off"]
    if args.transcript:
        command += ["--transcript", str(folder / "proxy.jsonl")]
    return command, "echo__echo"


def run_passes(python: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    records = []
    with tempfile.TemporaryDirectory() as folder:
        for number in range(args.passes):
            for way in rotated(list(WAYS), number):
                print(f"# pass {number + 1}/{args.passes}: {way}", file=sys.stderr)
                command, tool = _way(python, way, Path(folder), args)
                child = [python, str(BENCH_DIR / "proxy_bench.py"), "--child", way,
                         "--command", json.dumps(command), "--tool", tool,
                         "-n", str(args.n), "-c", str(args.concurrency),
                         "--payload", str(args.payload), "--warmup", str(args.warmup)]
                records.append({"way": way, "pass": number + 1, **run_child(child, timeout=900)})
    return records


def parse_args() -> argparse.Namespace:
    parser = arg_parser(__doc__)
    parser.add_argument("-n", type=int, default=scaled(2000, 200), help="calls per phase")
    parser.add_argument("-c", "--concurrency", type=int, default=16, help="calls in flight (second phase)")
    parser.add_argument("--payload", type=int, default=200, help="bytes of echo text")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--passes", type=int, default=scaled(3, 1))
    parser.add_argument("--transcript", action="store_true", help="the proxy records both legs meanwhile")
    parser.add_argument("--json-out", help="append the summary as one JSON line")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--command", help=argparse.SUPPRESS)
    parser.add_argument("--tool", help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if args.child:
        print(json.dumps(asyncio.run(measure(args.child, json.loads(args.command), args.tool, args))))
        return
    records = run_passes(sys.executable, args)
    table = medians_by(records, "way", FIELDS)
    print_table(table, title="tools/call, host → echo server (direct) or → toolrelay proxy → echo server")
    direct, proxy = table["direct"], table["proxy"]
    added_ms = (proxy["seq_median_ms"] or 0.0) - (direct["seq_median_ms"] or 0.0)
    added_cpu = (proxy["below_cpu_us_per_call"] or 0.0) - (direct["below_cpu_us_per_call"] or 0.0)
    through = proxy["c16_calls_per_s"] or 0.0
    print(f"added median latency per call: {added_ms:.3f} ms (goal <= 0.3)")
    print(f"added CPU per call (proxy process): {added_cpu:.0f} us")
    print(f"calls/s through the proxy, 16 in flight: {through:,.0f} (goal >= 5,000)")
    append_jsonl(args.json_out, {"bench": "proxy", "table": table, "added_median_ms": added_ms,
                                 "added_cpu_us_per_call": added_cpu, "c16_calls_per_s": through})


if __name__ == "__main__":
    main()
