"""A small MCP server (stdio, standard library only) that reports while it works, to try
progress and server logs: ``python3 examples/reporting_server.py``.

One read-only tool:

  count(to=3, pace=0.1)   counts to ``to``, one number every ``pace`` seconds: each is a
                          ``notifications/progress`` (with the call's ``progressToken``,
                          ``total`` = ``to``) and an info log message; at the end a warning
                          ("tired after counting to N"), then the answer ``counted to N``

It declares ``logging`` and honours ``logging/setLevel`` (until asked, it sends every
level). Run it from toolrelay with a config such as
``{"mcpServers": {"rep": {"command": "python3", "args": ["examples/reporting_server.py"]}}}``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
COUNT = {
    "name": "count",
    "description": "Counts to a number, slowly, reporting progress.",
    "inputSchema": {"type": "object", "properties": {"to": {"type": "integer", "default": 3},
                                                     "pace": {"type": "number", "default": 0.1}}},
    "annotations": {"readOnlyHint": True},
}
_lock = threading.Lock()
_level: list[str] = []  # the level asked, once asked


def send(message: dict[str, Any]) -> None:
    with _lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def notify(method: str, params: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "method": method, "params": params})


def log(level: str, text: str) -> None:
    if not _level or LEVELS.index(level) >= LEVELS.index(_level[-1]):
        notify("notifications/message", {"level": level, "logger": "counter", "data": text})


def count(request_id: Any, params: dict[str, Any]) -> None:
    arguments = params.get("arguments") or {}
    to, pace = int(arguments.get("to", 3)), float(arguments.get("pace", 0.1))
    token = (params.get("_meta") or {}).get("progressToken")
    for number in range(1, to + 1):
        time.sleep(pace)
        log("info", f"counted {number}")
        if token is not None:
            notify("notifications/progress",
                   {"progressToken": token, "progress": number, "total": to, "message": "counting"})
    log("warning", f"tired after counting to {to}")
    done = {"content": [{"type": "text", "text": f"counted to {to}"}]}
    send({"jsonrpc": "2.0", "id": request_id, "result": done})


def answer(message: dict[str, Any]) -> None:
    request_id, method, params = message.get("id"), message.get("method"), message.get("params") or {}
    if request_id is None:
        return  # a notification: nothing to answer
    if method == "tools/call":
        threading.Thread(target=count, args=(request_id, params), daemon=True).start()
        return
    if method == "initialize":
        result = {"protocolVersion": params.get("protocolVersion"),
                  "capabilities": {"tools": {}, "logging": {}},
                  "serverInfo": {"name": "reporting-server", "version": "1"}}
    elif method == "logging/setLevel":
        _level.append(str(params.get("level")))
        result = {}
    elif method == "tools/list":
        result = {"tools": [COUNT]}
    elif method == "ping":
        result = {}
    else:
        unknown = {"code": -32601, "message": f"Method not found: {method}"}
        send({"jsonrpc": "2.0", "id": request_id, "error": unknown})
        return
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            answer(json.loads(line))


if __name__ == "__main__":
    main()
