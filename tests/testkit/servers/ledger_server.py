"""A stdlib MCP stdio server that keeps a ledger of every tools/call it runs (batch tests).

    python ledger_server.py --ledger FILE [--delay SECONDS]

Tools:
  read_text_file(path, head)  NOT read-only (no readOnlyHint): appends {"tool", "path",
                              "pid"} to FILE (flushed) when the call arrives, waits
                              ``--delay`` seconds, then answers "contents of PATH"
  peek(path)                  read-only (readOnlyHint): the same ledger line, then answers
  recorded(transcript, kind)  read-only: how many tools/call requests the transcript file
                              holds right now (proof that the request was written first),
                              or with ``kind``, how many lines of that kind

Its serverInfo version is its pid, so a test can tell one server process from another.
The offline stand-in's scenario picks ``read_text_file`` and fills ``path`` from the task's
text, so a task "Read the first 2 lines of t7.txt" writes one ledger line with path t7.txt
each time it really runs: the test counts them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

PATH = {"type": "string"}
TOOLS = [
    {"name": "read_text_file", "description": "Read a file (and note it in the ledger).",
     "inputSchema": {"type": "object", "properties": {"path": PATH, "head": {"type": "integer"}},
                     "required": ["path"]}},
    {"name": "peek", "description": "Look at a file (read-only).", "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {"path": PATH}, "required": ["path"]}},
    {"name": "recorded", "description": "Count the tools/call requests of a transcript.",
     "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {"transcript": PATH, "kind": {"type": "string"}},
                     "required": ["transcript"]}},
]


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": False}


def call(name: str, arguments: dict[str, Any], options: argparse.Namespace) -> dict[str, Any]:
    if name == "recorded":
        with open(arguments["transcript"], encoding="utf-8") as transcript:
            lines = [json.loads(line) for line in transcript if line.endswith("\n")]
        kind = arguments.get("kind")
        count = sum(1 for e in lines if e.get("kind") == kind) if kind else \
            sum(1 for e in lines if e.get("kind") == "mcp_request" and e.get("method") == "tools/call")
        return text(str(count))
    with open(options.ledger, "a", encoding="utf-8") as ledger:
        ledger.write(json.dumps({"tool": name, "path": arguments.get("path"), "pid": os.getpid()}) + "\n")
    if name == "read_text_file" and options.delay:
        time.sleep(options.delay)
    return text(f"contents of {arguments.get('path')}")


def result(message: dict[str, Any], options: argparse.Namespace) -> dict[str, Any] | None:
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "ledger", "version": str(os.getpid())}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return call(str(params.get("name")), params.get("arguments") or {}, options)
    return {} if method == "ping" else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ledger", required=True)
    parser.add_argument("--delay", type=float, default=0.0)
    options = parser.parse_args()
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        found = result(message, options)
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if found is None:
            reply["error"] = {"code": -32601, "message": "Method not found"}
        else:
            reply["result"] = found
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
