"""The ``--expose-resources`` readers' declarations, derived again from the record.

A route to ``[server, "resources/read"]`` that the server's tools/list does not list is
a reader (``relay.resource_tool``): its declaration must be what the live path builds
from the server's last ``resources/list`` and ``resources/templates/list`` answers
before the declarations were made (every page), with the run's strict setting.
"""

from __future__ import annotations

from typing import Any

from ..events import MCP_REQUEST, MCP_RESPONSE
from ..protocol import mcp as m
from ..relay.stages.resource_reading import declaration, reader_route
from .record import RunRecord

__all__ = ["is_reader", "reader_declaration"]

_LISTS = {m.LIST_RESOURCES: "resources", m.LIST_RESOURCE_TEMPLATES: "resourceTemplates"}


def is_reader(tool: Any, listed_tools: dict[str, Any]) -> bool:
    """Whether a route's tool is the reader (``resources/read``, not a tool the server lists)."""
    return tool == m.READ_RESOURCE and tool not in listed_tools


def reader_declaration(run: RunRecord, alias: str, server: str, seq: int, strict: bool) -> dict[str, Any]:
    """The reader's ``tools`` entry as the live path gives it from what ``server`` listed before ``seq``."""
    resources = _last_listing(run, server, m.LIST_RESOURCES, seq)
    templates = _last_listing(run, server, m.LIST_RESOURCE_TEMPLATES, seq)
    return declaration(reader_route(alias, server, resources, templates), strict=strict)


def _last_listing(run: RunRecord, server: str, method: str, seq: int) -> list[dict[str, Any]]:
    """Every page of the server's last complete ``method`` listing before ``seq``."""
    key = _LISTS[method]
    pages: dict[tuple[str, str], bool] = {}  # (connection, mcp id) → whether its request began a listing
    listing: list[dict[str, Any]] = []
    last: list[dict[str, Any]] = []
    for event in run.mcp:
        if event["seq"] >= seq or event.get("server") != server or event.get("method") != method:
            continue
        message = event.get("message")
        if not isinstance(message, dict):
            continue
        page = (str(event.get("connection")), str(message.get("id")))  # as text: a junk id is no key
        if event["kind"] == MCP_REQUEST:
            params = message.get("params")
            pages[page] = not (isinstance(params, dict) and "cursor" in params)
        elif event["kind"] == MCP_RESPONSE:
            result = message.get("result")
            items = result.get(key) if isinstance(result, dict) else None
            if pages.get(page, True):
                listing = []
            if isinstance(items, list):
                listing.extend(item for item in items if isinstance(item, dict))
            if not (isinstance(result, dict) and result.get("nextCursor") is not None):
                last = listing
    return last
