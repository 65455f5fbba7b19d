"""tools/call throughput, latency and client CPU: toolrelay's MCP client beside the mcp SDK's.

Clients (peer_adapters.py): ``toolrelay`` (client.Connection), ``toolrelay-catalog``
(Catalog.call: the relay's whole call path) and the peer ``sdk-session`` (mcp
ClientSession); ``--client sdk-client`` adds mcp.Client. Servers (tests/testkit/servers/,
shared with the tests): ``minimal`` (stdlib, near-zero cost: shows a client's own cost) and
``sdk`` (the SDK's MCPServer with one tool, ~2 ms of server CPU per call). Per (server,
client): spawn, handshake, tools/list, 50 warm-up calls, then N sequential ``echo``
calls (calls/s, median and p90 latency, client CPU per call, server CPU per call) and N
calls with 16 in flight.

Every measurement runs in its own child process (the bench venv's python), so the client
CPU per call is ``time.process_time()`` of that client alone; server CPU comes from
/proc. Passes rotate the clients' order; each figure is the median over passes, and the
ratios are against ``sdk-session`` measured in the same run.

Goal (minimal server, issue 9): toolrelay's client CPU per call <= 1/4 of the SDK's, sequential
calls/s >= 2x.

    python bench/client_bench.py                   3 passes of 2,000 + 2,000 calls
    BENCH_QUICK=1 python bench/client_bench.py     1 pass of 200 + 200 calls
    options: --client NAME (repeatable), --server minimal|sdk (repeatable), -n, -c, --passes,
             --json-out FILE, --profile [CLIENT] (cProfile of one child's sequential phase)
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import pstats
import sys
import time
from typing import Any

from common import (
    BENCH_DIR,
    ECHO_SERVERS,
    append_jsonl,
    arg_parser,
    child_pids,
    cpu_seconds,
    echo_server_command,
    medians_by,
    print_ratios,
    print_table,
    quick,
    ratio,
    rotated,
    run_child,
    scaled,
    summary,
)

SERVERS = ECHO_SERVERS
DEFAULT_CLIENTS = ["toolrelay", "toolrelay-catalog", "sdk-session"]
PEER = "sdk-session"
FIELDS = ("connect_ms", "seq_calls_per_s", "seq_median_ms", "seq_p90_ms", "client_cpu_us_per_call",
          "server_cpu_us_per_call", "c16_calls_per_s", "c16_median_ms")


# -- child: one client against one server -------------------------------------------------


async def _sequential(client: Any, arguments: dict[str, str], calls: int) -> dict[str, float]:
    servers = child_pids(os.getpid())
    server_before, client_before = sum(map(cpu_seconds, servers)), time.process_time()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        text = await client.call_tool("echo", arguments)
        samples.append(time.perf_counter() - started)
    client_cpu = time.process_time() - client_before
    server_cpu = sum(map(cpu_seconds, servers)) - server_before
    assert text == arguments["text"], text
    stats = summary(samples)
    return {"seq_calls_per_s": stats["calls_per_s"], "seq_median_ms": stats["median_ms"],
            "seq_p90_ms": stats["p90_ms"], "client_cpu_us_per_call": client_cpu / calls * 1e6,
            "server_cpu_us_per_call": server_cpu / calls * 1e6 if servers else None}


async def _concurrent(client: Any, arguments: dict[str, str], calls: int, in_flight: int) -> dict[str, float]:
    samples: list[float] = []
    remaining = [calls]

    async def worker() -> None:
        while remaining[0] > 0:
            remaining[0] -= 1
            started = time.perf_counter()
            text = await client.call_tool("echo", arguments)
            samples.append(time.perf_counter() - started)
            assert text == arguments["text"], text

    started = time.perf_counter()
    async with asyncio.TaskGroup() as group:
        for _ in range(in_flight):
            group.create_task(worker())
    wall = time.perf_counter() - started
    return {"c16_calls_per_s": len(samples) / wall, "c16_median_ms": summary(samples)["median_ms"]}


async def measure(name: str, command: list[str], args: argparse.Namespace) -> dict[str, Any]:
    from peer_adapters import CLIENTS, preload, resolve

    factory = resolve(name, CLIENTS)
    preload(name)
    arguments = {"text": "x" * args.payload}
    started = time.perf_counter()
    async with factory(command, None) as client:
        assert "echo" in await client.list_tools()
        record: dict[str, Any] = {"connect_ms": (time.perf_counter() - started) * 1e3}
        for _ in range(args.warmup):
            await client.call_tool("echo", arguments)
        profiler = cProfile.Profile() if args.profile else None
        if profiler is not None:
            profiler.enable()
        record |= await _sequential(client, arguments, args.n)
        if profiler is not None:
            profiler.disable()
            _print_profile(profiler, args.n)
        record |= await _concurrent(client, arguments, args.n, args.concurrency)
    return record


def _print_profile(profiler: cProfile.Profile, calls: int) -> None:
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(30)
    print(f"# cProfile of {calls} sequential calls (divide times by {calls} for per-call cost)\n"
          + out.getvalue(), file=sys.stderr)


# -- parent: passes, medians, ratios ------------------------------------------------------


def child_command(python: str, client: str, server: str, args: argparse.Namespace) -> list[str]:
    server_cmd = echo_server_command(python, server)
    return [python, str(BENCH_DIR / "client_bench.py"), "--child", client,
            "--server-cmd", json.dumps(server_cmd),
            "-n", str(args.n), "-c", str(args.concurrency), "--payload", str(args.payload),
            "--warmup", str(args.warmup)]


def run_passes(python: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    clients = args.client or DEFAULT_CLIENTS
    records = []
    for number in range(args.passes):
        for server in args.server or list(SERVERS):
            for client in rotated(clients, number):
                print(f"# pass {number + 1}/{args.passes}: {client} -> {server}", file=sys.stderr)
                record = run_child(child_command(python, client, server, args), timeout=900)
                records.append({"client": client, "server": server, "pass": number + 1, **record})
    return records


def medians(records: list[dict[str, Any]], server: str) -> dict[str, dict[str, float | None]]:
    return medians_by([r for r in records if r["server"] == server], "client", FIELDS)


def goal_ratios(tables: dict[str, dict[str, dict[str, float | None]]]) -> dict[str, float | None]:
    found: dict[str, float | None] = {}
    for server, table in tables.items():
        peer = table.get(PEER, {})
        for client in (c for c in table if c.startswith("toolrelay")):
            ours = table[client]
            with_goal = server == "minimal" and client == "toolrelay"
            goals = (" (goal <= 0.25)", " (goal >= 2)") if with_goal else ("", "")
            found[f"{server}: client CPU/call, {client} / {PEER}{goals[0]}"] = ratio(
                ours.get("client_cpu_us_per_call"), peer.get("client_cpu_us_per_call"))
            found[f"{server}: sequential calls/s, {client} / {PEER}{goals[1]}"] = ratio(
                ours.get("seq_calls_per_s"), peer.get("seq_calls_per_s"))
            found[f"{server}: c=16 calls/s, {client} / {PEER}"] = ratio(
                ours.get("c16_calls_per_s"), peer.get("c16_calls_per_s"))
    return found


def parse_args() -> argparse.Namespace:
    parser = arg_parser(__doc__)
    parser.add_argument("--client", action="append", help=f"client to measure (default {DEFAULT_CLIENTS})")
    parser.add_argument("--server", action="append", choices=sorted(SERVERS), help="default: both")
    parser.add_argument("-n", type=int, default=scaled(2000, 200), help="calls per phase")
    parser.add_argument("-c", "--concurrency", type=int, default=16, help="calls in flight (second phase)")
    parser.add_argument("--payload", type=int, default=200, help="bytes of echo text")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--passes", type=int, default=scaled(3, 1))
    parser.add_argument("--json-out", help="append the summary as one JSON line")
    parser.add_argument("--profile", nargs="?", const="toolrelay", metavar="CLIENT",
                        help="cProfile one child's sequential phase against the minimal server (stderr)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--server-cmd", help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if args.child:
        print(json.dumps(asyncio.run(measure(args.child, json.loads(args.server_cmd), args))))
        return
    from setup_peers import bench_python

    python = str(bench_python())
    if args.profile:  # one child, in the foreground, its profile on stderr
        os.execv(python, [*child_command(python, args.profile, "minimal", args), "--profile", args.profile])
    records = run_passes(python, args)
    tables = {server: medians(records, server) for server in args.server or list(SERVERS)}
    for server, table in tables.items():
        print_table(table, title=f"server: {server}")
    ratios = goal_ratios(tables)
    print()
    print_ratios(ratios)
    append_jsonl(args.json_out, {"bench": "client", "quick": quick(), "calls": args.n, "passes": args.passes,
                                 "medians": tables, "ratios": ratios, "records": records})


if __name__ == "__main__":
    main()
