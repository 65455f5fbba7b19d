"""A small MCP 2026-07-28 server that says what changed, on ``subscriptions/listen``
(Python standard library only, stdio).

docs/eras.md's example of listening uses it, with ``watch.json`` and ``watch-script.json``:

    toolrelay run "Grow" --config examples/watch.json --resource note://daily ...

Tools: ``grow()`` adds the tool ``extra`` and says the tool list changed; ``touch()`` says
the resource ``note://daily`` was updated (to a listener that asked for it). Resource:
``note://daily``. It speaks only the stateless revision: no ``initialize``, every request
answered from itself; what changes is told only on an open listen request, tagged with its
id, after the acknowledgement of what the listener asked.
"""

from __future__ import annotations

import json
import sys
from typing import Any

VERSION = "2026-07-28"
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
NOTE = {"uri": "note://daily", "name": "daily", "mimeType": "text/plain"}
TOOLS = [
    {"name": "grow", "description": "Add the tool extra.", "inputSchema": {"type": "object"}},
    {"name": "touch", "description": "Update note://daily.", "inputSchema": {"type": "object"}},
]
EXTRA = {"name": "extra", "description": "The tool grow added.", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": True}}
listening: dict[Any, dict[str, Any]] = {}
"""Open listen requests: id → what they asked."""


def send(message: dict[str, Any]) -> None:
    print(json.dumps({"jsonrpc": "2.0", **message}), flush=True)


def tell(method: str, wants: str, params: dict[str, Any] | None = None) -> None:
    """``method`` on every listen request that asked for ``wants`` (a flag, or a URI)."""
    for listen_id, asked in listening.items():
        if asked.get(wants) is True or wants in asked.get("resourceSubscriptions", []):
            send({"method": method, "params": {**(params or {}), "_meta": {SUBSCRIPTION: listen_id}}})


def call(name: str) -> str:
    if name == "grow":
        if EXTRA not in TOOLS:
            TOOLS.append(EXTRA)
        tell("notifications/tools/list_changed", "toolsListChanged")
        return "grown"
    if name == "touch":
        tell("notifications/resources/updated", NOTE["uri"], {"uri": NOTE["uri"]})
        return "touched"
    return "the extra tool ran"


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "server/discover":
        capabilities = {"tools": {"listChanged": True}, "resources": {"subscribe": True}}
        return {"supportedVersions": [VERSION], "capabilities": capabilities,
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "watch", "version": "1"}}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "resources/list":
        return {"resources": [NOTE]}
    if method == "resources/read":
        return {"contents": [{"uri": NOTE["uri"], "mimeType": "text/plain", "text": "Water the plants.\n"}]}
    text = call(params.get("name", ""))
    return {"content": [{"type": "text", "text": text}], "isError": False}


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, params = message.get("method"), message.get("params") or {}
        if method == "subscriptions/listen":  # never answered: the client cancels it
            asked = params.get("notifications") or {}
            honoured = {key: asked[key] for key in ("toolsListChanged", "resourceSubscriptions")
                        if key in asked}
            send({"method": "notifications/subscriptions/acknowledged",
                  "params": {"notifications": honoured, "_meta": {SUBSCRIPTION: message["id"]}}})
            listening[message["id"]] = honoured
        elif method == "notifications/cancelled":
            listening.pop(params.get("requestId"), None)
        elif "id" in message and method in ("server/discover", "tools/list", "tools/call", "resources/list",
                                            "resources/read"):
            send({"id": message["id"], "result": {**answer(method, params), "resultType": "complete"}})
        elif "id" in message:
            send({"id": message["id"], "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    main()
