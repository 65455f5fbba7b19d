"""Loop overhead per model turn in the Chat Completions dialect: toolrelay's relay loop with
``--api chat`` beside a hand-written openai chat loop and the OpenAI Agents SDK's chat
completions model, against one fake chat endpoint and one stdio echo server.

A run = chat request 1 (answered with one ``tool_calls`` entry for the echo tool) -> MCP
``tools/call`` -> chat request 2 (carrying the assistant message and the ``tool`` message;
answered with the final message). Runners, each keeping its MCP connection open:

  toolrelay-chat  relay.Relay over an open Catalog and a ChatClient (whole answers)
  raw-chat        AsyncOpenAI.chat.completions.create + mcp ClientSession.call_tool
  agents-chat     Agents SDK Runner.run with OpenAIChatCompletionsModel (skipped when the
                  ``agents`` package is not importable by the chosen python)

The endpoint is this file run with ``--serve`` (its own process, toolrelay's HTTP server,
stateless) and reports its own handler time; overhead per run = median wall time - the
endpoint's time per run; per turn = that / requests per run (loop_bench.py's method).

Goal: toolrelay's overhead per turn <= 1/8 of the Agents SDK's, as on the Responses path.

    python bench/chat_loop_bench.py                      3 passes of 100 runs
    BENCH_QUICK=1 python bench/chat_loop_bench.py        1 pass of 20 runs
    options: --runner NAME (repeatable), --runs, --passes, --python PATH (default: the bench
             venv when set up, else this python), --json-out FILE, --profile [RUNNER] (only a
             cProfile of one child's timed runs, on stderr; default toolrelay-chat),
             --baseline-src DIR (also toolrelay-chat@baseline: the same runner with DIR, another
             checkout's src/, first on PYTHONPATH; before and after in one run)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    append_jsonl,
    arg_parser,
    echo_server_command,
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
)

PROMPT = "Please echo something, then tell me what you got."
TEXT = "hello from the fake model"
EXPECTED = f"Done. The tool returned: {TEXT}"
MODEL = "fake-model"
API_KEY = "sk-bench"
DEFAULT_RUNNERS = ["toolrelay-chat", "raw-chat", "agents-chat"]
FIELDS = ("connect_ms", "wall_median_ms", "wall_p90_ms", "endpoint_ms_per_run", "requests_per_run",
          "overhead_ms_per_run", "overhead_ms_per_turn", "client_cpu_ms_per_run")
RunOnce = Callable[[str], Awaitable[str]]


# -- the fake chat endpoint (--serve) ----------------------------------------------------------


class _Endpoint:
    def __init__(self) -> None:
        self.requests, self.handler_s = 0, 0.0
        self._ids = itertools.count(1)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages") or []
        last = messages[-1] if messages and isinstance(messages[-1], dict) else {}
        number = next(self._ids)
        if last.get("role") == "tool":
            content = last.get("content")
            if isinstance(content, list):  # text parts (the Agents SDK sends a tool's content so)
                content = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
            said = f"Done. The tool returned: {content}"
            message: dict[str, Any] = {"role": "assistant", "content": said}
            reason = "stop"
        else:
            tool = (body.get("tools") or [{}])[0].get("function", {}).get("name", "echo")
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{number:08d}", "type": "function",
                 "function": {"name": tool, "arguments": json.dumps({"text": TEXT})}}]}
            reason = "tool_calls"
        return {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model"), "system_fingerprint": None,
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reason}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


async def _serve() -> None:
    from toolrelay.httpserver import HttpRequest, HttpResponder, HttpServer

    endpoint = _Endpoint()

    async def handle(request: HttpRequest, http: HttpResponder) -> None:
        started = time.perf_counter()
        if request.method == "GET":
            payload: dict[str, Any] = {"requests": endpoint.requests, "handler_s_total": endpoint.handler_s}
        elif request.path.startswith("/_stats/reset"):
            endpoint.requests, endpoint.handler_s, payload = 0, 0.0, {}
        else:
            payload = endpoint.answer(json.loads(request.body or b"{}"))
        await http.send(200, [("content-type", "application/json")], json.dumps(payload).encode())
        if request.method == "POST" and request.path.endswith("/chat/completions"):
            endpoint.requests += 1
            endpoint.handler_s += time.perf_counter() - started

    def listening(port: int) -> None:
        print(f"FAKE_CHAT_BASE_URL=http://127.0.0.1:{port}/v1", flush=True)

    await HttpServer(handle, max_body_bytes=1 << 26).serve("127.0.0.1", 0, listening)


@contextlib.contextmanager
def fake_chat_endpoint(python: str) -> Iterator[str]:
    with served_base_url([python, __file__, "--serve"], "FAKE_CHAT_BASE_URL",
                         what="the fake chat endpoint") as base_url:
        yield base_url


# -- runners ------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def toolrelay_chat(base_url: str, server_cmd: list[str]) -> AsyncIterator[RunOnce]:
    from toolrelay.client.config import ServerConfig
    from toolrelay.events import EventStream
    from toolrelay.model import ModelEndpoint
    from toolrelay.model.chat_client import ChatClient
    from toolrelay.relay.catalog import Catalog
    from toolrelay.relay.loop import Relay
    from toolrelay.relay.stages.request import RequestSettings

    events = EventStream()
    config = ServerConfig(name="echo", transport="stdio", command=server_cmd[0], args=tuple(server_cmd[1:]))
    async with (
        Catalog([config], events=events) as catalog,
        ChatClient(ModelEndpoint(base_url=base_url, api_key=API_KEY), events=events) as model,
    ):
        relay = Relay(catalog, model, RequestSettings(model=MODEL, stream=False), events=events,
                      endpoint=model.url)

        async def run_once(prompt: str) -> str:
            result = await relay.run(prompt)
            if not result.completed:
                raise RuntimeError(f"toolrelay run ended {result.status}: {result.reason}")
            return result.final_text or ""

        yield run_once


@contextlib.asynccontextmanager
async def raw_chat(base_url: str, server_cmd: list[str]) -> AsyncIterator[RunOnce]:
    from openai import AsyncOpenAI

    from peer_adapters import sdk_session

    client = AsyncOpenAI(base_url=base_url, api_key=API_KEY)
    try:
        async with sdk_session(server_cmd) as mcp_client:
            listed = await mcp_client.session.list_tools()
            tools: list[Any] = [{"type": "function", "function": {
                "name": t.name, "description": t.description or "", "parameters": t.input_schema}}
                for t in listed.tools]

            async def run_once(prompt: str) -> str:
                messages: list[Any] = [{"role": "user", "content": prompt}]
                for _ in range(10):
                    completion = await client.chat.completions.create(model=MODEL, messages=messages,
                                                                      tools=tools)
                    message = completion.choices[0].message
                    if not message.tool_calls:
                        return str(message.content)
                    messages.append(message.model_dump(exclude_none=True))
                    for call in message.tool_calls:
                        arguments = json.loads(call.function.arguments)
                        text = await mcp_client.call_tool(call.function.name, arguments)
                        messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
                raise RuntimeError("too many turns")

            yield run_once
    finally:
        await client.close()


@contextlib.asynccontextmanager
async def agents_chat(base_url: str, server_cmd: list[str]) -> AsyncIterator[RunOnce]:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
    from agents.mcp import MCPServerStdio
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=base_url, api_key=API_KEY)
    params = {"command": server_cmd[0], "args": server_cmd[1:]}
    try:
        server_ = MCPServerStdio(params=params, cache_tools_list=True, name="echo")  # type: ignore[arg-type]
        async with server_ as server:
            agent = Agent(name="bench", instructions="You are a benchmark agent.", mcp_servers=[server],
                          model=OpenAIChatCompletionsModel(model=MODEL, openai_client=client))

            async def run_once(prompt: str) -> str:
                return str((await Runner.run(agent, prompt)).final_output)

            yield run_once
    finally:
        await client.close()


BASELINE = "toolrelay-chat@baseline"
"""toolrelay-chat run from ``--baseline-src`` (another checkout's src/ first on PYTHONPATH)."""
RUNNERS: dict[str, Callable[..., Any]] = {"toolrelay-chat": toolrelay_chat, "raw-chat": raw_chat,
                                          "agents-chat": agents_chat}
NEEDS: dict[str, str] = {"raw-chat": "mcp", "agents-chat": "agents"}


# -- child and parent ---------------------------------------------------------------------------


async def measure(
    name: str, base_url: str, server_cmd: list[str], args: argparse.Namespace
) -> dict[str, Any]:
    started = time.perf_counter()
    async with RUNNERS[name](base_url, server_cmd) as run_once:
        connect_ms = (time.perf_counter() - started) * 1e3
        return await measure_runs(run_once, prompt=PROMPT, expected=EXPECTED, runs=args.runs, warmup=5,
                                  base_url=base_url, connect_ms=connect_ms, servers=False,
                                  profile=bool(args.profile))


def _available(python: str, name: str) -> bool:
    needed = NEEDS.get(name)
    if needed is None:
        return True
    probe = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({needed!r}) is None)"
    return subprocess.run([python, "-c", probe], check=False).returncode == 0


