"""MCP method names and the payloads toolrelay builds and checks (sans-IO).

Only what both sides of toolrelay need: the handshake, ping, tools, resources, prompts,
completion, roots, cancellation.
Payloads stay plain JSON objects (as on the wire); helpers here build them and check the
shape of what arrives, raising ``RpcError(-32602)`` for malformed params.
"""

from __future__ import annotations

from typing import Any, Final

from ..errors import RpcError
from .jsonrpc import INVALID_PARAMS, JSONObject

__all__ = [
    "CALL_TOOL",
    "CANCELLED",
    "COMPLETE",
    "GET_PROMPT",
    "INITIALIZE",
    "INITIALIZED",
    "LIST_PROMPTS",
    "LIST_RESOURCES",
    "LIST_RESOURCE_TEMPLATES",
    "LIST_ROOTS",
    "LIST_TOOLS",
    "PING",
    "READ_RESOURCE",
    "ROOTS_CHANGED",
    "TOOLS_CHANGED",
    "initialize_params",
    "optional_str",
    "require_object",
    "require_str",
    "text_result",
]

INITIALIZE: Final = "initialize"
INITIALIZED: Final = "notifications/initialized"
PING: Final = "ping"
LIST_TOOLS: Final = "tools/list"
CALL_TOOL: Final = "tools/call"
LIST_RESOURCES: Final = "resources/list"
LIST_RESOURCE_TEMPLATES: Final = "resources/templates/list"
READ_RESOURCE: Final = "resources/read"
LIST_PROMPTS: Final = "prompts/list"
GET_PROMPT: Final = "prompts/get"
COMPLETE: Final = "completion/complete"
LIST_ROOTS: Final = "roots/list"
CANCELLED: Final = "notifications/cancelled"
TOOLS_CHANGED: Final = "notifications/tools/list_changed"
ROOTS_CHANGED: Final = "notifications/roots/list_changed"
PROGRESS: Final = "notifications/progress"
LOG_MESSAGE: Final = "notifications/message"


def initialize_params(
    version: str, client_name: str, client_version: str, capabilities: JSONObject | None = None
) -> JSONObject:
    """The client's ``initialize`` params."""
    return {
        "protocolVersion": version,
        "capabilities": capabilities if capabilities is not None else {},
        "clientInfo": {"name": client_name, "version": client_version},
    }


def require_object(params: JSONObject | None, key: str, *, optional: bool = False) -> JSONObject:
    """``params[key]`` as an object; -32602 naming the field otherwise."""
    value = (params or {}).get(key)
    if value is None and optional:
        return {}
    if not isinstance(value, dict):
        raise RpcError(INVALID_PARAMS, f'Invalid params: "{key}" must be an object')
    return value


def require_str(params: JSONObject | None, key: str) -> str:
    """``params[key]`` as a string; -32602 naming the field otherwise."""
    value = (params or {}).get(key)
    if not isinstance(value, str):
        raise RpcError(INVALID_PARAMS, f'Invalid params: "{key}" must be a string')
    return value


def optional_str(params: JSONObject | None, key: str) -> str | None:
    """``params[key]`` when present; -32602 if present but not a string."""
    value = (params or {}).get(key)
    if value is not None and not isinstance(value, str):
        raise RpcError(INVALID_PARAMS, f'Invalid params: "{key}" must be a string')
    return value


def text_result(text: str, *, is_error: bool = False, structured: Any = None) -> JSONObject:
    """A ``CallToolResult`` with one text block (and structuredContent when given)."""
    result: JSONObject = {"content": [{"type": "text", "text": text}]}
    if structured is not None:
        result["structuredContent"] = structured
    if is_error:
        result["isError"] = True
    return result
