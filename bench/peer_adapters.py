"""toolrelay and its peers behind the two interfaces the benches drive (and /work/shared/peer-bench).

An MCP client factory, ``factory(command, env)``, is an async context manager that spawns
the stdio server ``command``, completes the handshake and yields an object with

    async call_tool(name, arguments) -> str      the result's text (raises on an error)
    async list_tools() -> list[str]               the tool names

A runner, ``runner(base_url, server_cmd)``, is an async context manager that connects the
MCP server once, keeps it open across runs, and yields ``async run_once(prompt) -> str``:
one agent run against the Responses endpoint at ``base_url`` (model requests until the
model answers), returning the final text.

    toolrelay   open_client          client.Connection (the MCP client alone)
                open_catalog_client  relay.Catalog.call (the relay's whole call path: JSON text
                                     parsed, routed, validated against the schema, outcome built)
                runner               relay.Relay over a Catalog and a model.ResponsesClient
                                     (whole responses; stream_runner streams, calls start early)
    peers       sdk_session          mcp.ClientSession over mcp.client.stdio.stdio_client
                sdk_client           mcp.Client (mcp 2.x high-level client, "auto" mode)
                agents_runner        OpenAI Agents SDK: Runner.run + MCPServerStdio (its defaults)
                agents_cached_runner the same with cache_tools_list=True
                agents_streamed_runner  Runner.run_streamed, its events consumed as they come
                raw_runner           hand-written loop: AsyncOpenAI.responses.create + ClientSession

The peers' packages (mcp, openai, openai-agents) are imported only when used. From the
shared harness: ``PYTHONPATH=bench:src python sdk_stdio_rtt.py --client peer_adapters:open_client``
and ``agents_loop.py --runner peer_adapters:runner``.
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import json
import os
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol, TextIO

from toolrelay.client.config import ServerConfig
from toolrelay.client.connection import Connection
from toolrelay.events import EventStream
from toolrelay.relay.catalog import Catalog

__all__ = [
    "CLIENTS",
    "RUNNERS",
    "BenchClient",
    "agents_cached_runner",
    "agents_runner",
    "agents_streamed_runner",
    "no_stream_runner",
    "null_log",
    "open_catalog_client",
    "open_client",
    "preload",
    "raw_runner",
    "resolve",
    "runner",
    "sdk_client",
    "sdk_session",
    "stream_runner",
]

API_KEY = "sk-fake-bench"  # the fake endpoint takes any key; the SDKs insist on one
MODEL = "fake-model"
LOG_DIR = Path(tempfile.gettempdir()) / "toolrelay-bench-logs"  # servers' stderr (toolrelay's clients)
RunOnce = Callable[[str], Awaitable[str]]


class BenchClient(Protocol):
    async def call_tool(self, name: str, arguments: dict[str, Any]) -> str: ...

    async def list_tools(self) -> list[str]: ...


def _server_config(name: str, command: list[str], env: dict[str, str] | None) -> ServerConfig:
    return ServerConfig(name=name, transport="stdio", command=command[0], args=tuple(command[1:]),
                        env=dict(env or {}), origin="bench")


def null_log() -> TextIO:
    """Where a peer's server stderr goes (the SDKs want a text file)."""
    return open(os.devnull, "w")


def _result_text(result: dict[str, Any]) -> str:
    """The text blocks of a CallToolResult; a tool error raises (a bench call must succeed)."""
    text = "".join(b.get("text", "") for b in result.get("content") or [] if b.get("type") == "text")
    if result.get("isError"):
        raise RuntimeError(f"tool error: {text}")
    return text


# -- toolrelay ----------------------------------------------------------------------------


class _ConnectionClient:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        exchange = await self.connection.call_tool(name, arguments)
        return _result_text(exchange.raise_for_error())

    async def list_tools(self) -> list[str]:
        return [tool["name"] for tool in await self.connection.list_tools()]


@contextlib.asynccontextmanager
async def open_client(
    command: list[str], env: dict[str, str] | None = None
) -> AsyncIterator[_ConnectionClient]:
    """toolrelay's MCP client alone: one ``Connection`` (spawn, initialize, tools/call)."""
    connection = Connection(_server_config("bench", command, env), EventStream(), log_dir=LOG_DIR)
    try:
        await connection.start()
        yield _ConnectionClient(connection)
    finally:
        await connection.close()


class _CatalogClient:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._aliases = {route.tool: route.alias for route in catalog.routes}
        self._call_ids = itertools.count(1)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        call_id = f"call_{next(self._call_ids)}"
        outcome = await self.catalog.call(self._aliases[name], json.dumps(arguments), call_id=call_id)
        if outcome.result is None:
            raise RuntimeError(f"{outcome.status}: {outcome.message}")
        return _result_text(outcome.result)

    async def list_tools(self) -> list[str]:
        return list(self._aliases)


