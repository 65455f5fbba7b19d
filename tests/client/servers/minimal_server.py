"""A stdlib-only MCP stdio server with one tool, echo(text): the cheapest possible peer.

Speaks the handshake (echoes a handshake-era protocolVersion, else 2025-11-25), answers
ping, tools/list and tools/call, and -32601 to anything else. Used where a test needs a
real server process whose own cost is negligible.
"""

import json
import sys

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
ECHO = {
    "name": "echo",
    "description": "Return the given text unchanged.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}


def answer(message: dict) -> dict | None:
    method, params = message.get("method"), message.get("params") or {}
    if "id" not in message:
        return None
    if method == "initialize":
        asked = params.get("protocolVersion")
        result = {
            "protocolVersion": asked if asked in VERSIONS else "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "minimal-echo", "version": "1"},
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": [ECHO]}
    elif method == "tools/call" and params.get("name") == "echo":
        result = {"content": [{"type": "text", "text": str(params.get("arguments", {}).get("text", ""))}]}
    else:
        error = {"code": -32601 if method != "tools/call" else -32602, "message": f"Unknown: {method}"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            reply = answer(json.loads(line))
            if reply is not None:
                sys.stdout.write(json.dumps(reply) + "\n")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
