"""server-everything (npm, pinned as in testkit/everything.py) behind ``toolrelay proxy``,
the SDK as the host: all 19 of its tools are offered as ``ev__TOOL`` and each works
through the proxy. Those whose answer depends only on their arguments answer exactly as
the server answers the SDK directly; what the server asks of its client (sampling,
elicitation, roots) is answered by the proxy's own settings, since this host declares
none of them (sampling refused; elicitation declined by ``--elicit decline``; the config's
roots); ``test_proxy_asks.py`` has a host that declares them.
The proxy transcript verifies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types as t
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from testkit import everything

from .proxy_helpers import stdio_proxy, verify

SAME = {  # tool → arguments: answered exactly as the server answers directly
    "echo": {"message": "über ☃"},
    "get-sum": {"a": 2, "b": 3},
    "get-tiny-image": {},
    "get-annotated-message": {"messageType": "error", "includeImage": True},
    "get-resource-links": {"count": 2},
    "get-structured-content": {"location": "New York"},
}
OWN = {  # tool → (arguments, a text its answer through the proxy holds)
    "get-env": ({}, '"PATH"'),
    "get-resource-reference": ({"resourceType": "Text", "resourceId": 1}, "demo://resource/dynamic/text/1"),
    "get-roots-list": ({}, "URI: file://"),
    "gzip-file-as-resource": ({"name": "x.gz", "data": "https://example.com/x.txt"}, ""),
    "simulate-research-query": ({"topic": "MCP"}, "# Research Report: MCP"),
    "toggle-simulated-logging": ({}, "simulated"),
    "toggle-subscriber-updates": ({}, "resource updated notifications"),
    "trigger-elicitation-request": ({}, "User declined to provide the requested information."),
    "trigger-elicitation-request-async": ({}, "[DECLINED]"),
    "trigger-long-running-operation": ({"duration": 1, "steps": 2}, "Long running operation completed."),
    "trigger-sampling-request": ({"prompt": "Say hi", "maxTokens": 5}, "the host did not declare sampling"),
    "trigger-sampling-request-async": ({"prompt": "Say hi"}, "the host did not declare sampling"),
    "trigger-url-elicitation": ({"url": "https://example.com/sign-in", "message": "Sign in"}, "declined"),
}


def _dump(result: t.CallToolResult) -> Any:
    found = result.model_dump(mode="json", exclude_none=True)
    found.pop("meta", None)
    found.pop("result_type", None)
    return found


async def _calls(server: Any, prefix: str, tools: dict[str, Any]) -> tuple[set[str], dict[str, Any]]:
    async with Client(server, mode="legacy") as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        answers = {}
        for name, arguments in tools.items():
            with anyio.fail_after(60):
                answers[name] = _dump(await client.call_tool(prefix + name, arguments))
        return listed, answers


def test_every_tool_of_server_everything_works_through_the_proxy(
    everything_server: list[str], tmp_path: Path,
) -> None:
    config = tmp_path / "ev.json"
    entries = everything.stdio_config(everything_server, [str(tmp_path)])
    config.write_text(json.dumps(entries), encoding="utf-8")
    transcript = tmp_path / "proxy.jsonl"
    proxy = stdio_proxy(config, transcript, "--protocol-version", "2025-11-25")
    every = {**SAME, **{name: arguments for name, (arguments, _) in OWN.items()}}
    listed, through = anyio.run(_calls, proxy, "ev__", every)
    direct = StdioServerParameters(command=everything_server[0], args=[*everything_server[1:], "stdio"])
    _, straight = anyio.run(_calls, direct, "", SAME)
    assert {f"ev__{name}" for name in every} == listed  # all 19, under their aliases
    for name in SAME:
        assert through[name] == straight[name], name
    for name, (_, text) in OWN.items():
        assert text in str(through[name]), (name, through[name])
    checked = verify(transcript)
    assert checked.returncode == 0, checked.stdout
