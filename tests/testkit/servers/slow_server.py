"""A stdlib-only MCP stdio server with one read-only tool that takes its time: ``look``.

``look(what) -> "looked at WHAT"`` answers after ``--seconds`` (3 by default), and is
annotated ``readOnlyHint: true``, so toolrelay may start it as soon as the model's item
for it has streamed. Calls run concurrently (a thread each): two calls take 3 s, not 6.

    python slow_server.py [--seconds 3]        (stdio)
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import Any

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LOOK_TOOL = {
    "name": "look",
    "description": "Look at something (slowly) and say what was seen.",
    "inputSchema": {"type": "object", "properties": {"what": {"type": "string"}}, "required": ["what"]},
    "annotations": {"readOnlyHint": True},
}


class Server:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        with self.lock:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

    def handle(self, message: dict[str, Any]) -> None:
        request_id, method = message.get("id"), str(message.get("method"))
        if request_id is None:
            return  # a notification (initialized, cancelled): nothing to answer
        params = message.get("params") or {}
        if method == "tools/call":
            threading.Thread(target=self._call, args=(request_id, params), daemon=True).start()
            return
        result = self._result(method, params)
        if result is None:
            self.send({"jsonrpc": "2.0", "id": request_id,
                       "error": {"code": -32601, "message": f"Method not found: {method}"}})
        else:
            self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _result(self, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        if method == "initialize":
            asked = params.get("protocolVersion")
            return {"protocolVersion": asked if asked in HANDSHAKE_VERSIONS else "2025-11-25",
                    "capabilities": {"tools": {"listChanged": False}},
                    "serverInfo": {"name": "bench-slow", "version": "0"}}
        if method == "tools/list":
            return {"tools": [LOOK_TOOL]}
        if method == "ping":
            return {}
        return None

    def _call(self, request_id: Any, params: dict[str, Any]) -> None:
        time.sleep(self.seconds)
        what = str((params.get("arguments") or {}).get("what", ""))
        self.send({"jsonrpc": "2.0", "id": request_id,
                   "result": {"content": [{"type": "text", "text": f"looked at {what}"}], "isError": False}})


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="how long each call takes")
    server = Server(parser.parse_args().seconds)
    for line in sys.stdin:
        if line.strip():
            server.handle(json.loads(line))


if __name__ == "__main__":
    main()
