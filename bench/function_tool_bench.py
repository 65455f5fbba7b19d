"""A Python function tool's overhead per call: toolrelay's ``@toolrelay.tool`` (served in
process as the MCP server ``py``, every call through the MCP core with an MCP id) beside
the OpenAI Agents SDK's ``@function_tool``, in the same loop against one fake endpoint.

The endpoint (tests/testkit/servers/fake_responses.py, in its own process) answers a
request that offers tools with one ``function_call`` to the first tool, and the request
carrying its output with the final message; a request that offers no tool gets the final
message at once. Each runner measures, in its own child process (the bench venv's python):

  with a call   two turns: request 1 → the function runs → request 2
  no tool       one turn, the same framework with no tool offered

Overhead per run = median wall time - the endpoint's own time per run. The function
call's own overhead = (with a call) - 2 × (no tool, per turn): what a function call adds
to a run beyond the turns themselves (declaring, parsing, validating, dispatching, running
the function, building its result and the output item). The same difference of the
child's own CPU time (``time.process_time``) is less at the mercy of a busy machine than
wall time, and is reported beside it. Both figures are reported;
passes rotate the order, figures are medians over passes, ratios are from this run only.

Runners:
  toolrelay   relay.Relay over toolrelay.connect([], tools=[echo]) and a ResponsesClient,
              whole responses, the call-id hook a run installs
  agents      Agents SDK Runner.run, Agent(tools=[function_tool(echo)]), tracing off

Goal: toolrelay's function call overhead <= 1/2 of the Agents SDK's.

    python bench/function_tool_bench.py                 5 passes of 200 runs
    BENCH_QUICK=1 python bench/function_tool_bench.py   1 pass of 30 runs
    options: --runner NAME (repeatable), --runs, --passes, --json-out FILE
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from common import (
    BENCH_DIR,
    append_jsonl,
    arg_parser,
    endpoint_stats,
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
from loop_bench import fake_endpoint

PROMPT = "Please echo something, then tell me what you got."
EXPECTED = {True: "Done. The tool returned: hello from the fake model", False: "Done. No tool was offered."}
API_KEY = "sk-bench-not-a-real-key"
MODEL = "fake-model"
DEFAULT_RUNNERS = ["toolrelay", "agents"]
FIELDS = ("call_run_ms", "call_endpoint_ms", "bare_run_ms", "bare_endpoint_ms", "overhead_ms_per_run",
          "overhead_ms_per_turn_bare", "call_overhead_ms", "call_cpu_ms_per_run", "bare_cpu_ms_per_run",
          "call_cpu_overhead_ms")

RunOnce = Callable[[str], Awaitable[str]]


def echo(text: str) -> str:
    """Echo the text back.

    Args:
        text: What to echo.
    """
    return text


# -- runners --------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def toolrelay_runner(base_url: str, with_tool: bool) -> AsyncIterator[RunOnce]:
    import toolrelay
    from toolrelay.events import EventStream
    from toolrelay.functions.servers import CallIds
    from toolrelay.model import ModelEndpoint, ResponsesClient
    from toolrelay.relay.loop import Relay
    from toolrelay.relay.stages.request import RequestSettings

    events = EventStream()
    tools = [toolrelay.tool(echo, read_only=True)] if with_tool else []
    async with (
        toolrelay.connect([], events=events, tools=tools) as catalog,
        ResponsesClient(ModelEndpoint(base_url=base_url, api_key=API_KEY), events=events) as model,
    ):
        relay = Relay(catalog, model, RequestSettings(model=MODEL, stream=False), events=events,
                      endpoint=model.url, hooks=[CallIds(frozenset({"py"}))])

        async def run_once(prompt: str) -> str:
            result = await relay.run(prompt)
            if not result.completed or not all(call.ok for call in result.calls):
                raise RuntimeError(f"toolrelay run ended {result.status}: {result.reason}")
            return result.final_text or ""

        yield run_once


@contextlib.asynccontextmanager
async def agents_runner(base_url: str, with_tool: bool) -> AsyncIterator[RunOnce]:
    from agents import Agent, Runner, function_tool, set_default_openai_client, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=base_url, api_key=API_KEY)
    set_default_openai_client(client, use_for_tracing=False)
    agent = Agent(name="bench", instructions="You are a benchmark agent.", model=MODEL,
                  tools=[function_tool(echo)] if with_tool else [])
    try:
        async def run_once(prompt: str) -> str:
            return str((await Runner.run(agent, prompt)).final_output)

        yield run_once
    finally:
        await client.close()


RUNNERS: dict[str, Callable[[str, bool], contextlib.AbstractAsyncContextManager[RunOnce]]] = {
    "toolrelay": toolrelay_runner,
    "agents": agents_runner,
}


# -- child: one runner ----------------------------------------------------------------------


async def timed(name: str, base_url: str, with_tool: bool, args: argparse.Namespace) -> dict[str, float]:
    async with RUNNERS[name](base_url, with_tool) as run_once:
        for _ in range(args.warmup):
            assert await run_once(PROMPT) == EXPECTED[with_tool]
        endpoint_stats(base_url, reset=True)
        samples, cpu_before = [], time.process_time()
        for _ in range(args.runs):
            started = time.perf_counter()
            text = await asyncio.wait_for(run_once(PROMPT), 60)
            samples.append(time.perf_counter() - started)
            assert text == EXPECTED[with_tool], text
        cpu = time.process_time() - cpu_before
        stats = endpoint_stats(base_url)
    return {"run_ms": summary(samples)["median_ms"],
            "endpoint_ms": stats["handler_s_total"] / args.runs * 1e3,
            "requests": stats["requests"] / args.runs, "cpu_ms": cpu / args.runs * 1e3}


async def measure(name: str, base_url: str, args: argparse.Namespace) -> dict[str, Any]:
    called = await timed(name, base_url, True, args)
    bare = await timed(name, base_url, False, args)
    assert called["requests"] == 2 and bare["requests"] == 1, (called, bare)
    overhead = called["run_ms"] - called["endpoint_ms"]
    per_turn_bare = bare["run_ms"] - bare["endpoint_ms"]
    return {"call_run_ms": called["run_ms"], "call_endpoint_ms": called["endpoint_ms"],
            "bare_run_ms": bare["run_ms"], "bare_endpoint_ms": bare["endpoint_ms"],
            "overhead_ms_per_run": overhead, "overhead_ms_per_turn_bare": per_turn_bare,
            "call_overhead_ms": overhead - 2 * per_turn_bare, "call_cpu_ms_per_run": called["cpu_ms"],
            "bare_cpu_ms_per_run": bare["cpu_ms"],
            "call_cpu_overhead_ms": called["cpu_ms"] - 2 * bare["cpu_ms"]}


# -- parent ---------------------------------------------------------------------------------


def child_command(python: str, name: str, base_url: str, args: argparse.Namespace) -> list[str]:
    return [python, str(BENCH_DIR / "function_tool_bench.py"), "--child", name, "--base-url", base_url,
            "--runs", str(args.runs), "--warmup", str(args.warmup)]


def report(records: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, float | None]]:
    table = medians_by(records, "runner", FIELDS)
    print_table(table, title="per run (ms)")
    ratios: dict[str, float | None] = {}
    if "toolrelay" in table and "agents" in table:
        ratios = {
            "function call overhead, toolrelay / agents (goal <= 0.5)": ratio(
                table["toolrelay"]["call_overhead_ms"], table["agents"]["call_overhead_ms"]),
            "function call client CPU, toolrelay / agents (goal <= 0.5)": ratio(
                table["toolrelay"]["call_cpu_overhead_ms"], table["agents"]["call_cpu_overhead_ms"]),
            "run overhead with one function call, toolrelay / agents": ratio(
                table["toolrelay"]["overhead_ms_per_run"], table["agents"]["overhead_ms_per_run"]),
        }
        print()
        print_ratios(ratios)
    return table, ratios


def parse_args() -> argparse.Namespace:
    parser = arg_parser(__doc__)
    parser.add_argument("--runner", action="append", choices=sorted(RUNNERS),
                        help=f"runner to measure (default {DEFAULT_RUNNERS})")
    parser.add_argument("--runs", type=int, default=scaled(200, 30),
                        help="timed runs per runner, case and pass")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--passes", type=int, default=scaled(5, 1))
    parser.add_argument("--json-out", help="append the summary as one JSON line")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if args.child:
        print(json.dumps(asyncio.run(measure(args.child, args.base_url, args))))
        return
    from setup_peers import bench_python

    python = str(bench_python())
    records = []
    with fake_endpoint(python) as base_url:
        for number in range(args.passes):
            for name in rotated(args.runner or DEFAULT_RUNNERS, number):
                print(f"# pass {number + 1}/{args.passes}: {name}", file=sys.stderr)
                record = run_child(child_command(python, name, base_url, args), timeout=1200)
                records.append({"runner": name, "pass": number + 1, **record})
    table, ratios = report(records)
    append_jsonl(args.json_out, {"bench": "function_tool", "quick": quick(), "runs": args.runs,
                                 "passes": args.passes, "medians": table, "ratios": ratios,
                                 "records": records})


if __name__ == "__main__":
    main()
