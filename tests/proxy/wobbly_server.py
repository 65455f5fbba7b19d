"""A stdlib MCP stdio server for the proxy's tests: ``echo``, ``wait``, ``report`` and ``crash``.

``echo(text)`` answers at once; ``wait(seconds)`` answers after that long (calls run in a
thread each) and notes a ``notifications/cancelled`` naming it in the file ``--log``;
``report(steps)`` sends, per step, ``notifications/progress`` (with the call's token, if
it has one) and a ``notifications/message`` (``info``, and a ``debug`` one), then answers;
``ask(method, params)`` asks its client that request during the call and answers with
the client's answer as JSON;
``crash()`` exits the process before answering (code 7), as a server that dies mid-call,
writing its ``API_TOKEN`` to stderr first.

    python wobbly_server.py [--log FILE]
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import sys
import threading
import time
from typing import Any

TOOLS = [
    {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "wait", "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}}},
    {"name": "crash", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "report", "inputSchema": {"type": "object", "properties": {"steps": {"type": "integer"}}}},
    {"name": "ask", "inputSchema": {"type": "object", "properties": {"method": {"type": "string"},
                                                                     "params": {"type": "object"}}}},
]
LOCK = threading.Lock()
ASKED: dict[Any, queue.Queue[dict[str, Any]]] = {}
"""Our requests to the client awaiting its answer, by id."""
ASK_IDS = itertools.count(100)


def send(message: dict[str, Any]) -> None:
    with LOCK:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def note(text: str) -> None:
    if "--log" in sys.argv:
        with open(sys.argv[sys.argv.index("--log") + 1], "a", encoding="utf-8") as log:
            log.write(text + "\n")


def call(request_id: Any, params: dict[str, Any]) -> None:
    name, arguments = params.get("name"), params.get("arguments") or {}
    if name == "crash":  # saying its token on the way out, as a careless server might
        sys.stderr.write(f"dying; token was {os.environ.get('API_TOKEN', '')}\n")
        sys.stderr.flush()
        os._exit(7)
    if name == "wait":
        time.sleep(float(arguments.get("seconds", 1)))
        text = "waited"
    elif name == "report":
        steps = int(arguments.get("steps", 2))
        token = (params.get("_meta") or {}).get("progressToken")
        for step in range(1, steps + 1):
            if token is not None:
                progress = {"progressToken": token, "progress": step, "total": steps, "message": f"{step}"}
                send({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
            for level in ("debug", "info"):
                send({"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": level, "logger": "wobbly", "data": f"{level} {step}"}})
        text = f"reported {steps}"
    elif name == "ask":
        ask_id = next(ASK_IDS)
        waiting = ASKED[ask_id] = queue.Queue()
        send({"jsonrpc": "2.0", "id": ask_id, "method": arguments["method"],
              "params": arguments.get("params", {})})
        answer = waiting.get(timeout=30)
        text = json.dumps(answer.get("result", answer.get("error")), sort_keys=True)
    else:
        text = str(arguments.get("text", ""))
    send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}})


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, params, request_id = message.get("method"), message.get("params") or {}, message.get("id")
        if method == "notifications/cancelled":
            note(f"cancelled {params.get('requestId')}")
        if method is None and request_id in ASKED:  # the client's answer to our ask
            ASKED.pop(request_id).put(message)
            continue
        if request_id is None:
            continue
        if method == "initialize":
            result = {"protocolVersion": params.get("protocolVersion"),
                      "capabilities": {"tools": {}, "logging": {}},
                      "serverInfo": {"name": "wobbly", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "logging/setLevel":
            result = {}
        elif method == "tools/call":
            threading.Thread(target=call, args=(request_id, params), daemon=True).start()
            continue
        else:
            error = {"code": -32601, "message": "Method not found"}
            send({"jsonrpc": "2.0", "id": request_id, "error": error})
            continue
        send({"jsonrpc": "2.0", "id": request_id, "result": result})


if __name__ == "__main__":
    main()
