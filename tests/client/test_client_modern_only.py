"""A 2026-07-28-only HTTP server (the official SDK's MCPServer, refusing handshake-era
requests: testkit/servers/sdk_modern_server.py) as a user meets it with ``toolrelay``:

- slow to answer ``server/discover`` (0.5 s, a remote round trip): the ``initialize`` sent
  beside the probe is refused, and the probe's answer decides (``client/era.py``);
- refusing the first probe ``-32022`` with the revisions it ``supported``: the probe is sent
  again at a listed one;
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

from testkit.servers import SDK_MODERN_SERVER


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


def test_a_slow_probe_decides_over_the_refused_initialize_beside_it(slow_url: str, tmp_path: Path) -> None:
    proc = toolrelay(slow_url, tmp_path, "call", "m__echo", '{"text": "hello"}', "--wire", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "unavailable" not in proc.stderr and json.loads(proc.stdout)["status"] == "ok"
    methods = [message.get("method") for message in wire(proc)]
    assert methods[:2] == ["server/discover", "initialize"]  # the handshake went out beside the slow probe
    assert "tools/call" in methods


def test_a_probe_refused_with_supported_versions_is_sent_again_at_one(tmp_path: Path) -> None:
    with sdk_http_server("http", "--refuse-first-probe", script=SDK_MODERN_SERVER) as url:
        proc = toolrelay(url, tmp_path, "call", "m__echo", '{"text": "again"}', "--wire", "--json")
    assert proc.returncode == 0, proc.stderr
    sent = [m for m in wire(proc) if "method" in m]
    assert [m["method"] for m in sent[:2]] == ["server/discover", "server/discover"]
    assert "initialize" not in [m["method"] for m in sent]
    retried = sent[1]["params"]["_meta"]  # type: ignore[index]
    assert retried["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


def test_a_server_warning_is_shown_without_a_log_level(prompt_url: str, tmp_path: Path) -> None:
    proc = toolrelay(prompt_url, tmp_path, "call", "m__warn", '{"text": "the disk"}')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "warned about the disk"
    assert "[m] warning: careful with the disk" in proc.stderr
