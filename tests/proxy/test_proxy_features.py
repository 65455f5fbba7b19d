"""Resources, resource templates, prompts and completion of server-everything through
``toolrelay proxy``, the official MCP Python SDK as the host: over stdio and Streamable
HTTP, in the 2025-11-25 handshake and in 2026-07-28. What the host lists, reads, gets and
completes through the proxy is exactly what the server answers the SDK directly, once
each URI is read back from ``toolrelay://ev/<uri>`` and each prompt from ``ev__<name>``;
a URI or prompt of no server's is a JSON-RPC error naming it; the transcript verifies
(each host request answered once, with what the upstream answered)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import anyio
import mcp_types as t
import pytest
from mcp import MCPError
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from testkit import everything

from .proxy_helpers import events, http_proxy, stdio_proxy, verify

PREFIX = "toolrelay://ev/"
READ = ("demo://resource/static/document/architecture.md", "demo://resource/dynamic/text/1",
        "demo://resource/dynamic/blob/2")
PROMPTS = {"simple-prompt": None, "args-prompt": {"city": "Paris", "state": "TX"},
           "resource-prompt": {"resourceType": "Text", "resourceId": "3"}}


_CLOCK = re.compile(r"\d{1,2}:\d{2}:\d{2}( [AP]M)?")
"""server-everything's dynamic resources say when they were made: the one part that differs."""


def _dump(model: Any) -> Any:
    found = model.model_dump(mode="json", exclude_none=True, by_alias=True)
    for key in ("_meta", "resultType", "ttlMs", "cacheScope"):
        found.pop(key, None)
    for content in found.get("contents", []):
        if "blob" in content:
            content["blob"] = base64.b64decode(content["blob"]).decode()
    return json.loads(_CLOCK.sub("<time>", json.dumps(found)))


def _back(value: Any) -> Any:
    """A result as the host got it through the proxy, its names read back to the upstream's."""
    text = json.dumps(value)
    return json.loads(text.replace(PREFIX, "").replace('"ev__', '"'))


async def _offers(server: Any, mode: str, uri: str = "", prompt: str = "") -> dict[str, Any]:
    async with Client(server, mode=mode) as client:
        found: dict[str, Any] = {
            "resources": _dump(await client.list_resources())["resources"],
            "templates": _dump(await client.list_resource_templates())["resourceTemplates"],
            "prompts": _dump(await client.list_prompts())["prompts"],
            "reads": [_dump(await client.read_resource(uri + read)) for read in READ],
            "gets": [_dump(await client.get_prompt(prompt + name, arguments))
                     for name, arguments in PROMPTS.items()],
            "completed": _dump(await client.complete(
                t.PromptReference(type="ref/prompt", name=prompt + "completable-prompt"),
                {"name": "department", "value": "E"})),
            "template_completed": _dump(await client.complete(
                t.ResourceTemplateReference(type="ref/resource",
                                            uri=uri + "demo://resource/dynamic/text/{resourceId}"),
                {"name": "resourceId", "value": "1"})),
        }
        if uri:
            found["unknown"] = []
            for wrong in (lambda: client.read_resource("demo://resource/static/document/architecture.md"),
                          lambda: client.get_prompt("nobody__nothing")):
                try:
                    await wrong()
                except MCPError as exc:
                    found["unknown"].append(str(exc))
        return found


@pytest.fixture(scope="module")
def direct(everything_server: list[str]) -> dict[str, Any]:
    server = StdioServerParameters(command=everything_server[0], args=[*everything_server[1:], "stdio"])
    return anyio.run(_offers, server, "legacy")


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_resources_and_prompts_through_the_proxy_are_the_servers(
    everything_server: list[str], direct: dict[str, Any], tmp_path: Path, transport: str, mode: str,
) -> None:
    config = tmp_path / "ev.json"
    entries = everything.stdio_config(everything_server, [str(tmp_path)])
    config.write_text(json.dumps(entries), encoding="utf-8")
    transcript = tmp_path / "proxy.jsonl"
    if transport == "stdio":
        through = anyio.run(_offers, stdio_proxy(config, transcript), mode, PREFIX, "ev__")
    else:
        with http_proxy(config, transcript) as url:
            through = anyio.run(_offers, url, mode, PREFIX, "ev__")
    unknown = through.pop("unknown")
    assert all(r["uri"].startswith(PREFIX) for r in through["resources"])
    assert {p["name"] for p in through["prompts"]} == {"ev__" + p["name"] for p in direct["prompts"]}
    assert _back(through) == direct
    assert "Unknown resource: demo://resource/static/document/architecture.md" in unknown[0]
    assert "Unknown prompt: nobody__nothing" in unknown[1]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "resources/read answered as the upstream answered" in checked.stdout
    routes = [e for e in events(transcript) if e["kind"] == "proxy_route"]
    reads = [r for r in routes if r["alias"].startswith(PREFIX + "demo://resource/dynamic/text/1")]
    assert reads and reads[0]["server"] == "ev" and reads[0]["tool"] == "demo://resource/dynamic/text/1"
