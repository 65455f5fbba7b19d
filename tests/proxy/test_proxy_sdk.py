"""The official MCP Python SDK (mcp 2.3.0) as the host, through ``toolrelay proxy`` to two
real upstream servers (``toolrelay files`` and a stdlib echo server): over stdio and
Streamable HTTP, in the 2026-07-28 era and the 2025-11-25 handshake; a raw 2025-06-18
host over stdio. Every tool is offered as ``server__tool``, calls come back as the
upstream answered them, a host's own call id is recorded, and the transcript verifies."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import mcp_types as t
import pytest
from mcp import MCPError
from mcp.client import Client

from conftest import PYTHON, REPO

from .proxy_helpers import events, http_proxy, proxy_args, script_entry, stdio_proxy, verify, write_config

MODES = {"2026-07-28": "2026-07-28", "legacy": "2025-11-25"}


async def _host(server: Any, mode: str, workspace: Path) -> dict[str, Any]:
    async with Client(server, mode=mode) as client:
        tools = await client.list_tools()
        read = await client.call_tool("fs__read_text_file", {"path": str(workspace / "a.txt")})
        echo = await client.call_tool("echo__echo", {"text": "über ☃"},
                                      meta={"io.toolrelay/call_id": "host-call-7"})
        missing = await client.call_tool("fs__read_text_file", {"path": str(workspace / "nope.txt")})
        try:
            await client.call_tool("nobody__nothing", {})
            unknown = ""
        except MCPError as exc:
            unknown = str(exc)
        return {"version": client.session.protocol_version, "tools": {tool.name for tool in tools.tools},
                "read": _texts(read), "echo": _texts(echo), "missing": missing.is_error, "unknown": unknown}


def _texts(result: t.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, t.TextContent)]


def _check(found: dict[str, Any], mode: str, transcript: Path) -> None:
    assert found["version"] == MODES[mode]
    assert {"fs__read_text_file", "fs__list_directory", "echo__echo"} <= found["tools"]
    assert found["read"] == ["alpha\n"]
    assert found["echo"] == ["über ☃"]
    assert found["missing"] is True  # the upstream's isError, kept
    assert "Unknown tool: nobody__nothing" in found["unknown"]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "paired with upstream echo connection 1" in checked.stdout
    host_in = [e for e in events(transcript) if e["kind"] == "proxy_host" and e["direction"] == "in"]
    assert [e.get("host_call_id") for e in host_in] == [None, "host-call-7", None, None]


@pytest.mark.parametrize("mode", list(MODES))
def test_sdk_host_over_stdio(config: Path, workspace: Path, mode: str) -> None:
    transcript = workspace / "proxy.jsonl"
    found = anyio.run(_host, stdio_proxy(config, transcript), mode, workspace)
    _check(found, mode, transcript)


@pytest.mark.parametrize("mode", list(MODES))
def test_sdk_host_over_http(config: Path, workspace: Path, mode: str) -> None:
    transcript = workspace / "proxy.jsonl"
    with http_proxy(config, transcript) as url:
        found = anyio.run(_host, url, mode, workspace)
    _check(found, mode, transcript)


def test_two_hosts_at_once_over_http(config: Path, workspace: Path) -> None:
    transcript = workspace / "proxy.jsonl"

    async def both(url: str) -> list[list[str]]:
        answers: list[list[str]] = [[], []]

        async def host(index: int, mode: str) -> None:
            async with Client(url, mode=mode) as client:
                for n in range(5):
                    said = await client.call_tool("echo__echo", {"text": f"host {index} call {n}"})
                    answers[index] += _texts(said)

        async with anyio.create_task_group() as group:
            group.start_soon(host, 0, "legacy")
            group.start_soon(host, 1, "2026-07-28")
        return answers

    with http_proxy(config, transcript) as url:
        answers = anyio.run(both, url)
    assert answers == [[f"host {i} call {n}" for n in range(5)] for i in (0, 1)]
    checked = verify(transcript)
    assert checked.returncode == 0, checked.stdout


def test_a_2025_06_18_host_over_stdio(config: Path, workspace: Path) -> None:
    transcript = workspace / "proxy.jsonl"
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": "c", "method": "tools/call",
         "params": {"name": "echo__echo", "arguments": {"text": "old host"}}},
    ]
    with subprocess.Popen([PYTHON, *proxy_args(config, transcript)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        for line in lines:
            proc.stdin.write(json.dumps(line) + "\n")
            proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in range(3)]
        proc.stdin.close()
        proc.wait(20)
    assert answers[0]["result"]["protocolVersion"] == "2025-06-18"
    assert answers[0]["result"]["capabilities"]["tools"]["listChanged"] is True
    assert "echo__echo" in {tool["name"] for tool in answers[1]["result"]["tools"]}
    echoed = {"content": [{"type": "text", "text": "old host"}]}
    assert answers[2] == {"jsonrpc": "2.0", "id": "c", "result": echoed}
    assert verify(transcript).returncode == 0


def test_an_upstream_list_change_reaches_the_host(workspace: Path) -> None:
    grower = REPO / "tests" / "testkit" / "servers" / "growing_server.py"
    config = write_config(workspace, {"grow": script_entry(grower)})
    transcript = workspace / "proxy.jsonl"
    asked = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "grow__grow", "arguments": {}}},
    ]
    with subprocess.Popen([PYTHON, *proxy_args(config, transcript)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(line) + "\n" for line in asked))
        proc.stdin.flush()
        seen = [json.loads(proc.stdout.readline()) for _ in range(3)]  # initialize, the call, the change
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}) + "\n")
        proc.stdin.flush()
        listed = json.loads(proc.stdout.readline())
        proc.stdin.close()
        proc.wait(20)
    assert {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"} in seen
    assert {tool["name"] for tool in listed["result"]["tools"]} == {"grow__grow", "grow__tool_1"}
    offers = [e["reason"] for e in events(transcript) if e["kind"] == "proxy_offer"]
    assert offers == ["initial", "tools/list_changed"]
