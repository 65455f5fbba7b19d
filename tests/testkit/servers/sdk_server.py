"""An MCP server built the usual way with the official SDK (mcp 2.x ``MCPServer``), stdio or HTTP.

Run:  python sdk_server.py stdio [--echo-only]
      python sdk_server.py http PORT        (Streamable HTTP on 127.0.0.1:PORT/mcp, SSE replies)
      python sdk_server.py http-json PORT   (the same, answering with JSON bodies)

Tools: echo(text), add(a, b), slow(seconds), chatty(text) (logs and announces a tool
list change in the stream before answering), ping_client() (pings the client and reports
the answer), ask_roots() (asks the client for roots, which toolrelay does not offer).

``--echo-only`` lists ``echo`` alone, answered as a single text block (structured output
off, like a typical echo tool): the client and loop benches' realistic peer. The SDK's
server costs about 2 ms of CPU per ``tools/call``, so it dominates every client's round
trip; ``minimal_echo_server.py`` is the one that shows a client's own cost.
"""

from __future__ import annotations

import asyncio
import sys

from mcp.server.mcpserver import Context, MCPServer

ECHO_ONLY = "--echo-only" in sys.argv[2:]
server = MCPServer("sdk-test", instructions=None if ECHO_ONLY else "SDK test server.", log_level="WARNING")


@server.tool(description="Return the given text unchanged.", structured_output=False)
def echo(text: str) -> str:
    return text


def add(a: int, b: int) -> int:
    return a + b


async def slow(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "done"


async def chatty(text: str, ctx: Context) -> str:
    await ctx.info(f"about to echo {text}")
    await ctx.session.send_tool_list_changed()
    return text


async def ping_client(ctx: Context) -> str:
    await ctx.session.send_ping()
    return "client answered ping"


async def ask_roots(ctx: Context) -> str:
    try:
        await ctx.session.list_roots()
    except Exception as exc:  # toolrelay declares no roots: the error is the answer
        return f"roots refused: {exc}"
    return "roots answered"


if not ECHO_ONLY:
    server.tool(description="Add two integers.")(add)
    server.tool(description="Sleep, then answer.", structured_output=False)(slow)
    server.tool(description="Send a log message and a tools/list_changed, then answer.",
                structured_output=False)(chatty)
    server.tool(description="Ping the client and report.", structured_output=False)(ping_client)
    server.tool(description="Ask the client for its roots.", structured_output=False)(ask_roots)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "stdio":
        server.run("stdio")
    else:
        port = int(sys.argv[2])
        server.run("streamable-http", host="127.0.0.1", port=port, json_response=mode == "http-json")
