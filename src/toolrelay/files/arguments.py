"""Checking a tool call's arguments by hand (no per-call schema validator: this is the hot path).

A failed check is a tool execution error (``isError: true``), as MCP 2025-11-25
recommends, so a model can read which parameter was wrong and correct itself. Every
message names the parameter and shows the value received. The checks match the
declared ``inputSchema`` exactly (a test holds them to it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from ..protocol.jsonrpc import JSONObject
from .failures import ToolFailure

__all__ = ["check_names", "count_argument", "describe", "string_argument", "string_list_argument"]

_MISSING: Final = object()


def describe(value: object) -> str:
    """A received value as JSON text, shortened."""
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:39] + "…"


def invalid(message: str) -> ToolFailure:
    return ToolFailure(f"Invalid arguments: {message}")


def check_names(arguments: JSONObject, tool: str, allowed: Sequence[str]) -> None:
    """Refuse arguments the tool does not take (a misspelt "heads" would be silently ignored)."""
    for key in arguments:
        if key not in allowed:
            takes = f"takes {', '.join(allowed)}" if allowed else "takes no arguments"
            raise invalid(f'unknown argument "{key}" ({tool} {takes})')


def string_argument(arguments: JSONObject, key: str) -> str:
    """A required string without lone surrogates (they cannot name a file or be echoed)."""
    value = arguments.get(key, _MISSING)
    if value is _MISSING:
        raise invalid(f'"{key}" is required')
    if not isinstance(value, str):
        raise invalid(f'"{key}" must be a string, got {describe(value)}')
    _require_unicode(key, value)
    return value


def count_argument(arguments: JSONObject, key: str) -> int | None:
    """An optional non-negative integer (20.0 counts as 20; 2.5, -1, null, "5" do not)."""
    if key not in arguments:
        return None
    value = arguments[key]
    if type(value) is int and value >= 0:
        return value
    if type(value) is float and value >= 0 and value.is_integer():
        return int(value)
    raise invalid(f'"{key}" must be a non-negative integer, got {describe(value)}')


def string_list_argument(arguments: JSONObject, key: str, *, required: bool, min_items: int = 0) -> list[str]:
    """An array of strings (optional ones default to [])."""
    value = arguments.get(key, _MISSING)
    if value is _MISSING:
        if required:
            raise invalid(f'"{key}" is required')
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise invalid(f'"{key}" must be an array of strings, got {describe(value)}')
    if len(value) < min_items:
        raise invalid(f'"{key}" must hold at least {min_items} item{"s" if min_items > 1 else ""}')
    for item in value:
        _require_unicode(key, item)
    return value


def _require_unicode(key: str, value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid(f'"{key}" is not valid Unicode text (it holds a lone surrogate)') from None
