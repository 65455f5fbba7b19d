"""A stdlib MCP stdio server that asks its client things during a tool call: roots, sampling,
elicitation, each also as a client-side task (2025-11-25), and tells what it got back.

Tools (all ``readOnlyHint: true``; each answers with the client's reply as JSON text,
``{"result": ...}`` or ``{"error": ...}``, exactly as it arrived):

  capabilities()                       the protocol version and client capabilities of initialize
  roots()                              asks ``roots/list``
  roots_changes()                      how many ``notifications/roots/list_changed`` arrived
  sample(prompt, max_tokens, system, hints, tools, task)
                                       asks ``sampling/createMessage`` (``tools``: offers one tool
                                       ``lookup``; ``task``: as a task, then polls ``tasks/get``
                                       and fetches ``tasks/result``, answering with the last)
  elicit(message, schema, url, task)   asks ``elicitation/create``: a form (``schema``, default:
                                       name without a default, age 30, color enum "red") or, with
                                       ``url``, URL mode; ``task`` as for sample
  sample_many(count)                   sends ``count`` ``sampling/createMessage`` requests at once, then
                                       waits for every answer: ``{"answered": n, "errors": {message: n}}``
  ask(method, params)                  asks anything else
"""

from __future__ import annotations

import itertools
import json
import sys
import time

FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name"},
        "age": {"type": "integer", "minimum": 0, "default": 30},
        "color": {"type": "string", "enum": ["red", "green"], "default": "red"},
    },
    "required": ["name"],
}
LOOKUP = {"name": "lookup", "description": "Look a word up.",
          "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}}
TOOLS = ["capabilities", "roots", "roots_changes", "sample", "elicit", "sample_many", "ask"]
STATE: dict = {"capabilities": None, "version": None, "roots_changes": 0}
IDS = itertools.count(1)
BACKLOG: list[dict] = []  # what arrived while a call waited for the client: handled after it


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(value: object) -> dict:
    return {"content": [{"type": "text", "text": json.dumps(value)}]}


def read() -> dict | None:
    while True:
        line = sys.stdin.readline()
        if not line:
            return None
        if line.strip():
            message = json.loads(line)
            if message.get("method") == "notifications/roots/list_changed":
                STATE["roots_changes"] += 1
                continue
            return message


def request(method: str, params: dict | None = None) -> dict:
    """Ask the client; its answer (``result`` or ``error``) as received."""
    mid = f"srv-{next(IDS)}"
    message = {"jsonrpc": "2.0", "id": mid, "method": method}
    send(message | ({"params": params} if params is not None else {}))
    while (message := read()) is not None:
        if message.get("id") == mid and "method" not in message:
            return {k: v for k, v in message.items() if k in ("result", "error")}
        BACKLOG.append(message)
    sys.exit(0)


def many(method: str, params: dict, count: int) -> dict:
    """Ask ``count`` times at once (each its own id), then wait for every answer."""
    waiting = {f"srv-{next(IDS)}" for _ in range(count)}
    for mid in sorted(waiting):
        send({"jsonrpc": "2.0", "id": mid, "method": method, "params": params})
    answered, errors = 0, {}
    while waiting and (message := read()) is not None:
        if message.get("id") in waiting and "method" not in message:
            waiting.discard(message["id"])
            if "error" in message:
                said = str(message["error"].get("message"))
                errors[said] = errors.get(said, 0) + 1
            else:
                answered += 1
        else:
            BACKLOG.append(message)
    if waiting:
        sys.exit(0)
    return {"answered": answered, "errors": errors}


def as_task(method: str, params: dict) -> dict:
    """Ask with ``params.task``, poll the task, fetch its result: every answer, in order."""
    created = request(method, {**params, "task": {"ttl": 60000}})
    answers = [created]
    task = (created.get("result") or {}).get("task")
    if not task:
        return {"answers": answers}
    while task.get("status") == "working":
        time.sleep(0.05)
        polled = request("tasks/get", {"taskId": task["taskId"]})
        answers.append(polled)
        task = polled.get("result") or {}
    answers.append(request("tasks/result", {"taskId": task["taskId"]}))
    listed = request("tasks/list", {})
    return {"answers": answers, "listed": len((listed.get("result") or {}).get("tasks", []))}


def sample(args: dict) -> dict:
    params: dict = {
        "messages": [{"role": "user", "content": {"type": "text", "text": args.get("prompt", "Say hi")}}],
        "maxTokens": int(args.get("max_tokens", 50)),
        "systemPrompt": args.get("system", "You are terse."),
        "modelPreferences": {"hints": [{"name": h} for h in args.get("hints", ["claude-3-sonnet"])]},
    }
    if args.get("tools"):
        params["tools"] = [LOOKUP]
    return as_task("sampling/createMessage", params) if args.get("task") else request(
        "sampling/createMessage", params)


def elicit(args: dict) -> dict:
    if args.get("url"):
        params = {"mode": "url", "message": args.get("message", "Sign in, please."), "url": args["url"],
                  "elicitationId": "el-1"}
    else:
        params = {"message": args.get("message", "Tell me about you."),
                  "requestedSchema": args.get("schema", FORM)}
    ask = as_task if args.get("task") else request
    return ask("elicitation/create", params)


def call(name: str, args: dict) -> dict:
    if name == "capabilities":
        return text({"protocolVersion": STATE["version"], "capabilities": STATE["capabilities"]})
    if name == "roots":
        return text(request("roots/list"))
    if name == "roots_changes":
        return text(STATE["roots_changes"])
    if name == "sample":
        return text(sample(args))
    if name == "elicit":
        return text(elicit(args))
    if name == "sample_many":
        prompt = {"role": "user", "content": {"type": "text", "text": "Say hi"}}
        asked = {"messages": [prompt], "maxTokens": 10}
        return text(many("sampling/createMessage", asked, int(args["count"])))
    return text(request(str(args.get("method", "ping")), args.get("params")))


def handle(message: dict) -> None:
    method, mid, params = message.get("method"), message.get("id"), message.get("params") or {}
    if mid is None or method is None:
        return
    if method == "initialize":
        STATE["capabilities"], STATE["version"] = params.get("capabilities"), params.get("protocolVersion")
        result = {"protocolVersion": params.get("protocolVersion"), "capabilities": {"tools": {}},
                  "serverInfo": {"name": "asking", "version": "1"}}
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": [{"name": n, "description": f"{n} tool", "annotations": {"readOnlyHint": True},
                             "inputSchema": {"type": "object"}} for n in TOOLS]}
    elif method == "tools/call" and params.get("name") in TOOLS:
        result = call(params["name"], params.get("arguments") or {})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"no {method}"}})
        return
    send({"jsonrpc": "2.0", "id": mid, "result": result})


def main() -> None:
    while (message := BACKLOG.pop(0) if BACKLOG else read()) is not None:
        handle(message)


if __name__ == "__main__":
    main()
