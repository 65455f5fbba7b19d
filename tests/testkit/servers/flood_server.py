"""A stdlib MCP stdio server that floods its client, for the recording-side limit.

Tool ``flood(count, changed)`` sends ``count`` ``notifications/message`` (about 250 bytes
each), then ``notifications/tools/list_changed`` when ``changed`` is true, then answers
``flooded``; after a ``changed`` flood its tools/list also offers ``added``.
"""

import json
import sys

READ_ONLY = {"readOnlyHint": True}
FLOOD = {"name": "flood", "description": "Send many notifications, then answer.",
         "inputSchema": {"type": "object", "properties": {"count": {"type": "integer"},
                                                          "changed": {"type": "boolean"}}},
         "annotations": READ_ONLY}
ADDED = {"name": "added", "description": "Listed after a change.", "inputSchema": {"type": "object"},
         "annotations": READ_ONLY}
CHANGED: list[bool] = []


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")


def flood(count: int, changed: bool) -> None:
    for number in range(count):
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "info", "logger": "flood", "data": f"log line {number} " + "x" * 200}})
    if changed:
        CHANGED.append(True)
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})


def answer(message: dict) -> dict | None:
    method, params, mid = message.get("method"), message.get("params") or {}, message.get("id")
    if mid is None:
        return None
    if method == "initialize":
        result = {"protocolVersion": params.get("protocolVersion"),
                  "capabilities": {"tools": {"listChanged": True}},
                  "serverInfo": {"name": "flood", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [FLOOD, ADDED] if CHANGED else [FLOOD]}
    elif method == "tools/call" and params.get("name") in ("flood", "added"):
        arguments = params.get("arguments") or {}
        flood(int(arguments.get("count", 0)), bool(arguments.get("changed")))
        result = {"content": [{"type": "text", "text": "flooded"}]}
    else:
        return {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"no {method}"}}
    return {"jsonrpc": "2.0", "id": mid, "result": result}


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            reply = answer(json.loads(line))
            if reply is not None:
                send(reply)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
