"""The transport registry: every line builds a transport that keeps the contract; config
files and ServerConfig are checked against it."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from toolrelay.client.config import ServerConfig, read_config
from toolrelay.client.transport_registry import TRANSPORTS, TransportKind
from toolrelay.errors import ConfigError
from toolrelay.inprocess_servers import in_process_server
from toolrelay.server.app import CallContext


class _Nothing:
    name, version, instructions = "nothing", "1", None

    def tools(self) -> list[dict[str, object]]:
        return []

    def call(self, name: str, arguments: dict[str, object], context: CallContext) -> dict[str, object]:
        return {}


def _sample(kind: TransportKind) -> ServerConfig:
    samples = {
        "stdio": ServerConfig(name="s", transport="stdio", command="true"),
        "http": ServerConfig(name="h", transport="http", url="http://127.0.0.1:9/mcp"),
        "inprocess": in_process_server(_Nothing(), name="i"),
    }
    return samples[kind.name]


@pytest.mark.parametrize("kind", TRANSPORTS, ids=lambda kind: kind.name)
def test_every_registered_transport_keeps_the_contract(kind: TransportKind, tmp_path: Path) -> None:
    transport = kind.create(_sample(kind), log_dir=tmp_path)
    for member in ("open", "send", "initialized", "close", "pid", "log"):
        assert hasattr(transport, member), f"{kind.name} lacks {member}"
    for method in ("open", "close"):
        assert inspect.iscoroutinefunction(getattr(transport, method)), f"{kind.name}.{method} is not async"
    assert transport.pid is None  # nothing runs before open


def test_an_unknown_transport_names_the_known_ones() -> None:
    with pytest.raises(ConfigError) as caught:
        ServerConfig(name="w", transport="websocket", url="ws://127.0.0.1/mcp")
    assert str(caught.value) == ("server 'w': transport type 'websocket' is not supported "
                                 "(toolrelay speaks stdio, http and inprocess)")


def test_every_config_type_of_the_registry_is_read(tmp_path: Path) -> None:
    entries = {}
    for kind in TRANSPORTS:
        for config_type in kind.config_types:
            fields = {"command": "server"} if kind.inferred_from == "command" else {"url": "http://h/mcp"}
            entries[f"{kind.name}-{config_type}"] = {"type": config_type, **fields}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": entries}))
    loaded = read_config(path, environ={})
    assert loaded.skipped == []
    assert {s.name: s.transport for s in loaded.servers} == {
        name: name.split("-", 1)[0] for name in entries}
    assert len(entries) >= 5  # stdio, and http under its four spellings


def test_in_process_servers_cannot_come_from_a_config_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"a": {"type": "inprocess", "command": "x"},
                                               "b": {"command": "server"}}}))
    loaded = read_config(path, environ={})
    assert loaded.skipped == [f"{path}: server 'a' skipped: transport type 'inprocess' is not supported "
                              "(toolrelay speaks stdio and http)"]
