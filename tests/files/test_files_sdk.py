"""The official MCP SDK client (mcp 2.3.0) drives ``toolrelay files`` over stdio.

Covers what a host sees: declarations, results the SDK validates against each
``outputSchema``, tool errors, the unknown-tool protocol error, and the roots flow via
``list_roots_callback``: narrowing, no-ROOT mode, and ``roots/list_changed``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from toolrelay.files.roots import DISJOINT_CLIENT_ROOTS, EMPTY_CLIENT_ROOTS, NO_ROOTS

from .helpers import DENIED

RootsCallback = Callable[[ClientRequestContext], Awaitable[types.ListRootsResult]]


def roots_callback(holder: list[Path]) -> RootsCallback:
    """Answers roots/list with the folders in ``holder`` at the time of asking."""
    async def list_roots(context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=folder.as_uri()) for folder in holder])  # type: ignore[arg-type]
    return list_roots


@asynccontextmanager
async def session(*roots: Path, callback: RootsCallback | None = None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "toolrelay", "files", *map(str, roots)], env=dict(os.environ)
    )
    with tempfile.TemporaryFile("w+") as errlog:  # the server's stderr (its logs)
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, list_roots_callback=callback) as client,
        ):
            await client.initialize()
            await client.list_tools()  # the SDK validates structured content against these
            yield client


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def call_text(client: ClientSession, name: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result
    return text_of(result)


async def call_error(client: ClientSession, name: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(name, arguments)
    assert result.is_error, result
    return text_of(result)


async def allowed(client: ClientSession) -> list[Path]:
    text = await call_text(client, "list_allowed_directories", {})
    head, *folders = text.split("\n")
    assert head == "Allowed directories:"
    return [Path(folder) for folder in folders]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for folder in ("a", "b", "a/inner"):
        (tmp_path / folder).mkdir()
    (tmp_path / "a" / "x.txt").write_text("in a\nsecond\n")
    (tmp_path / "a" / "inner" / "z.txt").write_text("in inner\n")
    (tmp_path / "b" / "y.txt").write_text("in b\n")
    return tmp_path


def test_sdk_client_lists_and_calls(tree: Path) -> None:
    async def main() -> None:
        async with session(tree) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == {"read_text_file", "read_multiple_files", "list_directory", "get_file_info",
                                  "search_files", "list_allowed_directories"}
            read = tools["read_text_file"]
            assert read.annotations is not None and read.annotations.read_only_hint is True
            assert read.annotations.open_world_hint is False
            assert set(read.input_schema["properties"]) == {"path", "head", "tail"}
            result = await client.call_tool("read_text_file", {"path": "a/x.txt", "tail": 1})
            assert text_of(result) == "second\n" and result.structured_content == {"content": "second\n"}
            assert await call_text(client, "read_text_file", {"path": "a/x.txt", "head": 1}) == "in a\n"
            assert await call_text(client, "list_directory", {"path": "a"}) == "[DIR] inner\n[FILE] x.txt"
            assert await call_error(client, "read_text_file", {"path": "../etc/passwd"}) == DENIED
            assert await call_error(client, "read_text_file", {"path": "a/x.txt", "head": -1}) == (
                'Invalid arguments: "head" must be a non-negative integer, got -1')
            with pytest.raises(MCPError) as raised:
                await client.call_tool("write_file", {"path": "a/x.txt", "content": "overwritten"})
            error = raised.value.error
            assert (error.code, error.message) == (-32602, "Unknown tool: write_file")
    asyncio.run(main())
    assert (tree / "a" / "x.txt").read_text() == "in a\nsecond\n"  # read-only by design


def test_client_roots_narrow_the_command_line_roots(tree: Path) -> None:
    async def main() -> None:
        async with session(tree, callback=roots_callback([tree / "a"])) as client:
            assert await allowed(client) == [tree / "a"]
            assert await call_text(client, "read_text_file", {"path": "x.txt"}) == "in a\nsecond\n"
            assert await call_error(client, "read_text_file", {"path": str(tree / "b" / "y.txt")}) == DENIED
    asyncio.run(main())


def test_client_roots_cannot_widen_access(tree: Path) -> None:
    async def main() -> None:
        # The server may read a/ only; the client names the whole tree and b/.
        async with session(tree / "a", callback=roots_callback([tree, tree / "b"])) as client:
            assert await allowed(client) == [tree / "a"]
            assert await call_error(client, "read_text_file", {"path": str(tree / "b" / "y.txt")}) == DENIED
        async with session(tree / "a", callback=roots_callback([tree / "b"])) as client:
            assert await call_error(client, "read_text_file", {"path": "x.txt"}) == DISJOINT_CLIENT_ROOTS
    asyncio.run(main())


def test_without_root_the_server_serves_the_client_roots(tree: Path) -> None:
    async def main() -> None:
        async with session() as client:  # no ROOT, no roots capability: nothing to serve
            for name, arguments in (("list_allowed_directories", {}), ("read_text_file", {"path": "x.txt"})):
                assert await call_error(client, name, arguments) == NO_ROOTS
        async with session(callback=roots_callback([tree / "b"])) as client:
            assert await call_text(client, "read_text_file", {"path": "y.txt"}) == "in b\n"
            assert await call_error(client, "read_text_file", {"path": str(tree / "a" / "x.txt")}) == DENIED
    asyncio.run(main())


def test_roots_list_changed_is_followed(tree: Path) -> None:
    async def main() -> None:
        holder: list[Path] = []
        async with session(callback=roots_callback(holder)) as client:
            assert await call_error(client, "list_allowed_directories", {}) == EMPTY_CLIENT_ROOTS
            holder.append(tree / "a" / "inner")
            await client.send_notification(types.RootsListChangedNotification())
            assert await call_text(client, "read_text_file", {"path": "z.txt"}) == "in inner\n"
            assert await call_error(client, "read_text_file", {"path": str(tree / "a" / "x.txt")}) == DENIED
            holder[:] = [tree / "b"]
            await client.send_notification(types.RootsListChangedNotification())
            assert await allowed(client) == [tree / "b"]
    asyncio.run(main())
