"""An MCP server built with the official SDK (mcp 2.3.0, MCPServer), stdio or HTTP.

Run:  python sdk_server.py stdio
      python sdk_server.py http PORT        (Streamable HTTP on 127.0.0.1:PORT/mcp, SSE replies)
      python sdk_server.py http-json PORT   (the same, answering with JSON bodies)

Tools: echo(text), add(a, b), slow(seconds), chatty(text) (logs and announces a tool
list change in the stream before answering), ping_client() (pings toolrelay and reports
the answer), ask_roots() (asks toolrelay for roots, which it does not offer).
"""

from __future__ import annotations

import asyncio
import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("sdk-test", instructions="SDK test server.", log_level="WARNING")


@server.tool(description="Return the given text unchanged.", structured_output=False)
def echo(text: str) -> str:
    return text


@server.tool(description="Add two integers.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Sleep, then answer.", structured_output=False)
async def slow(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "done"


@server.tool(description="Send a log message and a tools/list_changed, then answer.", structured_output=False)
async def chatty(text: str, ctx: Context) -> str:
    await ctx.info(f"about to echo {text}")
    await ctx.session.send_tool_list_changed()
    return text


@server.tool(description="Ping the client and report.", structured_output=False)
async def ping_client(ctx: Context) -> str:
    await ctx.session.send_ping()
    return "client answered ping"


@server.tool(description="Ask the client for its roots.", structured_output=False)
async def ask_roots(ctx: Context) -> str:
    try:
        await ctx.session.list_roots()
    except Exception as exc:  # toolrelay declares no roots: the error is the answer
        return f"roots refused: {exc}"
    return "roots answered"


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "stdio":
        server.run("stdio")
    else:
        port = int(sys.argv[2])
        server.run("streamable-http", host="127.0.0.1", port=port, json_response=mode == "http-json")
