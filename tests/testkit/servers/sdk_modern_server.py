"""The official SDK's MCPServer (mcp 2.x) over Streamable HTTP as a 2026-07-28-only server:
a request without ``MCP-Protocol-Version`` (an ``initialize``) is refused with HTTP 400
-32022, as a server that dropped the handshake era answers it.

Run:  python sdk_modern_server.py http PORT [--discover-delay S] [--refuse-first-probe]
                                               [--empty-initialize]

``--discover-delay S`` holds every ``server/discover`` S seconds (a remote server's round
trip); ``--refuse-first-probe`` answers the first one 400 -32022 listing the ``supported``
revisions, as a server that wants the client to choose again; ``--empty-initialize``
answers ``initialize`` with an empty result instead of refusing it (as the conformance
suite's mock servers answer every method they do not know).

Tools: echo(text); regional(region, text), whose ``region`` is marked ``x-mcp-header:
Region`` (SEP-2243: the SDK refuses a call without ``Mcp-Param-Region``); warn(text), which
logs a warning during the call, then answers.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Annotated, Any

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

MODERN = "2026-07-28"
server = MCPServer("sdk-modern", log_level="WARNING")


@server.tool(description="Return the given text unchanged.", structured_output=False)
def echo(text: str) -> str:
    return text


@server.tool(description="Answer from the given region.", structured_output=False)
def regional(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})], text: str) -> str:
    return f"{region}: {text}"


@server.tool(description="Log a warning, then answer.", structured_output=False)
async def warn(text: str, ctx: Context) -> str:
    await ctx.warning(f"careful with {text}")
    return f"warned about {text}"


Scope = dict[str, Any]


class ModernOnly:
    """The ASGI front: refuses handshake-era requests, holds or refuses probes."""

    def __init__(self, app: Any, discover_delay: float, refuse_first_probe: bool,
                 empty_initialize: bool) -> None:
        self.app, self.delay, self.refuse_probe = app, discover_delay, refuse_first_probe
        self.empty_initialize = empty_initialize

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body or b"{}")
        headers = dict(scope["headers"])
        if request.get("method") == "server/discover":
            await asyncio.sleep(self.delay)
            if self.refuse_probe:
                self.refuse_probe = False
                await _refuse(send, request, "Unsupported protocol version")
                return
        elif request.get("method") == "initialize" and self.empty_initialize:
            await _answer(send, 200, {"jsonrpc": "2.0", "id": request.get("id"), "result": {}})
            return
        elif b"mcp-protocol-version" not in headers:
            await _refuse(send, request, "Missing MCP-Protocol-Version header")
            return
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        await self.app(scope, replay, send)


async def _refuse(send: Any, request: dict[str, Any], message: str) -> None:
    error = {"code": -32022, "message": message, "data": {"supported": [MODERN], "requested": None}}
    await _answer(send, 400, {"jsonrpc": "2.0", "id": request.get("id"), "error": error})


async def _answer(send: Any, status: int, answer: dict[str, Any]) -> None:
    headers = [(b"content-type", b"application/json")]  # no length: chunked, as Node's servers send it
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(answer).encode()})


def main() -> None:
    port = int(sys.argv[2])
    delay = float(sys.argv[sys.argv.index("--discover-delay") + 1]) if "--discover-delay" in sys.argv else 0.0
    app = ModernOnly(server.streamable_http_app(), delay, "--refuse-first-probe" in sys.argv,
                     "--empty-initialize" in sys.argv)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
