"""A stdlib MCP stdio server whose resources change while a run reads them.

Capabilities ``resources{subscribe, listChanged}``. Tools: ``read_resource(text)`` (a
tool of its own with the name toolrelay's reader would take) and ``add_note(name)``, which
adds the resource ``note://NAME`` and sends ``notifications/resources/list_changed``
before its answer. Resources: ``note://first`` (text) and ``bin://logo`` (a 4-byte PNG
blob); ``bad://contents`` reads as a result whose ``contents`` is not an array; anything
else is -32002. ``resources/subscribe`` is answered after a
``notifications/resources/updated`` for the URI (so the update has arrived when the
subscription returns).

    python resource_events_server.py [--refuse list|subscribe]        (stdio)

``--refuse list`` answers ``resources/list`` with error -32603; ``--refuse subscribe``
answers ``resources/subscribe`` with error -32601.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Final

NOTES = {"note://first": "The first note."}
LOGO = {"uri": "bin://logo", "mimeType": "image/png", "blob": "iVBORw=="}  # 4 bytes
TEXT = {"type": "object", "properties": {"text": {"type": "string"}}}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
REFUSED: Final = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--refuse" else None
TOOLS = [
    {"name": "read_resource", "description": "A tool of the server's own.", "inputSchema": TEXT,
     "annotations": {"readOnlyHint": True}},
    {"name": "add_note", "description": "Add a note resource.", "inputSchema": NAME,
     "annotations": {"readOnlyHint": True}},
]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def notify(method: str, params: dict[str, Any] | None = None) -> None:
    send({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})


def resources() -> list[dict[str, Any]]:
    listed = [{"uri": uri, "name": uri.removeprefix("note://"), "mimeType": "text/plain"} for uri in NOTES]
    return [*listed, {"uri": "bin://logo", "name": "logo", "mimeType": "image/png"}]


def read(uri: str) -> dict[str, Any] | None:
    if uri in NOTES:
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": NOTES[uri]}]}
    if uri == "bad://contents":
        return {"contents": "not an array"}
    return {"contents": [LOGO]} if uri == "bin://logo" else None


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    if name == "add_note":
        uri = f"note://{arguments.get('name')}"
        NOTES[uri] = f"The note {arguments.get('name')}."
        notify("notifications/resources/list_changed")
        return {"content": [{"type": "text", "text": f"added {uri}"}]}
    return {"content": [{"type": "text", "text": "the server's own read_resource ran"}]}


class Refused(Exception):
    """Answered as a JSON-RPC error with this code."""


def answer(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    if method == "resources/list" and REFUSED == "list":
        raise Refused(-32603, "the resource index is broken")
    if method == "resources/subscribe" and REFUSED == "subscribe":
        raise Refused(-32601, "subscriptions are switched off")
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}, "resources": {"subscribe": True, "listChanged": True}},
                "serverInfo": {"name": "resource-events", "version": "1"}}
    if method == "resources/subscribe":
        notify("notifications/resources/updated", {"uri": params.get("uri")})
        return {}
    results = {
        "ping": dict, "tools/list": lambda: {"tools": TOOLS},
        "tools/call": lambda: call(str(params.get("name")), params.get("arguments") or {}),
        "resources/list": lambda: {"resources": resources()},
        "resources/templates/list": lambda: {"resourceTemplates": []},
        "resources/read": lambda: read(str(params.get("uri"))),
    }
    return results[method]() if method in results else None


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line) if line.strip() else {}
        if "id" not in message:
            continue
        try:
            result = answer(str(message.get("method")), message.get("params") or {})
        except Refused as refused:
            code, text = refused.args
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": code, "message": text}})
            continue
        if result is None:
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32002, "message": "Not found"}})
        else:
            send({"jsonrpc": "2.0", "id": message["id"], "result": result})


if __name__ == "__main__":
    main()
