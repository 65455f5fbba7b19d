"""A 2026-07-28-only HTTP server (the official SDK's MCPServer, refusing handshake-era
requests: testkit/servers/sdk_modern_server.py) as a user meets it with ``toolrelay``:

- slow to answer ``server/discover`` (0.5 s, a remote round trip): the ``initialize`` sent
  beside the probe is refused (or answered with an empty result, as the conformance suite's
  mock servers do), and the probe's answer decides (``client/era_probe.py``);
- refusing the first probe ``-32022`` with the revisions it ``supported``: the probe is sent
  again at a listed one;
- a parameter marked ``x-mcp-header`` (SEP-2243) mirrored into ``Mcp-Param-Region``, which the
  SDK requires; a tool whose marks break the revision's rules (toolrelay's own endpoint
  lists such tools) left out, with a notice naming it and the rule;
- a warning logged during a call, shown on stderr without ``--server-log-level`` (the
  default level rides in each request's ``_meta``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from client_helpers import sdk_http_server

from testkit.mcp_http import running_server
from testkit.servers import SDK_MODERN_SERVER
from toolrelay.protocol.mcp import text_result
from toolrelay.server.app import CallContext

MARKED = {  # tool → the property marked x-mcp-header; only "fine" keeps the rules
    "fine": {"region": {"type": "string", "x-mcp-header": "Region"}},
    "on_a_number": {"score": {"type": "number", "x-mcp-header": "Score"}},
    "not_a_token": {"value": {"type": "string", "x-mcp-header": "My Region"}},
    "twice": {"a": {"type": "string", "x-mcp-header": "Zone"},
              "b": {"type": "string", "x-mcp-header": "zone"}},
    "in_items": {"list": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}},
}


class MarkedService:
    """Tools whose schemas carry x-mcp-header marks, kept or broken (toolrelay's own server
    lists what it is given; the SDK's refuses to register a broken one)."""

    name, version, instructions = "marked", "1", None

    def tools(self) -> list[dict[str, object]]:
        return [{"name": name, "description": f"{name} tool",
                 "inputSchema": {"type": "object", "properties": properties}}
                for name, properties in MARKED.items()]

    def call(self, name: str, arguments: dict[str, object], context: CallContext) -> dict[str, object]:
        return text_result(f"{name} ran")


@pytest.fixture(scope="module")
def slow_url() -> Iterator[str]:
    with sdk_http_server("http", "--discover-delay", "0.5", script=SDK_MODERN_SERVER) as url:
        yield url


@pytest.fixture(scope="module")
def prompt_url() -> Iterator[str]:
    with sdk_http_server("http", script=SDK_MODERN_SERVER) as url:
        yield url


def toolrelay(url: str, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    config = folder / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"m": {"url": url}}}), encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "toolrelay", *args, "--config", str(config)], cwd=folder,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def wire(proc: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    """The JSON-RPC messages ``call --wire --json`` printed, in order."""
    return [line["message"] for line in json.loads(proc.stdout)["wire"]]


@pytest.mark.parametrize("initialize", ["refused", "answered empty"])
def test_a_slow_probe_decides_over_the_initialize_beside_it(
    slow_url: str, tmp_path: Path, initialize: str
) -> None:
    if initialize == "refused":
        proc = toolrelay(slow_url, tmp_path, "call", "m__echo", '{"text": "hello"}', "--wire", "--json")
    else:  # an initialize result naming no revision settles nothing either
        with sdk_http_server("http", "--discover-delay", "0.5", "--empty-initialize",
                             script=SDK_MODERN_SERVER) as url:
            proc = toolrelay(url, tmp_path, "call", "m__echo", '{"text": "hello"}', "--wire", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "unavailable" not in proc.stderr and json.loads(proc.stdout)["status"] == "ok"
    methods = [message.get("method") for message in wire(proc)]
    assert methods[:2] == ["server/discover", "initialize"]  # the handshake went out beside the slow probe
    assert "tools/call" in methods


def test_a_probe_refused_with_supported_versions_is_sent_again_at_one(tmp_path: Path) -> None:
    with sdk_http_server("http", "--refuse-first-probe", script=SDK_MODERN_SERVER) as url:
        proc = toolrelay(url, tmp_path, "call", "m__echo", '{"text": "again"}', "--wire", "--json")
    assert proc.returncode == 0, proc.stderr
    probes = [m for m in wire(proc) if m.get("method") == "server/discover"]
    assert len(probes) == 2  # (an initialize may go out beside the second, on a slow machine)
    retried = probes[1]["params"]["_meta"]  # type: ignore[index]
    assert retried["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert json.loads(proc.stdout)["result"]["content"][0]["text"] == "again"


def test_an_x_mcp_header_parameter_rides_in_its_header(prompt_url: str, tmp_path: Path) -> None:
    proc = toolrelay(prompt_url, tmp_path, "call", "m__regional", '{"region": "eu-west", "text": "hi"}')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "eu-west: hi"


def test_a_server_warning_is_shown_without_a_log_level(prompt_url: str, tmp_path: Path) -> None:
    proc = toolrelay(prompt_url, tmp_path, "call", "m__warn", '{"text": "the disk"}')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "warned about the disk"
    assert "[m] warning: careful with the disk" in proc.stderr


def test_tools_with_broken_x_mcp_header_marks_are_left_out_with_a_notice(tmp_path: Path) -> None:
    with running_server(MarkedService()) as url:  # type: ignore[arg-type]
        proc = toolrelay(url, tmp_path, "tools", "--json")
        every = toolrelay(url, tmp_path, "tools", "--all", "--json")
    assert proc.returncode == 0, proc.stderr
    assert [tool["name"] for tool in json.loads(proc.stdout)] == ["m__fine"]
    withheld = {entry["tool"]: entry["reason"] for entry in json.loads(every.stdout)["withheld"]}
    assert sorted(withheld) == ["in_items", "not_a_token", "on_a_number", "twice"]
    assert all(reason.endswith("(MCP 2026-07-28, SEP-2243)") for reason in withheld.values())
    for name, rule in [("on_a_number", "only on string, integer or boolean"),
                       ("not_a_token", "must be a non-empty HTTP token, not 'My Region'"),
                       ("twice", "is already used by property"),
                       ("in_items", "only on a property reached through properties")]:
        assert f"server m: tool {name} is not offered: " in proc.stderr and rule in proc.stderr, proc.stderr
