"""A small MCP server (stdio, standard library only) that asks its client things during its
tool calls, to try what a client offers servers: ``python3 examples/asking_server.py``.

Tools (all read-only):

  where()            asks ``roots/list``: the directories the client lets it work in
  summarize(text)    asks ``sampling/createMessage``: the client's model summarizes ``text``
  sign_up()          asks ``elicitation/create``: a form (name, no default; plan, default
                     "free"; newsletter, default false)

Each answers with what the client replied, or with the client's error as an ``isError``
result. Run it from toolrelay with a config such as
``{"mcpServers": {"ask": {"command": "python3", "args": ["examples/asking_server.py"]}}}``.
"""

from __future__ import annotations

import itertools
import json
import sys
from typing import Any

FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name"},
        "plan": {"type": "string", "title": "Plan", "enum": ["free", "pro"], "default": "free"},
        "newsletter": {"type": "boolean", "title": "Newsletter", "default": False},
    },
    "required": ["plan"],
}
READ_ONLY = {"readOnlyHint": True}
NO_ARGUMENTS = {"type": "object", "properties": {}}
TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
TOOLS = [
    {"name": "where", "description": "Lists the client's roots.", "inputSchema": NO_ARGUMENTS},
    {"name": "summarize", "description": "Asks the client's model to summarize a text.", "inputSchema": TEXT},
    {"name": "sign_up", "description": "Asks the user to fill in a form.", "inputSchema": NO_ARGUMENTS},
]
for tool in TOOLS:
    tool["annotations"] = READ_ONLY
IDS = itertools.count(1)


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Send a request to the client and wait for its answer (``result`` or ``error``)."""
    asked = f"ask-{next(IDS)}"
    send({"jsonrpc": "2.0", "id": asked, "method": method, "params": params})
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("id") == asked and "method" not in message:
            return dict(message)
    raise SystemExit(0)  # the client went away


def tool_result(answer: dict[str, Any], show: Any) -> dict[str, Any]:
    if "error" in answer:
        refused = f"the client refused: {answer['error']['message']}"
        return {"content": [{"type": "text", "text": refused}], "isError": True}
    return {"content": [{"type": "text", "text": show(answer["result"])}]}


def show_roots(result: dict[str, Any]) -> str:
    return "roots: " + ", ".join(root["uri"] for root in result["roots"])


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    if name == "where":
        return tool_result(ask("roots/list", {}), show_roots)
    if name == "summarize":
        messages = [{"role": "user", "content": {"type": "text", "text": f"Summarize: {arguments['text']}"}}]
        answer = ask("sampling/createMessage", {"messages": messages, "maxTokens": 100})
        return tool_result(answer, lambda r: f"{r['model']} says: {r['content'].get('text', '')}")
    answer = ask("elicitation/create", {"message": "Sign up, please.", "requestedSchema": FORM})
    return tool_result(answer, lambda r: f"{r['action']}: {json.dumps(r.get('content', {}))}")


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "asking-example", "version": "1.0"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return call(params["name"], params.get("arguments") or {})
    return {} if method == "ping" else None


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # a notification, or a stray answer
        result = answer(message)
        if result is None:
            error = {"code": -32601, "message": "Method not found"}
            send({"jsonrpc": "2.0", "id": message["id"], "error": error})
        else:
            send({"jsonrpc": "2.0", "id": message["id"], "result": result})


if __name__ == "__main__":
    main()
