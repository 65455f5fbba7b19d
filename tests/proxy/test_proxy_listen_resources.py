"""A 2026-07-28 host that names resource URIs on its ``subscriptions/listen`` request hears
their updates, and only theirs: the proxy acknowledges the URIs a server of its config can
follow (not one of no server's), subscribes to each upstream once, and sends each
``notifications/resources/updated`` only to the listen requests that named its URI (the
host leg, as recorded, shows which request each went to). Over stdio and HTTP, with the
SDK as the host; the transcript verifies."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import Client

from conftest import PYTHON, REPO

from .proxy_helpers import (
    broken_as,
    events,
    http_proxy,
    proxy_args,
    script_entry,
    stdio_proxy,
    verify,
    verify_tampered,
    write_config,
)

FEATURES = REPO / "tests" / "testkit" / "servers" / "conformance_features.py"
WATCHED = "toolrelay://a/test://watched-resource"
STATIC = "toolrelay://a/test://static-text"
NOBODYS = "toolrelay://nobody/test://x"
UPDATED = "notifications/resources/updated"


async def _listen_twice(server: Any) -> tuple[list[Any], list[Any]]:
    """Two listen requests, each naming one URI (the first also one no server has); then a
    prompt change both hear, so each stream's events up to it are all it got."""
    async with Client(server, mode="2026-07-28") as client, \
            client.listen(prompts_list_changed=True, resource_subscriptions=[WATCHED, NOBODYS]) as first, \
            client.listen(prompts_list_changed=True, resource_subscriptions=[STATIC]) as second:
        await client.call_tool("a__test_add_prompt", {})
        seen: tuple[list[Any], list[Any]] = ([], [])
        with anyio.fail_after(15):
            for stream, got in zip((first, second), seen, strict=True):
                while not got or type(got[-1]).__name__ != "PromptsListChanged":
                    got.append(await stream.__anext__())
        honoured = [s.honored.model_dump(exclude_none=True, by_alias=True) for s in (first, second)]
    return honoured, [[(type(e).__name__, getattr(e, "uri", None)) for e in got] for got in seen]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_2026_host_hears_the_updates_of_the_resources_it_listens_for(
    tmp_path: Path, transport: str,
) -> None:
    config = write_config(tmp_path, {"a": script_entry(FEATURES)})
    transcript = tmp_path / "proxy.jsonl"
    more = ("--protocol-version", "2025-11-25")  # the server: resources/subscribe
    if transport == "stdio":
        honoured, seen = anyio.run(_listen_twice, stdio_proxy(config, transcript, *more))
    else:
        with http_proxy(config, transcript, *more) as url:
            honoured, seen = anyio.run(_listen_twice, url)
    assert honoured == [{"promptsListChanged": True, "resourceSubscriptions": [WATCHED]},
                        {"promptsListChanged": True, "resourceSubscriptions": [STATIC]}]
    first = [event for event in seen[0] if event[0] != "ResourcesListChanged"]
    assert first == [("ResourceUpdated", WATCHED), ("PromptsListChanged", None)]  # not the other's update
    assert ("ResourceUpdated", STATIC) in seen[1]
    recorded = events(transcript)
    subscribed = [(e["server"], e["message"]["params"]["uri"]) for e in recorded
                  if e["kind"] == "mcp_request" and e["message"].get("method") == "resources/subscribe"]
    assert sorted(subscribed) == [("a", "test://static-text"), ("a", "test://watched-resource")]  # once each
    wire = [e["message"] for e in recorded if e["kind"] == "proxy_wire"]
    listens = {m["id"]: m["params"]["notifications"].get("resourceSubscriptions")
               for m in wire if m.get("method") == "subscriptions/listen"}
    told = [(m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], m["params"]["uri"])
            for m in wire if m.get("method") == UPDATED]
    assert sorted(uri for _, uri in told) == [STATIC, WATCHED]
    assert all(uri in listens[listen] for listen, uri in told)  # each to the request that named it only
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "follows 1 resource(s), told 1 update(s) of them only" in checked.stdout
    if transport == "stdio":
        broken_as(verify_tampered(transcript, _told_the_other, tmp_path),
                  f"told resources/updated of {STATIC}, a URI it did not listen for")


def _told_the_other(lines: list[dict[str, Any]]) -> None:
    """As if the watched resource's listener had been sent the other one's update."""
    for line in lines:
        message = line.get("message") or {}
        if line["kind"] == "proxy_wire" and message.get("method") == UPDATED and \
                message["params"]["uri"] == WATCHED:
            message["params"]["uri"] = STATIC


def test_a_2026_host_is_told_resources_can_be_followed(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"a": script_entry(FEATURES)})
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}
    command = [PYTHON, *proxy_args(config, tmp_path / "proxy.jsonl", "--protocol-version", "2025-11-25")]
    done = subprocess.run(command, input=json.dumps(discover) + "\n", capture_output=True, text=True,
                          timeout=60)
    declared = json.loads(done.stdout.splitlines()[0])["result"]["capabilities"]["resources"]
    assert declared == {"subscribe": True, "listChanged": True}  # followed on listen requests
