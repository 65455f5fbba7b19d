"""A small MCP server (stdio, standard library only, 2025-11-25) whose tools must run as
tasks (``execution.taskSupport: "required"``), with a short ``pollInterval`` (20 ms):
``python3 examples/task_server.py``. toolrelay's tests use it too.

Tools (a task advances one step per ``tasks/get`` poll):

  slow_sum(a, b)    completes after 3 polls with the sum as text
  breaks()          fails after 1 poll; tasks/result is an ``isError`` result
  forever()         never ends (only ``tasks/cancel`` stops it)
  asks()            goes ``input_required`` at once; on ``tasks/result`` it asks an
                    elicitation carrying the task's related-task meta and completes with
                    the answer
  echo(text)        ``taskSupport: "optional"``: answers plainly (and says if it got a task)
  seen()            plain: every task request received so far, as JSON
                    (``[[method, taskId], ...]``)

``--no-tasks`` leaves the tasks capability out of initialize. A tools/call of a required
tool without ``params.task`` gets the error the spec suggests (-32600).
"""

from __future__ import annotations

import itertools
import json
import sys
import uuid

REQUIRED = {"taskSupport": "required"}
TOOLS = [
    {"name": "slow_sum", "description": "Add two numbers, slowly (a task).", "execution": REQUIRED,
     "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                     "required": ["a", "b"]}},
    {"name": "breaks", "description": "A task that fails.", "execution": REQUIRED,
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "forever", "description": "A task that never ends.", "execution": REQUIRED,
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "asks", "description": "A task that asks the user.", "execution": REQUIRED,
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "echo", "description": "Echo text back.", "execution": {"taskSupport": "optional"},
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
    {"name": "seen", "description": "The task requests received.",
     "inputSchema": {"type": "object", "properties": {}}},
]
STEPS = {"slow_sum": 3, "breaks": 1, "forever": None, "asks": 0}
TASKS: dict[str, dict] = {}
SEEN: list[list] = []
IDS = itertools.count(1000)
BACKLOG: list[dict] = []


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(value: str, *, error: bool = False) -> dict:
    result: dict = {"content": [{"type": "text", "text": value}]}
    if error:
        result["isError"] = True
    return result


def read() -> dict | None:
    while True:
        line = sys.stdin.readline()
        if not line:
            return None
        if line.strip():
            return json.loads(line)


def task_json(task: dict) -> dict:
    return {"taskId": task["id"], "status": task["status"], "createdAt": "2025-11-25T00:00:00Z",
            "lastUpdatedAt": "2025-11-25T00:00:00Z", "ttl": task["ttl"], "pollInterval": 20}


def create(name: str, arguments: dict, ttl: int) -> dict:
    task = {"id": str(uuid.uuid4()), "tool": name, "arguments": arguments, "ttl": ttl, "polls": 0,
            "status": "input_required" if name == "asks" else "working", "result": None}
    TASKS[task["id"]] = task
    return {"task": task_json(task)}


def advance(task: dict) -> None:
    """One poll's worth of work."""
    if task["status"] != "working":
        return
    task["polls"] += 1
    steps = STEPS[task["tool"]]
    if steps is None or task["polls"] < steps:
        return
    if task["tool"] == "slow_sum":
        arguments = task["arguments"]
        task["status"], task["result"] = "completed", text(str(arguments["a"] + arguments["b"]))
    elif task["tool"] == "breaks":
        task["status"], task["result"] = "failed", text("the job broke", error=True)


def ask_user(task: dict) -> dict:
    """An elicitation for the task, answered before anything else is handled."""
    mcp_id = next(IDS)
    schema = {"type": "object", "properties": {"colour": {"type": "string", "default": "blue"}}}
    related = {"io.modelcontextprotocol/related-task": {"taskId": task["id"]}}
    send({"jsonrpc": "2.0", "id": mcp_id, "method": "elicitation/create",
          "params": {"message": "Which colour?", "_meta": related, "requestedSchema": schema}})
    while True:
        message = read()
        if message is None:
            sys.exit(0)
        if message.get("id") == mcp_id and "method" not in message:
            return message
        BACKLOG.append(message)


def task_request(method: str, params: dict) -> dict:
    task = TASKS.get(params.get("taskId"))
    SEEN.append([method, params.get("taskId")])
    if task is None:
        raise LookupError("Failed to retrieve task: Task not found")
    if method == "tasks/get":
        advance(task)
        return task_json(task)
    if method == "tasks/cancel":
        if task["status"] in ("completed", "failed", "cancelled"):
            raise LookupError(f"Cannot cancel task {task['id']}: it is {task['status']}")
        task["status"] = "cancelled"
        return task_json(task)
    if task["tool"] == "asks" and task["result"] is None:
        answer = ask_user(task)
        task["status"], task["result"] = "completed", text(json.dumps(answer.get("result")))
    while task["status"] == "working" and STEPS[task["tool"]] is not None:
        advance(task)  # tasks/result blocks until the task ends: here, it just ends
    related = {"io.modelcontextprotocol/related-task": {"taskId": task["id"]}}
    return {**(task["result"] or text("cancelled", error=True)), "_meta": related}


def call(params: dict) -> dict:
    name, arguments = params.get("name"), params.get("arguments") or {}
    task = params.get("task")
    if name == "echo":
        return text(f"{arguments.get('text')} (as a task: {isinstance(task, dict)})")
    if name == "seen":
        return text(json.dumps(SEEN))
    if name not in STEPS:
        raise KeyError(f"Unknown tool: {name}")
    if not isinstance(task, dict):
        raise PermissionError("Task augmentation required for tools/call requests")
    return create(name, arguments, int(task.get("ttl", 60000)))


def handle(message: dict, with_tasks: bool) -> None:
    method, mcp_id, params = message.get("method"), message.get("id"), message.get("params") or {}
    if mcp_id is None:
        return
    try:
        if method == "initialize":
            capabilities: dict = {"tools": {}}
            if with_tasks:
                capabilities["tasks"] = {"cancel": {}, "requests": {"tools": {"call": {}}}}
            result = {"protocolVersion": params.get("protocolVersion"), "capabilities": capabilities,
                      "serverInfo": {"name": "task-server", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            result = call(params)
        elif method in ("tasks/get", "tasks/result", "tasks/cancel"):
            result = task_request(method, params)
        elif method == "ping":
            result = {}
        else:
            raise NotImplementedError(f"Method not found: {method}")
    except NotImplementedError as exc:
        send({"jsonrpc": "2.0", "id": mcp_id, "error": {"code": -32601, "message": str(exc)}})
        return
    except PermissionError as exc:
        send({"jsonrpc": "2.0", "id": mcp_id, "error": {"code": -32600, "message": str(exc)}})
        return
    except (LookupError, KeyError) as exc:
        send({"jsonrpc": "2.0", "id": mcp_id, "error": {"code": -32602, "message": str(exc).strip("'")}})
        return
    send({"jsonrpc": "2.0", "id": mcp_id, "result": result})


def main() -> None:
    with_tasks = "--no-tasks" not in sys.argv
    while True:
        message = BACKLOG.pop(0) if BACKLOG else read()
        if message is None:
            return
        handle(message, with_tasks)


if __name__ == "__main__":
    main()
