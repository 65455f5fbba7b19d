"""A stdlib MCP stdio server whose tools end every way a call can end, honestly.

Tools (all read-only unless noted): echo(text) → the text; fail(text) → isError: true;
reject() → a JSON-RPC error (-32602, with data); crash() → the process exits mid-call;
sleep(seconds) → "slept" after a while; picture() → a text block and an image block;
change() → announces notifications/tools/list_changed and lists an extra tool from then
on; write(text) → not read-only (toolrelay asks for consent).
"""

import json
import os
import sys
import time

READ_ONLY = {"readOnlyHint": True}
TEXT_ARG = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
NO_ARGS = {"type": "object", "properties": {}}
TOOLS = [
    {"name": "echo", "description": "Return the text.", "inputSchema": TEXT_ARG, "annotations": READ_ONLY},
    {"name": "fail", "description": "Fail with the text.", "inputSchema": TEXT_ARG, "annotations": READ_ONLY},
    {
        "name": "reject",
        "description": "Answer a JSON-RPC error.",
        "inputSchema": NO_ARGS,
        "annotations": READ_ONLY,
    },
    {"name": "crash", "description": "Exit mid-call.", "inputSchema": NO_ARGS, "annotations": READ_ONLY},
    {
        "name": "sleep",
        "description": "Sleep.",
        "annotations": READ_ONLY,
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
    {
        "name": "picture",
        "description": "A caption and a 1x1 image.",
        "inputSchema": NO_ARGS,
        "annotations": READ_ONLY,
    },
    {
        "name": "change",
        "description": "Change the tool list.",
        "inputSchema": NO_ARGS,
        "annotations": READ_ONLY,
    },
    {"name": "write", "description": "Pretend to write.", "inputSchema": TEXT_ARG},
]
EXTRA = {
    "name": "added",
    "description": "Listed after a change.",
    "inputSchema": NO_ARGS,
    "annotations": READ_ONLY,
}
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
STATE = {"changed": False}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(value, error=False):
    result = {"content": [{"type": "text", "text": value}]}
    if error:
        result["isError"] = True
    return result


def call(mid, name, args):
    if name == "echo":
        return send({"jsonrpc": "2.0", "id": mid, "result": text(str(args.get("text", "")))})
    if name == "fail":
        return send({"jsonrpc": "2.0", "id": mid, "result": text(f"failed: {args.get('text')}", error=True)})
    if name == "reject":
        error = {"code": -32602, "message": "reject refuses every call", "data": {"why": "by design"}}
        return send({"jsonrpc": "2.0", "id": mid, "error": error})
    if name == "crash":
        sys.stderr.write("honest_server: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    if name == "sleep":
        time.sleep(float(args.get("seconds", 1)))
        return send({"jsonrpc": "2.0", "id": mid, "result": text("slept")})
    if name == "picture":
        blocks = [
            {"type": "text", "text": "a red pixel"},
            {"type": "image", "mimeType": "image/png", "data": PIXEL},
        ]
        return send({"jsonrpc": "2.0", "id": mid, "result": {"content": blocks}})
    if name == "change":
        STATE["changed"] = True
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return send({"jsonrpc": "2.0", "id": mid, "result": text("the tool list changed")})
    if name == "added":
        return send({"jsonrpc": "2.0", "id": mid, "result": text("the added tool ran")})
    return send({"jsonrpc": "2.0", "id": mid, "result": text(f"wrote {args.get('text')}")})


def handle(message):
    method, mid, params = message.get("method"), message.get("id"), message.get("params") or {}
    if mid is None or method is None:
        return
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "honest", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS + ([EXTRA] if STATE["changed"] else [])}
    elif method == "tools/call":
        return call(mid, params.get("name"), params.get("arguments") or {})
    elif method == "ping":
        result = {}
    else:
        return send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"no {method}"}})
    send({"jsonrpc": "2.0", "id": mid, "result": result})


for line in sys.stdin:
    if line.strip():
        handle(json.loads(line))
