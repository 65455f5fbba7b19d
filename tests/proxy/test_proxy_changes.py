"""What an upstream server tells of changes reaches the proxy's hosts: a resource update
(its URI as hosts see it) on a stdio host's session, a tool list change on a 2025 HTTP
host's standalone stream (GET), and on a 2026-07-28 host's ``subscriptions/listen``
request (the SDK's ``Client.listen``, over stdio and HTTP), acknowledged with the subset
the proxy honours; every transport's session declares ``listChanged``. A prompt list change
is re-listed before it is passed on. A server whose list fails leaves its part out, said
as a notice; one that dies mid-read is a JSON-RPC error naming it, and restarts."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import mcp_types as t
import pytest
from mcp.client import Client

from conftest import PYTHON, REPO

from .proxy_helpers import events, http_proxy, proxy_args, script_entry, stdio_proxy, verify, write_config

FEATURES = REPO / "tests" / "testkit" / "servers" / "conformance_features.py"
GROWER = REPO / "tests" / "testkit" / "servers" / "growing_server.py"
HANDSHAKE = {"protocolVersion": "2025-11-25", "capabilities": {},
             "clientInfo": {"name": "raw", "version": "1"}}


def test_a_resource_update_reaches_a_stdio_host_under_the_proxys_uri(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"a": script_entry(FEATURES)})
    transcript = tmp_path / "proxy.jsonl"
    asked = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HANDSHAKE},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
         "params": {"uri": "toolrelay://a/test://watched-resource"}},
    ]
    command = [PYTHON, *proxy_args(config, transcript, "--protocol-version", "2025-11-25")]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(line) + "\n" for line in asked))
        proc.stdin.flush()
        seen = [json.loads(proc.stdout.readline()) for _ in range(3)]  # initialize, subscribe, the update
        proc.stdin.close()
        proc.wait(20)
    assert seen[0]["result"]["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
    update = {"jsonrpc": "2.0", "method": "notifications/resources/updated",
              "params": {"uri": "toolrelay://a/test://watched-resource"}}
    assert update in seen and {"jsonrpc": "2.0", "id": 2, "result": {}} in seen
    assert verify(transcript).returncode == 0


def _sse_messages(response: httpx.Response, found: list[dict[str, Any]], wanted: str) -> None:
    for line in response.iter_lines():
        if line.startswith("data:") and line[5:].strip():
            found.append(json.loads(line[5:]))
            if found[-1].get("method") == wanted:
                return


def test_a_tool_list_change_reaches_an_http_host_on_its_get_stream(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"grow": script_entry(GROWER)})
    transcript = tmp_path / "proxy.jsonl"
    json_sse = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    with http_proxy(config, transcript) as url, httpx.Client(timeout=20) as http:
        opened = http.post(url, headers=json_sse, json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                                        "params": HANDSHAKE})
        assert opened.json()["result"]["capabilities"]["tools"] == {"listChanged": True}
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        http.post(url, headers={**json_sse, **session}, json=initialized)
        told: list[dict[str, Any]] = []
        with http.stream("GET", url, headers={"accept": "text/event-stream", **session}) as stream:
            wanted = "notifications/tools/list_changed"
            reader = threading.Thread(target=_sse_messages, args=(stream, told, wanted))
            reader.start()
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "grow__grow", "arguments": {}}}
            called = http.post(url, headers={**json_sse, **session}, json=call)
            assert "tool_1" in called.text
            reader.join(15)
        modern_headers = {**json_sse, "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover"}
        modern = http.post(url, headers=modern_headers, json={
            "jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}}})
    assert {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"} in told
    assert "result" in modern.json(), modern.text
    assert modern.json()["result"]["capabilities"]["tools"] == {"listChanged": True}  # told on listen
    assert verify(transcript).returncode == 0


async def _listened(server: Any) -> tuple[Any, str, set[str]]:
    async with Client(server, mode="2026-07-28") as client:
        async with client.listen(tools_list_changed=True, prompts_list_changed=True) as subscription:
            called = await client.call_tool("grow__grow", {})
            with anyio.fail_after(15):
                event = await subscription.__anext__()
        tools = {tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools}
        honoured = subscription.honored.model_dump(exclude_none=True, by_alias=True)
        return honoured, type(event).__name__, tools | {
            block.text for block in called.content if isinstance(block, t.TextContent)}


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_2026_host_hears_a_tool_list_change_on_its_listen_request(tmp_path: Path, transport: str) -> None:
    config = write_config(tmp_path, {"grow": script_entry(GROWER)})
    transcript = tmp_path / "proxy.jsonl"
    if transport == "stdio":
        honoured, event, seen = anyio.run(_listened, stdio_proxy(config, transcript))
    else:
        with http_proxy(config, transcript) as url:
            honoured, event, seen = anyio.run(_listened, url)
    assert honoured == {"toolsListChanged": True}  # the growing server has no prompts
    assert event == "ToolsListChanged", event
    assert {"grow__grow", "grow__tool_1"} <= seen
    assert verify(transcript).returncode == 0


def test_an_upstream_prompt_list_change_is_relisted_and_passed_on(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"a": script_entry(FEATURES)})
    transcript = tmp_path / "proxy.jsonl"
    asked = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HANDSHAKE},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "a__test_add_prompt", "arguments": {}}},
    ]
    command = [PYTHON, *proxy_args(config, transcript, "--protocol-version", "2025-11-25")]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(line) + "\n" for line in asked))
        proc.stdin.flush()
        seen = [json.loads(proc.stdout.readline()) for _ in range(4)]  # initialize, the answer, two changes
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "prompts/list"}) + "\n")
        proc.stdin.flush()
        listed = json.loads(proc.stdout.readline())
        proc.stdin.close()
        proc.wait(20)
    methods = [message.get("method") for message in seen]
    assert "notifications/prompts/list_changed" in methods
    assert "notifications/resources/list_changed" in methods
    assert seen[0]["result"]["capabilities"]["prompts"] == {"listChanged": True}
    assert "a__added_1" in {prompt["name"] for prompt in listed["result"]["prompts"]}
    offers = [e["reason"] for e in events(transcript) if e["kind"] == "proxy_offer"]
    assert offers == ["initial", "prompts/list"]  # the re-listed names, recorded for verify
    assert verify(transcript).returncode == 0


def test_a_failing_server_is_a_json_rpc_error_and_its_list_is_left_out(tmp_path: Path) -> None:
    servers = {"a": script_entry(FEATURES), "b": script_entry(FEATURES, "--fail-lists")}
    config = write_config(tmp_path, servers)
    transcript = tmp_path / "proxy.jsonl"
    asked = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HANDSHAKE},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "resources/list"},
    ]
    then = [  # one at a time: the crash must not cut a's list short
        {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "toolrelay://a/test://crash"}},
        {"jsonrpc": "2.0", "id": 4, "method": "resources/read",
         "params": {"uri": "toolrelay://a/test://static-text"}},
    ]
    stderr = tmp_path / "stderr.txt"
    with stderr.open("w") as errors, subprocess.Popen(
            [PYTHON, *proxy_args(config, transcript)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=errors, text=True) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(line) + "\n" for line in asked))
        proc.stdin.flush()
        first = [json.loads(proc.stdout.readline()) for _ in range(2)]  # initialize, the list
        answers = {message["id"]: message for message in first}
        for line in then:
            proc.stdin.write(json.dumps(line) + "\n")
            proc.stdin.flush()
            answers[line["id"]] = json.loads(proc.stdout.readline())
        proc.stdin.close()
        proc.wait(20)
    listed = {resource["uri"] for resource in answers[2]["result"]["resources"]}
    names = ("static-text", "static-binary", "watched-resource")
    assert listed == {f"toolrelay://a/test://{name}" for name in names}
    said = stderr.read_text(encoding="utf-8")
    assert "server b: resources/list failed: " in said and "its part of the list is left out" in said, said
    failed = answers[3]["error"]
    assert failed["code"] == -32603
    assert failed["message"].startswith("toolrelay proxy: server a did not answer: "), failed
    assert answers[4]["result"]["contents"][0]["uri"] == "toolrelay://a/test://static-text"  # restarted
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "the upstream request failed" in checked.stdout
    assert "the host got a JSON-RPC error" in checked.stdout


def test_a_listen_request_without_the_envelope_is_refused(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"grow": script_entry(GROWER)})
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json",
               "mcp-protocol-version": "2026-07-28", "mcp-method": "subscriptions/listen"}
    bare = {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
            "params": {"notifications": {"toolsListChanged": True}}}
    with http_proxy(config, tmp_path / "proxy.jsonl") as url, httpx.Client(timeout=10) as http:
        refused = http.post(url, headers=headers, json=bare)
    assert refused.status_code == 400
    assert refused.json()["error"]["message"].startswith("Invalid params: params._meta must be an object")
