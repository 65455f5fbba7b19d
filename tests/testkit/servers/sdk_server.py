"""An MCP server built the usual way with the official SDK (mcp 2.x ``MCPServer``), stdio or HTTP.

Run:  python sdk_server.py stdio [--echo-only]
      python sdk_server.py http PORT        (Streamable HTTP on 127.0.0.1:PORT/mcp, SSE replies)
      python sdk_server.py http-json PORT   (the same, answering with JSON bodies)
      python sdk_server.py http-resumable PORT  (SSE replies kept in an event store, retry 200 ms)

Tools: echo(text), add(a, b), slow(seconds), chatty(text) (logs and announces a tool
list change in the stream before answering), ping_client() (pings the client and reports
the answer), ask_roots() (asks the client for roots, which toolrelay does not offer).
``http-resumable`` adds reconnect() (closes its own stream, then answers: the client must
resume it, SEP-1699). (The SDK's GET stream has no priming event, so a client cannot
resume that one.)

``--echo-only`` lists ``echo`` alone, answered as a single text block (structured output
off, like a typical echo tool): the client and loop benches' realistic peer. The SDK's
server costs about 2 ms of CPU per ``tools/call``, so it dominates every client's round
trip; ``minimal_echo_server.py`` is the one that shows a client's own cost.
"""

from __future__ import annotations

import asyncio
import itertools
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore

ECHO_ONLY = "--echo-only" in sys.argv[2:]
RESUMABLE = sys.argv[1:2] == ["http-resumable"]
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


async def reconnect(ctx: Context) -> str:
    await ctx.close_sse_stream()
    await asyncio.sleep(0.2)
    return "answered after the stream was closed"


class MemoryEventStore(EventStore):
    """Every event, in order; a replay sends those of the same stream after the given id."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, object]] = []
        self.ids = itertools.count(1)

    async def store_event(self, stream_id: str, message: object) -> str:
        event_id = str(next(self.ids))
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id: str, send_callback: EventCallback) -> str | None:
        at = next((i for i, event in enumerate(self.events) if event[0] == last_event_id), None)
        if at is None:
            return None
        stream = self.events[at][1]
        for event_id, stream_id, message in self.events[at + 1:]:
            if stream_id == stream and message is not None:
                await send_callback(EventMessage(message, event_id))  # type: ignore[arg-type]
        return stream


if not ECHO_ONLY:
    server.tool(description="Add two integers.")(add)
    server.tool(description="Sleep, then answer.", structured_output=False)(slow)
    server.tool(description="Send a log message and a tools/list_changed, then answer.",
                structured_output=False)(chatty)
    server.tool(description="Ping the client and report.", structured_output=False)(ping_client)
    server.tool(description="Ask the client for its roots.", structured_output=False)(ask_roots)
if RESUMABLE:
    server.tool(description="Close this call's stream, then answer.", structured_output=False)(reconnect)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "stdio":
        server.run("stdio")
    else:
        port = int(sys.argv[2])
        if RESUMABLE:
            server.run("streamable-http", host="127.0.0.1", port=port, event_store=MemoryEventStore(),
                       retry_interval=200)
        else:
            server.run("streamable-http", host="127.0.0.1", port=port, json_response=mode == "http-json")
