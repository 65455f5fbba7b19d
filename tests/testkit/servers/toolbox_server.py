"""A stdlib MCP stdio server that misbehaves on request, for the client's hostile cases.

Options:
  --record FILE          append every line received on stdin to FILE, then {"toolbox":
                         "stdin closed"} when stdin ends
  --garbage              print non-JSON lines on stdout (a banner, and before every answer)
  --answer-version V     answer initialize with protocol version V, whatever was asked
  --ignore-term          ignore SIGTERM and stay alive after stdin closes
  --page-size N          split tools/list into pages of N tools (nextCursor)
  --stderr TEXT          write TEXT to stderr at start
  --exit-at-start CODE   write to stderr and exit with CODE before reading anything

Tools: echo(text), crash(code, message), hang(), huge(megabytes), env(), pid(),
spawn(), sleep(seconds), list_changed(), ask_client(method), stop_reading() (closes its
stdin, records {"toolbox": "stopped reading"}, never answers), malformed(shape): an answer
with the right id that is not a JSON-RPC response (shape: result_not_object, the
default; no_result; both; error_without_code; jsonrpc_1).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time

TOOL_NAMES = ("echo", "crash", "hang", "huge", "env", "pid", "spawn", "sleep", "list_changed",
              "ask_client", "malformed", "stop_reading")
OPTIONS = argparse.Namespace()
MALFORMED = {
    "result_not_object": {"result": "not an object"},
    "no_result": {},
    "both": {"result": {"content": []}, "error": {"code": -32603, "message": "and an error"}},
    "error_without_code": {"error": {"message": "no code"}},
    "jsonrpc_1": {"jsonrpc": "1.0", "result": {"content": []}},
}


def send(message: dict) -> None:
    if OPTIONS.garbage:
        sys.stdout.write("debug: about to answer\n")
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(value: str) -> dict:
    return {"content": [{"type": "text", "text": value}]}


def note(what: str) -> None:
    """A line of the server's own in the record file (not a message it received)."""
    if OPTIONS.record:
        with open(OPTIONS.record, "a") as record:
            record.write(json.dumps({"toolbox": what}) + "\n")


def read_message() -> dict | None:
    line = sys.stdin.readline()
    if not line:
        return None
    if OPTIONS.record:
        with open(OPTIONS.record, "a") as record:
            record.write(line)
    return json.loads(line) if line.strip() else {}


def call_tool(name: str, args: dict) -> dict | None:
    """A tool's result, or None when the tool does not answer."""
    if name == "echo":
        return text(str(args.get("text", "")))
    if name == "crash":
        sys.stderr.write(str(args.get("message", "crashing on purpose")) + "\n")
        sys.stderr.flush()
        os._exit(int(args.get("code", 1)))
    if name == "hang":
        return None
    if name == "stop_reading":
        os.close(0)
        note("stopped reading")
        time.sleep(300)
        return None
    if name == "huge":
        return text("x" * int(float(args.get("megabytes", 50)) * 1024 * 1024))
    if name == "env":
        return text(json.dumps(dict(os.environ)))
    if name == "pid":
        return text(str(os.getpid()))
    if name == "spawn":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        return text(str(child.pid))
    if name == "sleep":
        time.sleep(float(args.get("seconds", 1)))
        return text("slept")
    if name == "list_changed":
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return text("changed")
    if name == "ask_client":
        return ask_client(str(args.get("method", "ping")))
    raise KeyError(name)


def ask_client(method: str) -> dict:
    """Send the client a request and return its answer verbatim (as JSON text)."""
    send({"jsonrpc": "2.0", "id": "srv-1", "method": method})
    while True:
        message = read_message()
        if message is None:
            sys.exit(0)
        if message.get("id") == "srv-1" and "method" not in message:
            return text(json.dumps(message))


def tools_page(cursor: str | None) -> dict:
    tools = [{"name": n, "description": f"{n} tool", "inputSchema": {"type": "object"}} for n in TOOL_NAMES]
    size = OPTIONS.page_size or len(tools)
    start = int(cursor or 0)
    page: dict = {"tools": tools[start:start + size]}
    if start + size < len(tools):
        page["nextCursor"] = str(start + size)
    return page


def handle(message: dict) -> None:
    method, mid, params = message.get("method"), message.get("id"), message.get("params") or {}
    if mid is None or method is None:
        return  # notifications and answers need no reply
    if method == "initialize":
        version = OPTIONS.answer_version or params.get("protocolVersion")
        result = {"protocolVersion": version, "capabilities": {"tools": {"listChanged": True}},
                  "serverInfo": {"name": "toolbox", "version": "1"}, "instructions": "Test tools."}
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = tools_page(params.get("cursor"))
    elif method == "tools/call" and params.get("name") == "malformed":
        shape = (params.get("arguments") or {}).get("shape", "result_not_object")
        send({"jsonrpc": "2.0", "id": mid, **MALFORMED[shape]})
        return
    elif method == "tools/call" and params.get("name") in TOOL_NAMES:
        result = call_tool(params["name"], params.get("arguments") or {})
        if result is None:
            return
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"no {method}"}})
        return
    send({"jsonrpc": "2.0", "id": mid, "result": result})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record")
    parser.add_argument("--garbage", action="store_true")
    parser.add_argument("--answer-version")
    parser.add_argument("--ignore-term", action="store_true")
    parser.add_argument("--page-size", type=int)
    parser.add_argument("--stderr")
    parser.add_argument("--exit-at-start", type=int)
    parser.parse_args(namespace=OPTIONS)
    if OPTIONS.stderr:
        sys.stderr.write(OPTIONS.stderr + "\n")
        sys.stderr.flush()
    if OPTIONS.exit_at_start is not None:
        sys.stderr.write("fatal: cannot start\n")
        sys.exit(OPTIONS.exit_at_start)
    if OPTIONS.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if OPTIONS.garbage:
        sys.stdout.write("Welcome to the toolbox server v1 (this banner is not JSON)\n")
    while (message := read_message()) is not None:
        handle(message)
    note("stdin closed")
    while OPTIONS.ignore_term:  # stdin closed: a well-behaved server would exit now
        time.sleep(1)


if __name__ == "__main__":
    main()
