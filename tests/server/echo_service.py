"""A tiny ToolService for the server tests: echo, a slow tool, and a roots reporter.

Used in-process by the raw HTTP tests and by the subprocess scripts
(``echo_http_server.py``, ``echo_stdio_server.py``) that the SDK-driven tests start.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from toolrelay.protocol.mcp import text_result
from toolrelay.server.app import CallContext, UnknownTool

_TEXT_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}


class EchoService:
    """echo(text) → text; slow(seconds) sleeps; roots() reports the client's roots."""

    name = "echo-test"
    version = "1.2.3"
    instructions: str | None = "A test service."

    def tools(self) -> list[dict[str, Any]]:
        return [
            {"name": "echo", "description": "Return the text unchanged.", "inputSchema": _TEXT_SCHEMA},
            {
                "name": "slow",
                "description": "Sleep for some seconds, then say so.",
                "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
            },
            {
                "name": "roots",
                "description": "Report the client's roots as JSON.",
                "inputSchema": {"type": "object", "properties": {}},
            },
        ]

    def call(self, name: str, arguments: dict[str, Any], context: CallContext) -> Any:
        if name == "echo":
            text = arguments.get("text")
            if not isinstance(text, str):
                return text_result('echo needs "text" (a string)', is_error=True)
            return text_result(text)
        if name == "slow":
            return self._slow(float(arguments.get("seconds", 5)))
        if name == "roots":
            report = {"roots": context.client_roots, "error": context.roots_error}
            return text_result(json.dumps(report), structured=report)
        raise UnknownTool(name)

    async def _slow(self, seconds: float) -> dict[str, Any]:
        await asyncio.sleep(seconds)
        return text_result(f"slept {seconds:g} s")
