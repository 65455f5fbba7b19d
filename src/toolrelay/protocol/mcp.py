"""MCP method names and the payloads toolrelay builds and checks (sans-IO).

Only what toolrelay speaks: the handshake, ping, tools, resources, prompts, completion,
roots, cancellation, and what a client offers servers (sampling, elicitation, client-side
tasks). Payloads stay plain JSON objects (as on the wire); helpers here build them and
check the shape of what arrives, raising ``RpcError(-32602)`` for malformed params.
"""

from __future__ import annotations

from typing import Any, Final

from ..errors import RpcError
from .jsonrpc import INVALID_PARAMS, JSONObject

__all__ = [
    "CALL_TOOL",
    "CANCELLED",
    "COMPLETE",
    "CREATE_MESSAGE",
    "ELICIT",
    "ELICITATION_COMPLETE",
    "GET_PROMPT",
    "INITIALIZE",
    "INITIALIZED",
    "LIST_PROMPTS",
    "LIST_RESOURCES",
    "LIST_RESOURCE_TEMPLATES",
    "LIST_ROOTS",
    "LIST_TOOLS",
    "PING",
    "PROMPTS_CHANGED",
    "READ_RESOURCE",
    "RELATED_TASK",
    "RESOURCES_CHANGED",
    "RESOURCE_UPDATED",
    "ROOTS_CHANGED",
    "SUBSCRIBE_RESOURCE",
    "TASKS_CANCEL",
    "TASKS_GET",
    "TASKS_LIST",
    "TASKS_RESULT",
    "TASK_STATUS",
    "TASK_SUPPORT_REQUIRED",
    "TERMINAL_TASK_STATUSES",
    "TOOLS_CHANGED",
    "UNSUBSCRIBE_RESOURCE",
    "USER_REJECTED",
    "feature_target",
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
SUBSCRIBE_RESOURCE: Final = "resources/subscribe"
UNSUBSCRIBE_RESOURCE: Final = "resources/unsubscribe"
PROMPTS_CHANGED: Final = "notifications/prompts/list_changed"
RESOURCES_CHANGED: Final = "notifications/resources/list_changed"
RESOURCE_UPDATED: Final = "notifications/resources/updated"
LIST_PROMPTS: Final = "prompts/list"
GET_PROMPT: Final = "prompts/get"
COMPLETE: Final = "completion/complete"
LIST_ROOTS: Final = "roots/list"
CANCELLED: Final = "notifications/cancelled"
TOOLS_CHANGED: Final = "notifications/tools/list_changed"
ROOTS_CHANGED: Final = "notifications/roots/list_changed"
PROGRESS: Final = "notifications/progress"
LOG_MESSAGE: Final = "notifications/message"
# What a client offers servers (server → client requests)
CREATE_MESSAGE: Final = "sampling/createMessage"
ELICIT: Final = "elicitation/create"
ELICITATION_COMPLETE: Final = "notifications/elicitation/complete"
# Tasks (2025-11-25): the requests a task's creator sends its receiver
TASKS_GET: Final = "tasks/get"
TASKS_RESULT: Final = "tasks/result"
TASKS_LIST: Final = "tasks/list"
TASKS_CANCEL: Final = "tasks/cancel"
TASK_STATUS: Final = "notifications/tasks/status"
RELATED_TASK: Final = "io.modelcontextprotocol/related-task"
"""The ``_meta`` key tying a message to its task."""
TASK_SUPPORT_REQUIRED: Final = "required"
"""A tool's ``execution.taskSupport`` when it may only be called as a task (2025-11-25)."""
TERMINAL_TASK_STATUSES: Final = frozenset({"completed", "failed", "cancelled"})
"""Task statuses that never change again."""
USER_REJECTED: Final = -1
"""The JSON-RPC error code of a sampling request the user (or the client's policy) refused."""


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


def feature_target(params: JSONObject) -> str | None:
    """The name or URI a resources/prompts/completion request names: ``uri``, ``name``, or
    its completion ``ref``'s name or URI (None: it names none)."""
    ref = params.get("ref")
    for found in (params.get("uri"), params.get("name"),
                  (ref.get("name") or ref.get("uri")) if isinstance(ref, dict) else None):
        if isinstance(found, str):
            return found
    return None