@contextlib.asynccontextmanager
async def open_catalog_client(
    command: list[str], env: dict[str, str] | None = None
) -> AsyncIterator[_CatalogClient]:
    """toolrelay's whole call path: ``Catalog.call`` with the arguments as the model's JSON text."""
    async with Catalog([_server_config("bench", command, env)], log_dir=LOG_DIR) as catalog:
        yield _CatalogClient(catalog)


@contextlib.asynccontextmanager
async def runner(
    base_url: str, server_cmd: list[str], *, stream: bool = False, server: str = "echo"
) -> AsyncIterator[RunOnce]:
    """toolrelay's relay loop: ``Relay.run`` over one open Catalog and one ResponsesClient.

    Whole responses unless ``stream`` (then calls of read-only tools start as their item
    closes: ``--early read-only``, the default). No consent prompt (``approve=None``), like
    the peers, which have none by default."""
    from toolrelay.model import ModelEndpoint, ResponsesClient
    from toolrelay.relay.loop import Relay
    from toolrelay.relay.stages.request import RequestSettings

    events = EventStream()
    endpoint = ModelEndpoint(base_url=base_url, api_key=API_KEY)
    async with (
        Catalog([_server_config(server, server_cmd, None)], events=events, log_dir=LOG_DIR) as catalog,
        ResponsesClient(endpoint, events=events) as model,
    ):
        settings = RequestSettings(model=MODEL, stream=stream)
        relay = Relay(catalog, model, settings, events=events, endpoint=model.url)

        async def run_once(prompt: str) -> str:
            result = await relay.run(prompt)
            if not result.completed or not all(call.ok for call in result.calls):
                raise RuntimeError(f"toolrelay run ended {result.status}: {result.reason}")
            return result.final_text or ""

        yield run_once


@contextlib.asynccontextmanager
async def no_stream_runner(base_url: str, server_cmd: list[str]) -> AsyncIterator[RunOnce]:
    """toolrelay's relay loop asking for whole responses (``--no-stream``), for the stream bench."""
    async with runner(base_url, server_cmd, server="slow") as run_once:
        yield run_once


@contextlib.asynccontextmanager
async def stream_runner(base_url: str, server_cmd: list[str]) -> AsyncIterator[RunOnce]:
    """toolrelay's relay loop on streamed responses (calls start as their items close)."""
    async with runner(base_url, server_cmd, stream=True, server="slow") as run_once:
        yield run_once


# -- peers: the mcp SDK -------------------------------------------------------------------


class _SessionClient:
    def __init__(self, session: Any) -> None:
        self.session = session

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        result = await self.session.call_tool(name, arguments)
        text = "".join(getattr(block, "text", "") for block in result.content)
        if result.is_error:
            raise RuntimeError(f"tool error: {text}")
        return text

    async def list_tools(self) -> list[str]:
        return [tool.name for tool in (await self.session.list_tools()).tools]


@contextlib.asynccontextmanager
async def _sdk_stdio(command: list[str], env: dict[str, str] | None) -> AsyncIterator[tuple[Any, Any]]:
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    with contextlib.closing(null_log()) as errlog:  # the server's stderr (toolrelay's goes to its log)
        async with stdio_client(params, errlog=errlog) as streams:
            yield streams


@contextlib.asynccontextmanager
async def sdk_session(command: list[str], env: dict[str, str] | None = None) -> AsyncIterator[_SessionClient]:
    """The mcp SDK's ``ClientSession`` (initialize handshake) over its stdio client."""
    from mcp import ClientSession

    async with _sdk_stdio(command, env) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield _SessionClient(session)


