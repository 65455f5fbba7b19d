"""A stdlib MCP stdio server whose tool names and schemas are everything the OpenAI API
dislikes: dots, slashes, spaces, non-ASCII, a 100-character name, names that map to the
same alias, and odd schemas. Every call answers with the tool's original name and the
arguments it received, so a test sees exactly what arrived.

Run: python hostile_server.py [NAME_PREFIX]
"""

import json
import sys

LONG = "x" * 100
SCHEMAS = {
    "read.file": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    "fs/read": {"type": "object", "properties": {"path": {"type": "string"}}},
    "with space": {"type": "object"},
    "café": {"type": "object", "properties": {}},
    "a_b": {"type": "object"},
    "a.b": {"type": "object"},
    LONG: {"type": "object"},
    LONG[:-1] + "y": {"type": "object"},
    "read_text_file": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "head": {"type": "number"}, "tail": {"type": "number"}},
        "required": ["path"],
    },
    "nested": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "options": {
                "type": "object",
                "properties": {
                    "mode": {"type": "string", "enum": ["fast", "safe"], "default": "safe"},
                    "limit": {"type": "integer", "minimum": 1},
                },
                "required": ["mode"],
            },
            "target": {"anyOf": [{"type": "string", "format": "uri"}, {"$ref": "#/$defs/point"}]},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["target"],
        "$defs": {
            "point": {
                "type": "object",
                "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                "required": ["x", "y"],
            },
        },
    },
    "open_object": {
        "type": "object",
        "properties": {"meta": {"type": "object"}},
        "additionalProperties": True,
    },
}


def answer(message: dict) -> dict | None:
    method, params = message.get("method"), message.get("params") or {}
    if "id" not in message:
        return None
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1"},
        }
    elif method == "tools/list":
        result = {
            "tools": [{"name": n, "description": f"tool {n!r}", "inputSchema": s} for n, s in SCHEMAS.items()]
        }
    elif method == "tools/call" and params.get("name") in SCHEMAS:
        echo = {"tool": params["name"], "arguments": params.get("arguments")}
        result = {"content": [{"type": "text", "text": json.dumps(echo, sort_keys=True)}]}
    else:
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


for line in sys.stdin:
    if line.strip():
        reply = answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
