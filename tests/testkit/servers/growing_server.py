"""A stdlib MCP stdio server whose tool list grows: every tools/call adds a tool.

It starts with one tool, ``grow``. Each call of any listed tool adds ``tool_N`` (N = 1,
2, ...), sends ``notifications/tools/list_changed`` and then answers with the new tool's
name, so the notification always arrives before the answer to the call that caused it.
With ``$GROWING_SHRINKS`` set, the call also removes the tool it called (a tool removed mid-run).
"""

import json
import os
import sys

SCHEMA = {"type": "object", "properties": {}}
TOOLS = ["grow"]


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(message: dict) -> dict | None:
    method, params = message.get("method"), message.get("params") or {}
    if "id" not in message:
        return None
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "growing", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [{"name": n, "description": f"tool {n}", "inputSchema": SCHEMA} for n in TOOLS]}
    elif method == "tools/call" and params.get("name") in TOOLS:
        added = f"tool_{len(TOOLS)}"
        TOOLS.append(added)
        if os.environ.get("GROWING_SHRINKS"):
            TOOLS.remove(params["name"])
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        result = {"content": [{"type": "text", "text": added}]}
    else:
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


for line in sys.stdin:
    if line.strip():
        reply = answer(json.loads(line))
        if reply is not None:
            send(reply)
