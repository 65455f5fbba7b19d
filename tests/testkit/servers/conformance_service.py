"""The MCP conformance suite's tool fixtures that a tools-only server can serve.

The suite's server scenarios call tools by name (``test_simple_text``,
``test_reconnection``, ...) and check what comes back. This ``ToolService`` has them,
so that those scenarios test toolrelay's Streamable HTTP server (content blocks carried
as they are, errors, schemas, resumable streams) rather than fail for want of a tool.
Fixtures a tools-only server cannot serve (logging, progress, sampling, elicitation,
prompts, resources, completion) are absent: ``tests/server/test_http_conformance.py``
lists those scenarios as expected failures, with the reason.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

from toolrelay.server.app import CallContext, UnknownTool

PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
"""A 1x1 red PNG."""
WAV = base64.b64encode(
    b"RIFF" + (38).to_bytes(4, "little") + b"WAVEfmt " + (16).to_bytes(4, "little")
    + (1).to_bytes(2, "little") + (1).to_bytes(2, "little") + (8000).to_bytes(4, "little")
    + (16000).to_bytes(4, "little") + (2).to_bytes(2, "little") + (16).to_bytes(2, "little")
    + b"data" + (2).to_bytes(4, "little") + b"\x00\x00"
).decode()
"""A silent WAV of one sample."""

_NO_ARGUMENTS = {"type": "object", "properties": {}}
_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"},
                                                           "city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _image() -> dict[str, Any]:
    return {"type": "image", "data": PNG, "mimeType": "image/png"}


def _resource(uri: str, mime_type: str, text: str) -> dict[str, Any]:
    return {"type": "resource", "resource": {"uri": uri, "mimeType": mime_type, "text": text}}


_CONTENT: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "test_simple_text": ("Returns simple text content",
                         [_text("This is a simple text response for testing.")]),
    "test_image_content": ("Returns image content", [_image()]),
    "test_audio_content": ("Returns audio content",
                           [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]),
    "test_embedded_resource": ("Returns an embedded resource", [_resource(
        "test://embedded-resource", "text/plain", "This is an embedded resource content.")]),
    "test_multiple_content_types": ("Returns text, image and resource content", [
        _text("Multiple content types test:"), _image(),
        _resource("test://mixed-content-resource", "application/json",
                  json.dumps({"test": "data", "value": 123})),
    ]),
}


class ConformanceService:
    """The fixtures: content of each kind, a tool error, a 2020-12 schema, and
    ``test_reconnection``, which answers after ``reconnection_seconds`` (longer than the
    server's hold, so that the server closes the stream first and the client resumes it)."""

    name = "conformance-fixtures"
    version = "0.1.0"
    instructions: str | None = None

    def __init__(self, reconnection_seconds: float = 0.3) -> None:
        self.reconnection_seconds = reconnection_seconds

    def tools(self) -> list[dict[str, Any]]:
        tools = [{"name": name, "description": description, "inputSchema": _NO_ARGUMENTS}
                 for name, (description, _) in _CONTENT.items()]
        return [
            *tools,
            {"name": "test_error_handling", "description": "Always fails", "inputSchema": _NO_ARGUMENTS},
            {"name": "json_schema_2020_12_tool", "description": "Tool with JSON Schema 2020-12 features",
             "inputSchema": _SCHEMA_2020_12},
            {"name": "test_reconnection", "description": "Answers after the server closed its stream",
             "inputSchema": _NO_ARGUMENTS},
        ]

    def call(self, name: str, arguments: dict[str, Any], context: CallContext) -> Any:
        if name in _CONTENT:
            return {"content": _CONTENT[name][1]}
        if name == "test_error_handling":
            failure = _text("This tool intentionally returns an error for testing")
            return {"content": [failure], "isError": True}
        if name == "json_schema_2020_12_tool":
            return {"content": [_text(f"called with {json.dumps(arguments)}")]}
        if name == "test_reconnection":
            return self._reconnection()
        raise UnknownTool(name)

    async def _reconnection(self) -> dict[str, Any]:
        await asyncio.sleep(self.reconnection_seconds)
        return {"content": [_text("Reconnection test completed successfully.")]}
