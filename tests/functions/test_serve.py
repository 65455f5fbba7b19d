"""``toolrelay serve MODULE:NAME``: the same function tools as a real MCP server process,
driven by the official MCP SDK client (mcp 2.3.0) over stdio and Streamable HTTP."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from testkit.processes import run, spawned

HERE = Path(__file__).resolve().parent
SERVE = [sys.executable, "-m", "toolrelay", "serve"]


async def answer_name(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": f"Ada, asked {params.message!r}"})


@asynccontextmanager
async def stdio_session(*targets: str, logs: list[Any]) -> AsyncIterator[tuple[ClientSession, Any]]:
    params = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], *targets], env=dict(os.environ),
                                   cwd=str(HERE))

    async def logged(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    with tempfile.TemporaryFile("w+") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, elicitation_callback=answer_name, logging_callback=logged) as client,
        ):
            await client.initialize()
            yield client, errlog


def test_the_sdk_client_lists_and_calls_functions_over_stdio() -> None:
    logs: list[Any] = []
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def drive() -> tuple[dict[str, Any], list[Any], str]:
        async with stdio_session("tools_module:get_weather", "tools_module:divide", "tools_module:chatty",
                                 logs=logs) as (client, errlog):
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            weather = await client.call_tool("get_weather", {"city": "Oslo", "unit": "F"})
            divided = await client.call_tool("divide", {"a": 1, "b": 0})
            wrong = await client.call_tool("get_weather", {"city": 3})
            chatted = await client.call_tool("chatty", {"steps": 2}, progress_callback=on_progress)
            await asyncio.sleep(0.05)
            errlog.seek(0)
            return listed, [weather, divided, wrong, chatted], errlog.read()

    listed, (weather, divided, wrong, chatted), stderr = asyncio.run(drive())
    assert sorted(listed) == ["chatty", "divide", "get_weather"]
    assert listed["get_weather"].input_schema["required"] == ["city"]
    assert listed["get_weather"].annotations is not None and listed["get_weather"].annotations.read_only_hint
    assert weather.structured_content == {"city": "Oslo", "degrees": 70.7, "unit": "F"}
    assert divided.is_error and divided.content[0].text == "ZeroDivisionError: float division by zero"  # type: ignore[union-attr]
    assert divided.meta is None  # no traceback for another host: it is logged on our stderr
    assert "Traceback (most recent call last)" in stderr and "return a / b" in stderr
    assert wrong.is_error and wrong.content[0].text == (  # type: ignore[union-attr]
        "invalid arguments for get_weather: city: 3 is not of type 'string'")
    assert not chatted.is_error
    assert chatted.structured_content is not None
    assert chatted.structured_content["name"] == "Ada, asked 'Your name?'"
    assert progress == [(1, 2, "step 1"), (2, 2, "step 2")]
    assert logs == [{"steps": 2}]


def test_a_2026_client_gets_a_functions_progress_and_logs_on_its_request() -> None:
    from mcp.client import Client

    progress: list[tuple[float, float | None, str | None]] = []
    logs: list[Any] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def logged(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async def drive() -> Any:
        params = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], "tools_module:chatty"],
                                       env=dict(os.environ), cwd=str(HERE))
        async with Client(params, mode="2026-07-28", log_level="info", logging_callback=logged) as client:
            return await client.call_tool("chatty", {"steps": 2}, progress_callback=on_progress)

    chatted = asyncio.run(drive())
    assert progress == [(1, 2, "step 1"), (2, 2, "step 2")] and logs == [{"steps": 2}]
    assert chatted.is_error  # its elicit: a 2026-07-28 request carries no server request
    assert "no server requests" in chatted.content[0].text  # type: ignore[union-attr]


@contextmanager
def http_server(*targets: str) -> Iterator[str]:
    command = [*SERVE, *targets, "--http", "0"]
    with spawned(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=HERE) as proc:
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if found := re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line):
                break
        else:
            raise AssertionError(f"toolrelay serve --http printed no URL: {''.join(seen)}")
        yield found.group(1)
        proc.terminate()
        proc.wait(10)


def test_the_sdk_client_calls_every_tool_of_a_module_over_http() -> None:
    async def drive(url: str) -> tuple[list[str], Any]:
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            names = sorted(tool.name for tool in (await client.list_tools()).tools)
            return names, await client.call_tool("plain_add", {"a": 2, "b": 40})

    with http_server("tools_module", "tools_module:plain_add") as url:
        names, added = asyncio.run(drive(url))
    assert names == ["chatty", "divide", "get_weather", "plain_add", "refuse", "save_note"]
    assert added.structured_content == {"result": 42}


@pytest.mark.parametrize(("targets", "message"), [
    (["no_such_module:f"], "no_such_module:f: no module named no_such_module"),
    (["tools_module:nothing"], "tools_module:nothing: module tools_module has no nothing"),
    (["tools_module:SAVED"], "tools_module:SAVED: SAVED is a list, not a function"),
    (["json"], "json: the module has no @toolrelay.tool function (name one as json:NAME)"),
    (["tools_module:get_weather", "tools_module:get_weather"],
     "two tools named get_weather (declare one with toolrelay.tool(fn, name=...))"),
    (["missing.py:f"], "missing.py:f: no such file missing.py"),
])
def test_what_cannot_be_served_is_a_usage_error(targets: list[str], message: str) -> None:
    done = run([*SERVE, *targets], cwd=HERE, timeout=30, text=True)
    assert (done.returncode, done.stderr) == (2, f"toolrelay serve: error: {message}\n")
