"""What a server offers besides tools: resources, resource templates, prompts, completion.

Each function sends the server's own request on a started ``Connection`` (so it is
recorded like any message), follows ``nextCursor`` pages to the end, and checks the shape
of what comes back: a server answering with something that is not a list of objects is a
``ProtocolError`` naming the server and the method, and a JSON-RPC error an ``RpcError``
naming them too. Only servers that declare the capability are asked (``offers``); the rest
are skipped, never sent a request they would refuse. ``resources/templates/list`` is
optional within ``resources``: a server that has no such method (-32601) has no templates.
"""

from __future__ import annotations

from typing import Any, Final

from ..errors import ProtocolError, RpcError
from ..protocol import mcp as m
from ..protocol.jsonrpc import METHOD_NOT_FOUND, JSONObject
from ..protocol.versions import MODERN_VERSIONS
from .connection import Connection

__all__ = [
    "complete_argument",
    "get_prompt",
    "list_prompts",
    "list_resource_templates",
    "list_resources",
    "offers",
    "read_resource",
    "subscribe_resource",
    "subscribes",
]

_MAX_PAGES: Final = 1000  # a server whose nextCursor never ends must not loop us forever


def offers(connection: Connection, feature: str) -> bool:
    """Whether the server declared ``feature`` (``resources``, ``prompts``, ``completions``)."""
    return isinstance(connection.capabilities.get(feature), dict)


async def list_resources(connection: Connection) -> list[JSONObject]:
    """Every resource the server lists (all pages)."""
    return await _all_pages(connection, m.LIST_RESOURCES, "resources")


async def list_resource_templates(connection: Connection) -> list[JSONObject]:
    """Every resource template the server lists (all pages); none when it has no such method."""
    try:
        return await _all_pages(connection, m.LIST_RESOURCE_TEMPLATES, "resourceTemplates")
    except RpcError as exc:
        if exc.code == METHOD_NOT_FOUND:
            return []
        raise


async def list_prompts(connection: Connection) -> list[JSONObject]:
    """Every prompt the server lists (all pages)."""
    return await _all_pages(connection, m.LIST_PROMPTS, "prompts")


async def read_resource(connection: Connection, uri: str) -> list[JSONObject]:
    """The contents of ``uri`` (each with ``uri``, and ``text`` or ``blob``)."""
    result = await connection.request(m.READ_RESOURCE, {"uri": uri})
    return _objects(connection, m.READ_RESOURCE, result.get("contents"), "contents")


def subscribes(connection: Connection) -> bool:
    """Whether the server lets clients subscribe to resource updates (``resources.subscribe``)."""
    declared = connection.capabilities.get("resources")
    return isinstance(declared, dict) and declared.get("subscribe") is True


async def subscribe_resource(connection: Connection, uri: str) -> None:
    """Follow ``uri``: the server sends ``notifications/resources/updated`` when it changes.
    ``resources/subscribe`` (``RpcError`` when refused); in 2026-07-28, which has none, the
    URI joins the ``subscriptions/listen`` filter (a refusal is a notice)."""
    if connection.protocol_version in MODERN_VERSIONS:
        await connection.watch_resource(uri)
        return
    await connection.request(m.SUBSCRIBE_RESOURCE, {"uri": uri})


async def get_prompt(connection: Connection, name: str, arguments: dict[str, str]) -> JSONObject:
    """The prompt ``name`` filled with ``arguments``: its ``messages`` (and description)."""
    params: JSONObject = {"name": name, "arguments": arguments} if arguments else {"name": name}
    result = await connection.request(m.GET_PROMPT, params)
    _objects(connection, m.GET_PROMPT, result.get("messages"), "messages")
    return result


async def complete_argument(
    connection: Connection, ref: JSONObject, name: str, value: str, context: dict[str, str] | None = None
) -> list[str]:
    """Values the server suggests for argument ``name`` of a prompt or resource template
    (``ref``: ``{"type": "ref/prompt", "name": …}`` or ``{"type": "ref/resource", "uri": …}``)."""
    params: JSONObject = {"ref": ref, "argument": {"name": name, "value": value}}
    if context:
        params["context"] = {"arguments": context}
    result = await _ask(connection, m.COMPLETE, params)
    completion = result.get("completion")
    values = completion.get("values") if isinstance(completion, dict) else None
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ProtocolError(f"server {connection.name} answered {m.COMPLETE} without a list of values")
    return values


async def _all_pages(connection: Connection, method: str, key: str) -> list[JSONObject]:
    found: list[JSONObject] = []
    cursor: Any = None
    for _ in range(_MAX_PAGES):
        result = await _ask(connection, method, {"cursor": cursor} if cursor is not None else None)
        found.extend(_objects(connection, method, result.get(key), key))
        cursor = result.get("nextCursor")
        if not isinstance(cursor, (str, int)) or isinstance(cursor, bool):
            return found
    raise ProtocolError(f"server {connection.name} sent more than {_MAX_PAGES} pages of {method}")


async def _ask(connection: Connection, method: str, params: JSONObject | None) -> JSONObject:
    """``connection.request``, its JSON-RPC error saying which server refused which method."""
    try:
        return await connection.request(method, params)
    except RpcError as exc:
        raise RpcError(exc.code, f"server {connection.name} refused {method}: {exc.rpc_message}",
                       exc.data) from None


def _objects(connection: Connection, method: str, value: Any, key: str) -> list[JSONObject]:
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise ProtocolError(f"server {connection.name} answered {method} without a {key} array of objects")
    return value
