"""A Python MCP file server built the usual way with the official SDK (mcp 2.x MCPServer).

Only ``read_text_file(path, head, tail)``, with the reference server's argument names and
result shape (a text block plus ``structured_content {"content": ...}``). It reads the
whole file and splits it into lines, whatever head or tail asks for: the simple way most
servers are written, which toolrelay's streaming reader is compared against.

    python naive_fs_server.py ROOT      (stdio)
"""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent

ROOT = os.path.realpath(sys.argv[1]) if len(sys.argv) > 1 else ""
server = MCPServer("bench-naive-files", log_level="WARNING")


def _inside(path: str) -> str:
    real = os.path.realpath(os.path.join(ROOT, os.path.expanduser(path)))
    if os.path.commonpath([real, ROOT]) != ROOT:
        raise ToolError("Access denied - path outside allowed directories")
    return real


@server.tool(description="Read a text file; head or tail returns only the first or last N lines.")
def read_text_file(path: str, head: int | None = None, tail: int | None = None) -> CallToolResult:
    if head is not None and tail is not None:
        raise ToolError("Cannot specify both head and tail parameters simultaneously")
    with open(_inside(path), encoding="utf-8") as handle:
        lines = handle.read().splitlines(keepends=True)  # the whole file, every time
    if head is not None:
        lines = lines[:head]
    elif tail is not None:
        lines = lines[-tail:] if tail else []
    text = "".join(lines)
    return CallToolResult(content=[TextContent(text=text)], structured_content={"content": text})


if __name__ == "__main__":
    if not ROOT:
        sys.exit("usage: naive_fs_server.py ROOT")
    server.run("stdio")
