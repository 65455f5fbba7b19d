"""A stdlib-only MCP stdio server with one tool, ``echo(text) -> text``: a near-zero-cost peer.

Measuring a client against it isolates the client's own cost per call (bench/), and tests
use it where they need a real server process whose own cost is negligible. It speaks the
initialize handshake (echoing the client's protocolVersion when it is a handshake-era
revision, else 2025-11-25), answers ping, tools/list and tools/call, a call of another
tool with an ``isError`` result ("unknown tool"), and ``server/discover`` and every other
unknown method with JSON-RPC -32601, so mcp 2.x clients in "auto" mode fall back to the
handshake. It validates nothing beyond what the echo needs. With ``--ignore-unknown`` it
answers no unknown request at all (as some 2025 servers do), so a probing client waits;
with ``--meta-tool`` it also offers ``meta()``, whose text is the ``params._meta`` of the
tools/call it received (JSON, keys sorted): what a client put there, seen by the server.

    python minimal_echo_server.py [--ignore-unknown] [--meta-tool]       (stdio)
"""

from __future__ import annotations

import json
import sys
from typing import Any

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
ECHO_TOOL = {
    "name": "echo",
    "description": "Return the given text unchanged.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}

META_TOOL = {
    "name": "meta",
    "description": "Return the _meta of this tools/call request as JSON.",
    "inputSchema": {"type": "object", "properties": {}},
    "annotations": {"readOnlyHint": True},
}
TOOLS = [ECHO_TOOL, *([META_TOOL] if "--meta-tool" in sys.argv[1:] else [])]


def result_for(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The result of a request, or None for a method this server does not have."""
    if method == "initialize":
        asked = params.get("protocolVersion")
        return {
            "protocolVersion": asked if asked in HANDSHAKE_VERSIONS else "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "minimal-echo", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        if params.get("name") == "meta" and META_TOOL in TOOLS:
            return {"content": [{"type": "text", "text": json.dumps(params.get("_meta"), sort_keys=True)}]}
        if params.get("name") != "echo":
            return {"content": [{"type": "text", "text": "unknown tool"}], "isError": True}
        text = str((params.get("arguments") or {}).get("text", ""))
        return {"content": [{"type": "text", "text": text}]}
    if method == "ping":
        return {}
    return None


def answer(message: dict[str, Any], ignore_unknown: bool = False) -> dict[str, Any] | None:
    """The response to one message (None for notifications, and unknown requests ignored)."""
    request_id = message.get("id")
    if request_id is None:
        return None
    method = str(message.get("method"))
    result = result_for(method, message.get("params") or {})
    if result is None and ignore_unknown:
        return None
    if result is None:
        return {"jsonrpc": "2.0", "id": request_id,
                "error": {"code": -32601, "message": f"Method not found: {method}"}}
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def main() -> None:
    out = sys.stdout
    ignore_unknown = "--ignore-unknown" in sys.argv[1:]
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = answer(json.loads(line), ignore_unknown)
        except ValueError:
            reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        if reply is not None:
            out.write(json.dumps(reply) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
