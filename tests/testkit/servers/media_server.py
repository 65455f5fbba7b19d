"""A stdlib MCP stdio server whose results are not plain text, like server-everything's.

Tools (all read-only): sound() → a caption and an audio/wav block; photo(kb) → a caption
and an image/png block of ``kb`` kilobytes (default 300: more than the text budget holds
as base64); note() → an embedded resource whose body is a base64 ``blob`` with MIME type
text/plain (server-everything's ``test://static/resource/2`` style URI, no extension).
"""

import base64
import json
import sys

READ_ONLY = {"readOnlyHint": True}
NO_ARGS = {"type": "object", "properties": {}}
TOOLS = [
    {"name": "sound", "description": "A short beep.", "inputSchema": NO_ARGS, "annotations": READ_ONLY},
    {
        "name": "photo",
        "description": "A PNG image of the given size.",
        "inputSchema": {"type": "object", "properties": {"kb": {"type": "integer"}}},
        "annotations": READ_ONLY,
    },
    {
        "name": "note",
        "description": "A text resource as a blob.",
        "inputSchema": NO_ARGS,
        "annotations": READ_ONLY,
    },
]
NOTE_TEXT = "Hello, World! This is resource 2, a text/plain blob."
WAV = b"RIFF" + b"\0" * 40


def b64(data):
    return base64.b64encode(data).decode()


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(name, args):
    if name == "sound":
        audio = {"type": "audio", "mimeType": "audio/wav", "data": b64(WAV)}
        return [{"type": "text", "text": "a beep"}, audio]
    if name == "photo":
        size = int(args.get("kb", 300)) * 1000
        png = b"\x89PNG\r\n\x1a\n" + b"\0" * (size - 8)
        image = {"type": "image", "mimeType": "image/png", "data": b64(png)}
        return [{"type": "text", "text": "a photo"}, image]
    resource = {"uri": "test://static/resource/2", "mimeType": "text/plain", "blob": b64(NOTE_TEXT.encode())}
    return [{"type": "resource", "resource": resource}]


def handle(message):
    method, mid, params = message.get("method"), message.get("id"), message.get("params") or {}
    if mid is None or method is None:
        return
    if method == "initialize":
        answer = {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "media", "version": "1"},
        }
    elif method == "tools/list":
        answer = {"tools": TOOLS}
    elif method == "tools/call":
        answer = {"content": result(params.get("name"), params.get("arguments") or {})}
    elif method == "ping":
        answer = {}
    else:
        return send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"no {method}"}})
    send({"jsonrpc": "2.0", "id": mid, "result": answer})


for line in sys.stdin:
    if line.strip():
        handle(json.loads(line))
