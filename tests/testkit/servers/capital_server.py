"""A stdlib MCP stdio server offering the tools of the recorded real streams (tests/data/streams).

``get_capital(country)`` (gpt-5.5's recording; PotatoLand's capital is Potato City, as
the recorded answer says) and ``final_result(result)`` (gpt-5's), both annotated
``readOnlyHint`` so toolrelay starts them as their item closes. ``--touch PATH``: the
file each tools/call creates as soon as it arrives, before it answers, so an endpoint
that holds ``response.completed`` until PATH exists proves the call started mid-stream.

    python capital_server.py [--touch PATH]        (stdio)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

READ_ONLY = {"readOnlyHint": True}
COUNTRY = {"type": "object", "properties": {"country": {"type": "string"}}, "required": ["country"]}
RESULT = {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}
TOOLS = [
    {"name": "get_capital", "description": "The capital of a country.", "inputSchema": COUNTRY,
     "annotations": READ_ONLY},
    {"name": "final_result", "description": "The final response which ends this conversation.",
     "inputSchema": RESULT, "annotations": READ_ONLY},
]
CAPITALS = {"PotatoLand": "Potato City"}


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    if name == "get_capital":
        country = str(arguments.get("country"))
        text = CAPITALS.get(country, f"no capital known for {country}")
    else:
        text = f"result {arguments.get('result')} recorded"
    return {"content": [{"type": "text", "text": text}], "isError": False}


def result(method: str, params: dict[str, Any], touch: Path | None) -> dict[str, Any] | None:
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}}, "serverInfo": {"name": "capitals", "version": "1"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        if touch is not None:
            touch.touch()
        return call(str(params.get("name")), params.get("arguments") or {})
    return {} if method == "ping" else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--touch", type=Path)
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
