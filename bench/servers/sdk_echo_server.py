"""An MCP stdio server built the usual way with the official Python SDK (mcp 2.x ``MCPServer``).

One tool, ``echo(text) -> text``, answered as a single text block (structured output
off, like a typical echo tool). It is the realistic peer of the client bench: the SDK's
server costs about 2 ms of CPU per ``tools/call``, so it dominates every client's round
trip; the stdlib ``minimal_echo_server.py`` is the one that shows a client's own cost.

    python sdk_echo_server.py            (stdio)
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-sdk-echo", log_level="WARNING")


@server.tool(description="Return the given text unchanged.", structured_output=False)
def echo(text: str) -> str:
    return text


if __name__ == "__main__":
    server.run("stdio")