def _python(args: argparse.Namespace) -> str:
    if args.python:
        return str(args.python)
    if importlib.util.find_spec("agents") is None:
        with contextlib.suppress(Exception):
            from setup_peers import VENV

            venv = VENV / "bin" / "python"
            if venv.exists():
                return str(venv)
    return sys.executable


def main() -> None:
    parser = arg_parser(__doc__)
    parser.add_argument("--runner", action="append", help=f"runner to measure (default {DEFAULT_RUNNERS})")
    parser.add_argument("--runs", type=int, default=scaled(100, 20))
    parser.add_argument("--passes", type=int, default=scaled(3, 1))
    parser.add_argument("--python", help="the python of the runners (it needs openai, mcp, agents)")
    parser.add_argument("--json-out")
    parser.add_argument("--profile", nargs="?", const="toolrelay-chat", metavar="RUNNER",
                        help="only a cProfile of RUNNER's timed runs (on stderr)")
    parser.add_argument("--baseline-src", help="also toolrelay-chat from this src/ directory (before/after)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--server-cmd", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve())
        return
    if args.child:
        record = asyncio.run(measure(args.child, args.base_url, json.loads(args.server_cmd), args))
        print(json.dumps(record))
        return
    python = _python(args)
    names = [n for n in args.runner or DEFAULT_RUNNERS if _available(python, n)]
    skipped = sorted(set(args.runner or DEFAULT_RUNNERS) - set(names))
    if skipped:
        print(f"# skipped (not importable by {python}): {', '.join(skipped)}", file=sys.stderr)
    if args.baseline_src:
        names.append(BASELINE)
    records = []
    server_cmd = echo_server_command(python, "minimal")
    with fake_chat_endpoint(python) as base_url:
        if args.profile:
            subprocess.run([python, __file__, "--child", args.profile, "--base-url", base_url, "--server-cmd",
                            json.dumps(server_cmd), "--runs", str(args.runs), "--profile", args.profile],
                           check=True)
            return
        for number in range(args.passes):
            for name in rotated(names, number):
                print(f"# pass {number + 1}/{args.passes}: {name}", file=sys.stderr)
                child, env = name, {**os.environ}
                if name == BASELINE:
                    child, env["PYTHONPATH"] = "toolrelay-chat", args.baseline_src
                command = [python, __file__, "--child", child, "--base-url", base_url,
                           "--server-cmd", json.dumps(server_cmd), "--runs", str(args.runs)]
                records.append({"runner": name, "pass": number + 1,
                                **run_child(command, timeout=1200, env=env)})
    table = medians_by(records, "runner", FIELDS)
    print_table(table, title="per run (ms), chat dialect")
    goals = {"agents-chat": " (goal <= 0.125)"}
    mine = [name for name in table if name.startswith("toolrelay-chat")]
    pairs = [(me, peer) for me in mine for peer in table if peer != me and not (
        me == BASELINE and peer == "toolrelay-chat")]
    ratios = {f"overhead per turn, {me} / {peer}{goals.get(peer, '')}": ratio(
        table[me]["overhead_ms_per_turn"], table[peer]["overhead_ms_per_turn"]) for me, peer in pairs}
    # the client's own CPU: what the wall-time overhead is once the machine is not contended
    # (on 2 busy cores the overhead's wall time is mostly the three processes waiting their turn)
    ratios |= {f"client CPU per run, {me} / {peer}": ratio(
        table[me]["client_cpu_ms_per_run"], table[peer]["client_cpu_ms_per_run"]) for me, peer in pairs}
    print()
    print_ratios(ratios)
    append_jsonl(args.json_out, {"bench": "chat_loop", "quick": quick(), "runs": args.runs,
                                 "passes": args.passes, "medians": table, "ratios": ratios,
                                 "records": records})


if __name__ == "__main__":
    main()
