"""The official SDK's MCPServer, announcing changes through ``subscriptions/listen``
(MCP 2026-07-28: its only way to tell a client), stdio or Streamable HTTP.

Run:  python sdk_listen_server.py stdio
      python sdk_listen_server.py http PORT

Tools: grow() adds the tool ``extra`` and announces that the tool list changed (during
the call); touch() announces that the resource ``note://daily`` was updated; crash()
ends the process (a restart must listen again). Resource: ``note://daily``.
"""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("sdk-listen", log_level="WARNING")


def extra() -> str:
    return "the extra tool ran"


@server.tool(description="Add the tool extra, and say the tool list changed.", structured_output=False)
async def grow(ctx: Context) -> str:
    if "extra" not in {tool.name for tool in await server.list_tools()}:
        server.add_tool(extra, description="A tool that grow added.", structured_output=False)
    await ctx.notify_tools_changed()
    return "grown"


@server.tool(description="Say that note://daily was updated.", structured_output=False)
async def touch(ctx: Context) -> str:
    await ctx.notify_resource_updated("note://daily")
    return "touched"


@server.tool(description="End this server's process at once.", structured_output=False)
def crash() -> str:
    os._exit(3)


@server.resource("note://daily", name="daily", mime_type="text/plain")
def daily() -> str:
    return "today's note"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