@contextlib.asynccontextmanager
async def sdk_client(command: list[str], env: dict[str, str] | None = None) -> AsyncIterator[_SessionClient]:
    """The mcp SDK's high-level ``mcp.Client`` in "auto" mode (server/discover, then fallback)."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    with contextlib.closing(null_log()) as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="auto") as client:
            yield _SessionClient(client)


# -- peers: agent loops -------------------------------------------------------------------


@contextlib.asynccontextmanager
async def agents_runner(
    base_url: str, server_cmd: list[str], *, cache_tools_list: bool = False
) -> AsyncIterator[RunOnce]:
    """OpenAI Agents SDK: ``Runner.run`` with ``MCPServerStdio``, tracing off, defaults otherwise
    (``cache_tools_list=False`` sends tools/list to the server every turn)."""
    from agents import Agent, Runner, set_default_openai_client, set_tracing_disabled
    from agents.mcp import MCPServerStdio
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=base_url, api_key=API_KEY)
    set_default_openai_client(client, use_for_tracing=False)
    params = {"command": server_cmd[0], "args": server_cmd[1:]}
    try:
        async with MCPServerStdio(params=params, cache_tools_list=cache_tools_list, name="echo") as server:
            agent = Agent(name="bench", instructions="You are a benchmark agent.", model=MODEL,
                          mcp_servers=[server])

            async def run_once(prompt: str) -> str:
                return str((await Runner.run(agent, prompt)).final_output)

            yield run_once
    finally:
        await client.close()


@contextlib.asynccontextmanager
async def agents_cached_runner(base_url: str, server_cmd: list[str]) -> AsyncIterator[RunOnce]:
    """The Agents SDK with ``cache_tools_list=True`` (one tools/list per connection)."""
    async with agents_runner(base_url, server_cmd, cache_tools_list=True) as run_once:
        yield run_once


@contextlib.asynccontextmanager
async def agents_streamed_runner(base_url: str, server_cmd: list[str]) -> AsyncIterator[RunOnce]:
    """The Agents SDK streaming: ``Runner.run_streamed``, every event consumed as it comes
    (it runs the tools once the response has completed), ``cache_tools_list=True``."""
    from agents import Agent, Runner, set_default_openai_client, set_tracing_disabled
    from agents.mcp import MCPServerStdio
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=base_url, api_key=API_KEY)
    set_default_openai_client(client, use_for_tracing=False)
    params = {"command": server_cmd[0], "args": server_cmd[1:]}
    try:
        async with MCPServerStdio(params=params, cache_tools_list=True, name="slow",
                                  client_session_timeout_seconds=60) as server:
            agent = Agent(name="bench", instructions="You are a benchmark agent.", model=MODEL,
                          mcp_servers=[server])

            async def run_once(prompt: str) -> str:
                result = Runner.run_streamed(agent, prompt)
                async for _ in result.stream_events():
                    pass
                return str(result.final_output)

            yield run_once
    finally:
        await client.close()


@contextlib.asynccontextmanager
async def raw_runner(base_url: str, server_cmd: list[str]) -> AsyncIterator[RunOnce]:
    """A hand-written loop on the same SDKs, no framework: ``AsyncOpenAI.responses.create`` +
    ``ClientSession.call_tool``, the conversation replayed each turn."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key=API_KEY)
    try:
        async with sdk_session(server_cmd) as mcp_client:
            listed = await mcp_client.session.list_tools()
            tools = [{"type": "function", "name": t.name, "description": t.description or "",
                      "parameters": t.input_schema, "strict": False} for t in listed.tools]

            async def run_once(prompt: str) -> str:
                items: list[Any] = [{"role": "user", "content": prompt}]
                for _ in range(10):
                    response = await client.responses.create(model=MODEL, input=items, tools=tools)
                    calls = [item for item in response.output if item.type == "function_call"]
                    if not calls:
                        return str(response.output_text)
                    for call in calls:
                        items.append(call.model_dump(exclude_none=True, by_alias=True))
                        text = await mcp_client.call_tool(call.name, json.loads(call.arguments or "{}"))
                        output = {"type": "function_call_output", "call_id": call.call_id, "output": text}
                        items.append(output)
                raise RuntimeError("too many turns")

            yield run_once
    finally:
        await client.close()


# -- registries ---------------------------------------------------------------------------

CLIENTS: dict[str, Callable[..., Any]] = {
    "toolrelay": open_client,
    "toolrelay-catalog": open_catalog_client,
    "sdk-session": sdk_session,
    "sdk-client": sdk_client,
}
RUNNERS: dict[str, Callable[..., Any]] = {
    "toolrelay": runner,
    "toolrelay-stream": stream_runner,
    "toolrelay-no-stream": no_stream_runner,
    "agents-streamed": agents_streamed_runner,
    "agents": agents_runner,
    "agents-cached": agents_cached_runner,
    "raw": raw_runner,
}


_PRELOAD: dict[str, tuple[str, ...]] = {
    "toolrelay": ("toolrelay.model", "toolrelay.relay.loop"),
    "toolrelay-stream": ("toolrelay.model", "toolrelay.relay.loop"),
    "toolrelay-no-stream": ("toolrelay.model", "toolrelay.relay.loop"),
    "agents-streamed": ("openai", "agents", "agents.mcp"),
    "sdk-session": ("mcp", "mcp.client.stdio"),
    "sdk-client": ("mcp", "mcp.client.stdio"),
    "agents": ("openai", "agents", "agents.mcp"),
    "agents-cached": ("openai", "agents", "agents.mcp"),
    "raw": ("openai", "mcp", "mcp.client.stdio"),
}


def preload(name: str) -> None:
    """Import what a registered client or runner needs, so a connect time excludes imports."""
    for module in _PRELOAD.get(name, ()):
        importlib.import_module(module)


def resolve(spec: str, registry: dict[str, Callable[..., Any]]) -> Callable[..., Any]:
    """A registered name, or ``module:callable``."""
    if spec in registry:
        return registry[spec]
    module, _, attribute = spec.partition(":")
    if not attribute:
        raise SystemExit(f"unknown name {spec!r}: use one of {', '.join(registry)} or module:callable")
    found: Callable[..., Any] = getattr(importlib.import_module(module), attribute)
    return found
