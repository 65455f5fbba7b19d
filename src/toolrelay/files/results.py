"""The ``CallToolResult`` shapes the file service answers with.

Success is the reference server's shape: one text block plus ``structuredContent:
{"content": text}`` (matching each tool's ``outputSchema``). A result cut at the byte cap
adds a second text block saying what was cut, and ``"truncated": true``. Failures are
one text block with ``isError: true`` and no structured content.
"""

from __future__ import annotations

from ..protocol import mcp as m
from ..protocol.jsonrpc import JSONObject

__all__ = ["error_result", "text_result", "truncated_result"]


def text_result(text: str) -> JSONObject:
    return m.text_result(text, structured={"content": text})


def truncated_result(text: str, note: str) -> JSONObject:
    return {
        "content": [{"type": "text", "text": text}, {"type": "text", "text": note}],
        "structuredContent": {"content": text, "truncated": True},
    }


def error_result(message: str) -> JSONObject:
    return m.text_result(message, is_error=True)
