"""Streaming with early execution: a turn costs about max(generation, tools), not their sum.

The issue's scenario, on one fake streaming endpoint (tests/testkit/servers/fake_stream.py) and
one MCP server (tests/testkit/servers/slow_server.py): a turn streams 300 tokens at 50 tokens/s
(6 s) with two calls of a read-only tool whose items close at about 2 s and 3 s, each
call taking 3 s; then a short answer turn. Runners (peer_adapters.py), each in its own
child process (the bench venv's python), each keeping its MCP connection open:

  toolrelay-stream     relay.Relay, streamed: the calls start as their items close
  toolrelay-no-stream  relay.Relay asking for whole responses (--no-stream)
  agents-streamed      OpenAI Agents SDK, Runner.run_streamed + MCPServerStdio (it runs the
                       tools once the response has completed)

End to end time of a run = median wall time over the runs. Then the time from a text
delta leaving the endpoint to it appearing on ``toolrelay run``'s stdout, read through a
pipe: the endpoint stamps each token with its send time (``--stamp``), a reader stamps
each chunk it reads from the CLI's stdout; median over the tokens of one run.

Goals: toolrelay-stream <= 0.75x toolrelay-no-stream and <= 0.75x agents-streamed; delta
to stdout <= 20 ms (median).

    python bench/stream_bench.py                   3 runs per runner (about 2 min)
    BENCH_QUICK=1 python bench/stream_bench.py     1 run per runner
    options: --runner NAME (repeatable), --runs N, --scale S (multiplies every time: 0.05
             for a smoke run), --json-out FILE
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from common import (
    BENCH_DIR,
    TEST_SERVERS,
    append_jsonl,
    arg_parser,
    print_ratios,
    print_table,
    quick,
    ratio,
    run_child,
    served_base_url,
)

PROMPT = "Look at two things, then tell me what you saw."
DEFAULT_RUNNERS = ["toolrelay-stream", "toolrelay-no-stream", "agents-streamed"]
TOOL_SECONDS = 3.0
GOALS = {"toolrelay-stream / toolrelay-no-stream": 0.75, "toolrelay-stream / agents-streamed": 0.75}
LATENCY_GOAL_MS = 20.0
STAMP = re.compile(r"⟦(\d+\.\d+)⟧")


@contextlib.contextmanager
def endpoint(python: str, scale: float, *, stamp: bool = False) -> Iterator[str]:
    """The fake streaming endpoint in its own process; yields its base URL."""
    command = [python, str(TEST_SERVERS / "fake_stream.py"), "--scale", str(scale)]
    with served_base_url([*command, *(["--stamp"] if stamp else [])], "FAKE_STREAM_BASE_URL") as base_url:
        yield base_url


def server_command(python: str, scale: float) -> list[str]:
    return [python, str(TEST_SERVERS / "slow_server.py"), "--seconds", str(TOOL_SECONDS * scale)]


# -- child: one runner ------------------------------------------------------------------------


async def measure(name: str, base_url: str, server_cmd: list[str], runs: int) -> dict[str, Any]:
    from peer_adapters import RUNNERS, preload, resolve

    factory = resolve(name, RUNNERS)
    preload(name)
    samples = []
    async with factory(base_url, server_cmd) as run_once:
        for _ in range(runs):
            started = time.perf_counter()
            text = await asyncio.wait_for(run_once(PROMPT), 120)
            samples.append(time.perf_counter() - started)
            assert text.strip(), "the run gave no answer"
    samples.sort()
    return {"wall_median_s": samples[len(samples) // 2], "wall_min_s": samples[0], "runs": runs}


# -- delta to stdout, through a pipe ------------------------------------------------------------


def delta_latency(python: str, base_url: str, server_cmd: list[str]) -> dict[str, Any]:
    """``toolrelay run`` against the stamping endpoint: for each token, the time from its
    stamp to the moment a reader of the CLI's stdout pipe had it."""
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "mcp.json"
        servers = {"slow": {"command": server_cmd[0], "args": server_cmd[1:]}}
        config.write_text(json.dumps({"mcpServers": servers}))
        command = [python, "-m", "toolrelay", "run", PROMPT, "--model", "fake-model", "--base-url", base_url,
                   "--config", str(config), "--quiet"]
        env = {**os.environ, "OPENAI_API_KEY": "sk-fake-bench"}
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        assert process.stdout is not None
        latencies, pending = [], ""
        while chunk := os.read(process.stdout.fileno(), 65536):
            now = time.time()
            pending += chunk.decode("utf-8", errors="replace")
            for found in STAMP.finditer(pending):
                latencies.append((now - float(found.group(1))) * 1e3)
            pending = pending[pending.rfind("⟧") + 1:] if "⟧" in pending else pending
        code = process.wait(60)
    latencies.sort()
    median = latencies[len(latencies) // 2] if latencies else None
    return {"exit": code, "tokens": len(latencies), "median_ms": median,
            "p90_ms": latencies[int(len(latencies) * 0.9)] if latencies else None}


# -- parent -------------------------------------------------------------------------------------


def parse_args() -> argparse.Namespace:
    parser = arg_parser(__doc__)
    parser.add_argument("--runner", action="append",
                        help=f"runners to measure (default {' '.join(DEFAULT_RUNNERS)})")
    parser.add_argument("--runs", type=int, default=1 if quick() else 3, help="runs per runner")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies every time (0.05: a smoke run)")
    parser.add_argument("--json-out", help="append the summary to this JSONL file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--server-cmd", help=argparse.SUPPRESS)
    parser.add_argument("--python", default=None,
                        help="the interpreter for the children (default: the bench venv)")
    return parser.parse_args()


def run_all(python: str, args: argparse.Namespace) -> dict[str, Any]:
    runners = args.runner or DEFAULT_RUNNERS
    records: dict[str, dict[str, Any]] = {}
    with endpoint(python, args.scale) as base_url:
        for name in runners:
            print(f"# {name}: {args.runs} run(s)", file=sys.stderr)
            server = json.dumps(server_command(python, args.scale))
            command = [python, str(BENCH_DIR / "stream_bench.py"), "--child", name, "--base-url", base_url,
                       "--server-cmd", server, "--runs", str(args.runs)]
            records[name] = run_child(command, timeout=600)
    with endpoint(python, args.scale, stamp=True) as base_url:
        latency = delta_latency(python, base_url, server_command(python, args.scale))
    return {"records": records, "latency": latency}


def report(found: dict[str, Any], scale: float) -> dict[str, float | None]:
    records = found["records"]
    print_table({name: {"wall median (s)": r["wall_median_s"], "wall min (s)": r["wall_min_s"]}
                 for name, r in records.items()}, title=f"end to end, scale {scale:g}")
    wall = {name: r["wall_median_s"] for name, r in records.items()}
    ratios: dict[str, float | None] = {}
    for label in GOALS:
        top, bottom = label.split(" / ")
        ratios[label] = ratio(wall.get(top), wall.get(bottom))
    latency = found["latency"]
    ratios["delta to stdout, median ms"] = latency["median_ms"]
    print()
    print_ratios(ratios)
    print()
    for label, goal in [*GOALS.items(), ("delta to stdout, median ms", LATENCY_GOAL_MS)]:
        value = ratios[label]
        verdict = "-" if value is None else ("met" if value <= goal else "MISSED")
        print(f"goal {label} <= {goal:g}: {verdict}")
    return ratios


def main() -> None:
    args = parse_args()
    if args.child:
        record = asyncio.run(measure(args.child, args.base_url, json.loads(args.server_cmd), args.runs))
        print(json.dumps(record))
        return
    if args.python is None:
        from setup_peers import bench_python

        args.python = str(bench_python())
    found = run_all(args.python, args)
    ratios = report(found, args.scale)
    append_jsonl(args.json_out, {"bench": "stream", "quick": quick(), "scale": args.scale, "runs": args.runs,
                                 "ratios": ratios, **found})


if __name__ == "__main__":
    main()
