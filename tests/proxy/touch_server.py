"""The conformance features server, with a tool that says a resource changed: ``touch(uri)``.

It sends ``notifications/resources/updated`` of ``uri`` whether or not a client subscribed
to it (a server may; the proxy sends each update only to the hosts that subscribed), and
answers ``touched N``, N the URIs subscribed to it now (what the proxy left subscribed
upstream). Run as a program, it serves itself over stdio.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from testkit.servers.conformance_features import ConformanceFeatures
from toolrelay.protocol import mcp as m
from toolrelay.server.app import CallContext

TOUCH = {"name": "touch", "description": "Say that a resource changed",
         "inputSchema": {"type": "object", "properties": {"uri": {"type": "string"}}, "required": ["uri"]}}


class TouchServer(ConformanceFeatures):
    def tools(self) -> list[dict[str, Any]]:
        return [*super().tools(), TOUCH]

    def call(self, name: str, arguments: dict[str, Any], context: CallContext) -> Any:
        if name != "touch":
            return super().call(name, arguments, context)
        if context.peer is not None:  # told before the answer
            context.peer.notify(m.RESOURCE_UPDATED, {"uri": str(arguments["uri"])})
        return {"content": [{"type": "text", "text": f"touched {len(self.subscribed)}"}]}


if __name__ == "__main__":
    from toolrelay.server.stdio import serve_stdio

    asyncio.run(serve_stdio(TouchServer()))
