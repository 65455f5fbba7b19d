"""``toolrelay files ROOT --http 0`` as a real subprocess, driven by the official MCP SDK
client over Streamable HTTP: the file service behind our HTTP transport, end to end."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from http_helpers import BASE_HEADERS, init_message
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from testkit.mcp_http import files_http_process


@pytest.fixture
def files_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "root"
    root.mkdir()
    (root / "notes.txt").write_text("first line\nsecond line\nthird line\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("outside the root\n", encoding="utf-8")
    with files_http_process(root) as url:
        yield url, root


async def _read(url: str, paths: list[str]) -> tuple[list[str], list[tuple[str, bool]]]:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = [tool.name for tool in (await session.list_tools()).tools]
        outcomes = []
        for path in paths:
            result = await session.call_tool("read_text_file", {"path": path, "head": 2})
            outcomes.append((result.content[0].text, result.is_error))  # type: ignore[union-attr]
        return names, outcomes


def test_sdk_client_reads_a_file_over_http(files_server: tuple[str, Path]) -> None:
    url, root = files_server
    names, outcomes = asyncio.run(_read(url, [str(root / "notes.txt"), str(root.parent / "secret.txt")]))
    assert "read_text_file" in names
    assert outcomes[0] == ("first line\nsecond line\n", False)
    text, is_error = outcomes[1]
    assert is_error and "outside the root" not in text  # access is refused, as a tool error


def test_files_http_refuses_a_foreign_host(files_server: tuple[str, Path]) -> None:
    reply = httpx2.post(files_server[0], json=init_message(), timeout=10,
                        headers={**BASE_HEADERS, "host": "evil.example.com"})
    assert reply.status_code == 403
