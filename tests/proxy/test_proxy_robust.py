"""The proxy with upstream servers and hosts that misbehave, as real processes: an upstream
that dies mid-call is a tool error for that call and is restarted on the next, while the
other upstream goes on; a host that leaves mid-call gets its call cancelled upstream; a
tool name two servers share refuses the start, naming both; no upstream token reaches a
host."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import anyio
import mcp_types as t
from mcp.client import Client

from conftest import PYTHON

from .proxy_helpers import ECHO, WOBBLY, events, proxy_args, script_entry, stdio_proxy, verify, write_config


def _text(result: t.CallToolResult) -> str:
    block = result.content[0]
    return block.text if isinstance(block, t.TextContent) else ""


def test_an_upstream_that_dies_mid_call_is_restarted_on_the_next(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"wob": script_entry(WOBBLY), "echo": script_entry(ECHO)})
    transcript = tmp_path / "proxy.jsonl"

    async def host() -> list[tuple[bool, str]]:
        async with Client(stdio_proxy(config, transcript), mode="legacy") as client:
            said = []
            async with anyio.create_task_group() as group:  # the other server goes on meanwhile
                async def other() -> None:
                    said.append((False, _text(await client.call_tool("echo__echo", {"text": "still here"}))))
                group.start_soon(other)
                crashed = await client.call_tool("wob__crash", {})
                said.append((bool(crashed.is_error), _text(crashed)))
            again = await client.call_tool("wob__echo", {"text": "back"})
            said.append((bool(again.is_error), _text(again)))
            return said

    said = anyio.run(host)
    assert (False, "still here") in said
    crashed = next(entry for entry in said if entry[0])
    assert "server wob did not answer" in crashed[1] and "exited (code 7)" in crashed[1]
    assert said[-1] == (False, "back")
    routes = [e for e in events(transcript) if e["kind"] == "proxy_route" and e["server"] == "wob"]
    assert [(r["decision"], r["connection"]) for r in routes] == [("failed", 1), ("forwarded", 2)]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "the upstream call failed" in checked.stdout


def test_a_host_that_leaves_mid_call_gets_it_cancelled_upstream(tmp_path: Path) -> None:
    log = tmp_path / "wobbly.log"
    config = write_config(tmp_path, {"wob": script_entry(WOBBLY, "--log", str(log))})
    transcript = tmp_path / "proxy.jsonl"
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "wob__wait", "arguments": {
            "seconds": 30}}},
    ]
    with subprocess.Popen([PYTHON, *proxy_args(config, transcript)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
        proc.stdin.flush()
        proc.stdout.readline()  # initialize answered
        deadline = time.monotonic() + 15
        while not any(e["kind"] == "mcp_request" and e.get("call_id") for e in _lines(transcript)):
            assert time.monotonic() < deadline, "the call never went upstream"
            time.sleep(0.05)
        proc.stdin.close()  # the host goes away mid-call
        assert proc.wait(20) == 0
    recorded = events(transcript)
    cancelled = [e for e in recorded
                 if e["kind"] == "mcp_notification" and e.get("method") == "notifications/cancelled"]
    assert [e["message"]["params"]["requestId"] for e in cancelled] == [_upstream_id(recorded)]
    assert [e["decision"] for e in recorded if e["kind"] == "proxy_route"] == ["cancelled"]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "cancelled by the host" in checked.stdout


def _lines(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.endswith("}")]


def _upstream_id(recorded: list[dict[str, object]]) -> object:
    return next(e["mcp_id"] for e in recorded if e["kind"] == "mcp_request" and e.get("call_id"))


def test_a_shared_tool_name_refuses_the_start_naming_both(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"x.y": script_entry(ECHO), "x_y": script_entry(ECHO)})
    done = subprocess.run([PYTHON, *proxy_args(config, tmp_path / "t.jsonl")], input="", capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert ("tool name collision: x_y__echo would name tool 'echo' of server 'x.y' and tool 'echo' "
            "of server 'x_y'") in done.stderr


def test_no_upstream_token_reaches_the_host(tmp_path: Path) -> None:
    secret = "sk-upstream-4d1f9c2be7a8"
    entry = script_entry(WOBBLY)
    entry["env"] = {"API_TOKEN": secret}
    config = write_config(tmp_path, {"wob": entry})
    transcript = tmp_path / "proxy.jsonl"

    async def host() -> str:
        async with Client(stdio_proxy(config, transcript), mode="legacy") as client:
            listed = await client.list_tools()
            crashed = await client.call_tool("wob__crash", {})
            return json.dumps([listed.model_dump(mode="json"), crashed.model_dump(mode="json")])

    seen = anyio.run(host)
    assert "exited (code 7)" in seen and "[redacted]" in seen  # its stderr tail, the token taken out
    assert secret not in seen
    assert secret not in transcript.read_text(encoding="utf-8")


def test_a_config_naming_the_proxy_itself_is_refused(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"echo": script_entry(ECHO), "toolrelay": {
        "command": "toolrelay", "args": ["proxy", "--config", "claude_desktop_config.json"]}})
    done = subprocess.run([PYTHON, *proxy_args(config, tmp_path / "t.jsonl")], input="", capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert "server toolrelay of the config runs toolrelay proxy itself" in done.stderr
