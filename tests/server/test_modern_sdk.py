"""The official MCP Python SDK client (``mcp.client.Client``, mcp 2.3.0) drives
``toolrelay files`` over stdio and Streamable HTTP in each of its modes: pinned to
2026-07-28, ``auto`` (which probes ``server/discover`` and must choose 2026-07-28), and
``legacy`` (the handshake, still working); it lists and calls the file tools. A client
with roots gets them asked for through ``input_required`` and retries the call."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as t
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from testkit.mcp_http import files_http_process

MODES = {"2026-07-28": "2026-07-28", "auto": "2026-07-28", "legacy": "2025-11-25"}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sdk-root")
    (folder / "a.txt").write_text("alpha\n", encoding="utf-8")
    (folder / "inner").mkdir()
    (folder / "inner" / "b.txt").write_text("beta\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def http_url(root: Path) -> Iterator[str]:
    with files_http_process(root) as url:
        yield url


def stdio(root: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "toolrelay", "files", str(root)])


async def _session(server: Any, mode: str, **options: Any) -> dict[str, Any]:
    async with Client(server, mode=mode, **options) as client:
        tools = await client.list_tools()
        read = await client.call_tool("read_text_file", {"path": "a.txt"})
        inner = await client.call_tool("read_text_file", {"path": "inner/b.txt"})
        return {
            "version": client.session.protocol_version,
            "tools": {tool.name for tool in tools.tools},
            "read": _texts(read),
            "inner": (inner.is_error, _texts(inner)),
        }


def _texts(result: t.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, t.TextContent)]


def check(found: dict[str, Any], mode: str) -> None:
    assert found["version"] == MODES[mode]
    assert {"read_text_file", "list_directory", "search_files"} <= found["tools"]
    assert found["read"] == ["alpha\n"]
    assert found["inner"] == (False, ["beta\n"])


@pytest.mark.parametrize("mode", list(MODES))
def test_sdk_client_over_stdio(root: Path, mode: str) -> None:
    check(anyio.run(_session, stdio(root), mode), mode)


@pytest.mark.parametrize("mode", list(MODES))
def test_sdk_client_over_http(http_url: str, mode: str) -> None:
    check(anyio.run(_session, http_url, mode), mode)


async def _narrowed(server: Any, root: Path, asked: list[str]) -> tuple[Any, ...]:
    async def list_roots(context: Any) -> t.ListRootsResult:
        asked.append("roots/list")
        return t.ListRootsResult(roots=[t.Root(uri=(root / "inner").as_uri())])

    async with Client(server, mode="2026-07-28", list_roots_callback=list_roots) as client:
        inside = await client.call_tool("read_text_file", {"path": str(root / "inner" / "b.txt")})
        outside = await client.call_tool("read_text_file", {"path": str(root / "a.txt")})
        return client.session.protocol_version, inside.is_error, inside.content[0], outside.is_error


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_modern_client_roots_narrow_access_through_input_required(
    root: Path, http_url: str, transport: str
) -> None:
    asked: list[str] = []
    server = stdio(root) if transport == "stdio" else http_url
    version, inside_failed, inside, outside_failed = anyio.run(_narrowed, server, root, asked)
    assert version == "2026-07-28"
    assert (inside_failed, inside.text) == (False, "beta\n")
    assert outside_failed  # a.txt lies outside the client's root
    assert asked == ["roots/list", "roots/list"]  # each call answered input_required, then retried
