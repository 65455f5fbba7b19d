"""toolrelay's client in both MCP eras (``client/era_probe.py``): pinned to 2026-07-28 or probing
(``auto``) it speaks the stateless revision to servers that do (toolrelay's own file
server, the official SDK's), over stdio and HTTP; probing a 2025 server, it falls back to
the handshake at 2025-11-25, at once when the probe is refused and after a short, bounded
wait when it is ignored; a 2025 pin never probes."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from client_helpers import Recorder, open_connection, run, sdk_http_server, stdio_config

from testkit.mcp_http import files_http_process
from toolrelay.client import era_probe
from toolrelay.client.config import ServerConfig, load_config
from toolrelay.client.connection import Connection
from toolrelay.client.era_probe import PROBE_WAIT
from toolrelay.client.pool import ServerPool
from toolrelay.errors import ConfigError, ProtocolError
from toolrelay.events import McpMessage

SILENT_LEGACY = textwrap.dedent('''
    import json, sys
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("method") == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "silent", "version": "1"}}
        elif msg.get("method") == "tools/list":
            result = {"tools": []}
        else:
            continue  # server/discover and anything unknown: never answered
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
''')


REFUSING_LEGACY = textwrap.dedent('''
    import json, sys
    for line in sys.stdin:  # server/discover: never answered; initialize: refused
        msg = json.loads(line)
        if msg.get("method") == "initialize":
            error = {"code": -32602, "message": "no such revision"}
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": error}), flush=True)
''')


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("era-root")
    (folder / "a.txt").write_text("alpha\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def files_url(root: Path) -> Iterator[str]:
    with files_http_process(root) as url:
        yield url


@pytest.fixture(scope="module")
def sdk_url() -> Iterator[str]:
    with sdk_http_server("http") as url:
        yield url


def files_stdio(root: Path) -> ServerConfig:
    return ServerConfig(name="fs", transport="stdio", command=sys.executable,
                        args=("-m", "toolrelay", "files", str(root)), roots=(str(root),))


def http(url: str, root: Path | None = None) -> ServerConfig:
    return ServerConfig(name="h", transport="http", url=url, roots=(str(root),) if root else None)


async def _use(config: ServerConfig, log_dir: Path, asked: str, tool: str, arguments: dict[str, Any]) -> Any:
    recorder = Recorder()
    async with open_connection(config, log_dir, recorder, protocol_version=asked) as connection:
        tools = [tool["name"] for tool in await connection.list_tools()]
        answer = (await connection.call_tool(tool, arguments)).raise_for_error()
        await connection.ping()
        methods = [e.method for e in recorder.seen if isinstance(e, McpMessage) and e.direction == "out"]
        return connection.protocol_version, connection.server_info.get("name"), tools, answer, methods


@pytest.mark.parametrize("asked", ["2026-07-28", "auto"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_toolrelay_files_is_spoken_to_in_2026_07_28(
    root: Path, files_url: str, tmp_path: Path, transport: str, asked: str
) -> None:
    config = files_stdio(root) if transport == "stdio" else http(files_url, root)
    version, name, tools, answer, methods = run(
        _use(config, tmp_path, asked, "read_text_file", {"path": "a.txt"}))
    assert (version, name) == ("2026-07-28", "toolrelay-files")
    assert "read_text_file" in tools and answer["content"][0]["text"] == "alpha\n"
    assert answer["resultType"] == "complete"
    # the server asked for our roots (input_required) and the call was retried with them
    assert methods.count("tools/call") == 2
    assert methods[0] == "server/discover" and "notifications/initialized" not in methods
    # a probe unanswered for PROBE_WAIT (a stdio server still starting, an HTTP one on a busy
    # machine) gets the handshake beside it, refused; pinned to 2026-07-28 the client only probes
    assert "initialize" not in methods or asked == "auto"


@pytest.mark.parametrize("asked", ["2026-07-28", "auto"])
def test_the_official_sdk_server_is_spoken_to_in_2026_07_28(sdk_url: str, tmp_path: Path, asked: str) -> None:
    version, name, tools, answer, _ = run(_use(http(sdk_url), tmp_path, asked, "echo", {"text": "über"}))
    assert (version, name) == ("2026-07-28", "sdk-test")
    assert "echo" in tools and answer["content"][0]["text"] == "über"


def test_a_2025_pin_never_probes(root: Path, tmp_path: Path) -> None:
    version, _, _, _, methods = run(_use(files_stdio(root), tmp_path, "2025-06-18", "read_text_file",
                                         {"path": "a.txt"}))
    assert version == "2025-06-18" and "server/discover" not in methods and methods[0] == "initialize"


def test_auto_falls_back_at_once_when_the_probe_is_refused(tmp_path: Path) -> None:
    version, _, tools, answer, methods = run(_use(stdio_config("minimal_echo_server.py"), tmp_path, "auto",
                                                  "echo", {"text": "hi"}))
    assert version == "2025-11-25" and tools == ["echo"] and answer["content"][0]["text"] == "hi"
    assert methods[:2] == ["server/discover", "initialize"]


async def _connect_time(config: ServerConfig, log_dir: Path, asked: str) -> tuple[float, str | None]:
    connection = Connection(config, Recorder().events, log_dir=log_dir, protocol_version=asked)
    started = time.monotonic()
    try:
        await connection.start()
        return time.monotonic() - started, connection.protocol_version
    finally:
        await connection.close()


def test_a_probe_the_server_ignores_costs_a_bounded_wait(tmp_path: Path) -> None:
    script = tmp_path / "silent.py"
    script.write_text(SILENT_LEGACY, encoding="utf-8")
    config = ServerConfig(name="silent", transport="stdio", command=sys.executable, args=(str(script),))
    pinned, version = run(_connect_time(config, tmp_path, "2025-11-25"))
    assert version == "2025-11-25"
    probing, version = run(_connect_time(config, tmp_path, "auto"))
    assert version == "2025-11-25"
    assert probing - pinned < PROBE_WAIT + 0.2 < 0.4  # the handshake follows the unanswered probe


def test_a_refused_handshake_waits_a_bounded_time_for_an_ignored_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "refusing.py"
    script.write_text(REFUSING_LEGACY, encoding="utf-8")
    monkeypatch.setattr(era_probe, "SETTLE_WAIT", 0.3)  # the probe decides while pending, but not forever
    config = ServerConfig(name="refusing", transport="stdio", command=sys.executable, args=(str(script),))
    started = time.monotonic()
    with pytest.raises(ProtocolError, match=r"refused initialize .*no such revision"):
        run(_connect_time(config, tmp_path, "auto"))
    assert time.monotonic() - started < 3


def test_a_2026_pin_refuses_a_server_that_is_not_modern(tmp_path: Path) -> None:
    async def connect() -> None:
        async with open_connection(stdio_config("minimal_echo_server.py"), tmp_path,
                                   protocol_version="2026-07-28"):
            pass

    with pytest.raises(ProtocolError, match="does not speak MCP 2026-07-28"):
        run(connect())


def test_an_http_error_body_is_the_answer_in_2026_07_28(files_url: str, tmp_path: Path) -> None:
    async def call_unknown() -> Any:
        async with open_connection(http(files_url), tmp_path, protocol_version="2026-07-28") as connection:
            return await connection.call_tool("no_such_tool", {})

    exchange = run(call_unknown())
    assert exchange.error is not None and exchange.error.code == -32602  # not an HTTP status failure


def test_the_config_pins_a_revision_per_server(root: Path, tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    entry = {"command": sys.executable, "args": ["-m", "toolrelay", "files", str(root)]}
    config.write_text(json.dumps({"mcpServers": {
        "modern": {**entry, "toolrelay": {"protocolVersion": "2026-07-28"}},
        "old": {**entry, "toolrelay": {"protocolVersion": "2025-03-26"}},
        "plain": entry,
    }}), encoding="utf-8")

    async def versions(flag: str | None) -> dict[str, str | None]:
        pool = ServerPool(load_config(config, environ={}), Recorder().events, protocol_version=flag)
        try:
            await pool.open()
            return {name: c.protocol_version for name, c in pool.connections.items()}
        finally:
            await pool.close()

    assert run(versions(None)) == {"modern": "2026-07-28", "old": "2025-03-26", "plain": "2026-07-28"}
    # --protocol-version, when given, wins over every entry's pin
    assert run(versions("2025-06-18")) == dict.fromkeys(("modern", "old", "plain"), "2025-06-18")
    config.write_text(json.dumps({"mcpServers": {"x": {**entry, "toolrelay": {"protocolVersion": "2027"}}}}),
                      encoding="utf-8")
    revisions = r"auto, 2024-11-05, .*, 2026-07-28,"  # auto first, then in date order
    with pytest.raises(ConfigError, match=rf"toolrelay\.protocolVersion: must be one of {revisions}"):
        load_config(config, environ={})


def test_probing_the_handshake_id_is_used_up_even_unsent(files_url: str, tmp_path: Path) -> None:
    async def sent_ids(config: ServerConfig) -> list[tuple[str | None, Any]]:
        recorder = Recorder()
        async with open_connection(config, tmp_path, recorder, protocol_version="auto") as connection:
            await connection.list_tools()
        return [(e.method, e.mcp_id) for e in recorder.seen
                if isinstance(e, McpMessage) and e.role == "mcp_request"]

    # a modern server answering the probe at once: initialize is never sent, its id 2 is skipped
    assert run(sent_ids(http(files_url))) == [("server/discover", 1), ("tools/list", 3)]
    # a 2025 server: the handshake has it
    legacy = run(sent_ids(stdio_config("minimal_echo_server.py")))
    assert legacy == [("server/discover", 1), ("initialize", 2), ("tools/list", 3)]
