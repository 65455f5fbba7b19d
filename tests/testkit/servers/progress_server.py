"""A stdlib-only MCP stdio server that reports while it works: progress and log messages.

``work(steps, interval)`` sends ``steps`` progress notifications (``total`` = steps), one
every ``interval`` seconds, with the call's own ``progressToken``, and one log message at
each of debug, info, warning and error along the way; then answers ``done after N
steps``. ``stray()`` sends progress for a token no call sent, then answers ``ok``.

The server declares ``logging`` and honours ``logging/setLevel`` (messages below the
level are not sent); until it is asked, it sends them all. Every request it receives is
appended to the file named by ``--requests`` (when given), one JSON line each.

    python progress_server.py [--requests FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import Any

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
TOOLS = [
    {"name": "work", "description": "Work in steps, reporting progress and logging.",
     "inputSchema": {"type": "object", "properties": {
         "steps": {"type": "integer"}, "interval": {"type": "number"}}},
     "annotations": {"readOnlyHint": True}},
    {"name": "stray", "description": "Report progress for a token no call sent.",
     "inputSchema": {"type": "object", "properties": {}}, "annotations": {"readOnlyHint": True}},
]


class Server:
    def __init__(self, requests: str | None) -> None:
        self.lock = threading.Lock()
        self.level: str | None = None
        self.requests = requests

    def send(self, message: dict[str, Any]) -> None:
        with self.lock:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

    def log(self, level: str, data: Any) -> None:
        if self.level is None or LEVELS.index(level) >= LEVELS.index(self.level):
            self.send({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": level, "logger": "worker", "data": data}})

    def handle(self, message: dict[str, Any]) -> None:
        if self.requests is not None and "id" in message:
            with open(self.requests, "a", encoding="utf-8") as out:
                out.write(json.dumps(message) + "\n")
        request_id, method = message.get("id"), str(message.get("method"))
        if request_id is None:
            return
        params = message.get("params") or {}
        if method == "tools/call":
            threading.Thread(target=self._call, args=(request_id, params), daemon=True).start()
            return
        if method == "logging/setLevel":
            self.level = params.get("level")
            self.send({"jsonrpc": "2.0", "id": request_id, "result": {}})
            return
        if method == "initialize":
            asked = params.get("protocolVersion")
            result = {"protocolVersion": asked, "capabilities": {"tools": {}, "logging": {}},
                      "serverInfo": {"name": "progress", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "ping":
            result = {}
        else:
            self.send({"jsonrpc": "2.0", "id": request_id,
                       "error": {"code": -32601, "message": f"Method not found: {method}"}})
            return
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _call(self, request_id: Any, params: dict[str, Any]) -> None:
        token = (params.get("_meta") or {}).get("progressToken")
        arguments = params.get("arguments") or {}
        if params.get("name") == "stray":
            self.send({"jsonrpc": "2.0", "method": "notifications/progress",
                       "params": {"progressToken": "not-a-token-of-yours", "progress": 1}})
            self._answer(request_id, "ok")
            return
        steps, interval = int(arguments.get("steps", 3)), float(arguments.get("interval", 0.05))
        for step in range(1, steps + 1):
            time.sleep(interval)
            if step <= 4:
                self.log(LEVELS[[0, 1, 3, 4][step - 1]], {"step": step, "of": steps})
            if token is not None:
                self.send({"jsonrpc": "2.0", "method": "notifications/progress",
                           "params": {"progressToken": token, "progress": step, "total": steps,
                                      "message": f"step {step}"}})
        self._answer(request_id, f"done after {steps} steps")

    def _answer(self, request_id: Any, text: str) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id,
                   "result": {"content": [{"type": "text", "text": text}], "isError": False}})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", help="append every request received to this file")
    server = Server(parser.parse_args().requests)
    for line in sys.stdin:
        if line.strip():
            server.handle(json.loads(line))


if __name__ == "__main__":
    main()
