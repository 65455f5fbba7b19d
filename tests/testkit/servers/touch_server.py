"""A stdlib MCP stdio server whose read-only tool ``look`` creates a file when it is called.

``--touch PATH``: the file ``look`` creates as soon as its tools/call arrives (before it
answers). A stand-in told to hold ``response.completed`` until that file exists proves
that the call started while the response was still streaming: a client that waited for
the whole response would wait forever.

    python touch_server.py --touch PATH        (stdio)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

LOOK = {
    "name": "look",
    "description": "Look at something.",
    "inputSchema": {"type": "object", "properties": {"what": {"type": "string"}}},
    "annotations": {"readOnlyHint": True},
}


def result(method: str, params: dict[str, Any], touch: Path) -> dict[str, Any] | None:
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}}, "serverInfo": {"name": "touch", "version": "1"}}
    if method == "tools/list":
        return {"tools": [LOOK]}
    if method == "tools/call":
        touch.touch()
        what = (params.get("arguments") or {}).get("what", "")
        return {"content": [{"type": "text", "text": f"looked at {what}"}], "isError": False}
    return {} if method == "ping" else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--touch", type=Path, required=True)
    touch = parser.parse_args().touch
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        found = result(str(message.get("method")), message.get("params") or {}, touch)
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if found is None:
            reply["error"] = {"code": -32601, "message": "Method not found"}
        else:
            reply["result"] = found
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
