"""A 2025-11-25 stdio server whose tasks are numbered ``task-1``, ``task-2``, ... in every
process (two of them behind one proxy both say ``task-1``), with ``tasks/list`` and a
``notifications/tasks/status`` on every status change. Standard library only.

Tools (``execution.taskSupport`` in brackets):
  count(n, label?, settle?)  [required]  completes after n ``tasks/get`` polls with "counted N by
                         SERVER" (n = 0: completed as it is made); its ``tasks/result``
                         answers ``settle`` seconds late
  ask(hold?, method?)  [optional]  goes ``input_required``; on ``tasks/result`` it asks an
                         elicitation (or ``method``: ``sampling/createMessage``) with the task's
                         related-task meta and completes with the answer; with ``hold``, an
                         answer that accepts nothing leaves it ``working`` until ``tasks/cancel``
  wait()     [required]  never ends until ``tasks/cancel`` (its ``tasks/result`` waits till then)
  vanish()   [required]  its first ``tasks/get`` says ``working``; then the server forgets it
                         (``tasks/get`` answers -32602 ``Failed to retrieve task: Task not found``,
                         naming the ``TASK_SESSION`` of its environment)
  crash()    [plain]     the process exits without answering
``python3 task_upstream.py NAME``: NAME is said in the results.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import time

NAME = sys.argv[1] if len(sys.argv) > 1 else "upstream"
RELATED = "io.modelcontextprotocol/related-task"
TOOLS = [
    {"name": "count", "description": "Count polls (a task).", "execution": {"taskSupport": "required"},
     "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}, "label": {"type": "string"},
                                                                     "settle": {"type": "number"}},
                     "required": ["n"]}},
    {"name": "ask", "description": "Ask the user (a task).", "execution": {"taskSupport": "optional"},
     "inputSchema": {"type": "object", "properties": {"hold": {"type": "boolean"},
                                                      "method": {"type": "string"}}}},
    {"name": "wait", "description": "Never ends (a task).", "execution": {"taskSupport": "required"},
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "vanish", "description": "Forgotten after one poll (a task).",
     "execution": {"taskSupport": "required"}, "inputSchema": {"type": "object", "properties": {}}},
    {"name": "crash", "description": "Exits at once (a plain tool).", "inputSchema": {"type": "object"}},
]
TASKS: dict[str, dict] = {}
NUMBERS = itertools.count(1)
IDS = itertools.count(5000)
BACKLOG: list[dict] = []
FORGOTTEN: set[str] = set()


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def read() -> dict | None:
    while True:
        line = sys.stdin.readline()
        if not line:
            return None
        if line.strip():
            return json.loads(line)


def task_json(task: dict) -> dict:
    found = {"taskId": task["id"], "status": task["status"], "createdAt": "2025-11-25T00:00:00Z",
             "lastUpdatedAt": "2025-11-25T00:00:00Z", "ttl": task["ttl"], "pollInterval": 20}
    if task.get("message"):
        found["statusMessage"] = task["message"]
    return found


def set_status(task: dict, status: str, message: str = "") -> None:
    task["status"], task["message"] = status, message
    send({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": task_json(task)})


def text(value: str) -> dict:
    return {"content": [{"type": "text", "text": value}]}


def ask_host(task: dict) -> dict:
    """Ask the task's question (one request; the server reads nothing else meanwhile)."""
    mcp_id = next(IDS)
    meta = {RELATED: {"taskId": task["id"]}}
    if task["method"] == "sampling/createMessage":
        params = {"messages": [{"role": "user", "content": {"type": "text", "text": "Which colour?"}}],
                  "maxTokens": 10, "_meta": meta}
    else:
        params = {"message": "Which colour?", "_meta": meta,
                  "requestedSchema": {"type": "object", "properties": {"colour": {"type": "string"}}}}
    send({"jsonrpc": "2.0", "id": mcp_id, "method": task["method"], "params": params})
    while True:
        message = read()
        if message is None:
            sys.exit(0)
        if message.get("id") == mcp_id and "method" not in message:
            return message
        BACKLOG.append(message)


def on_task(method: str, params: dict, mcp_id: int | str) -> dict | None:
    task = TASKS.get(params.get("taskId"))
    if task is None and params.get("taskId") in FORGOTTEN:
        session = os.environ.get("TASK_SESSION", "-")
        raise LookupError(f"Failed to retrieve task: Task not found (forgotten in session {session})")
    if task is None:
        raise LookupError("Failed to retrieve task: Task not found")
    if method == "tasks/get":
        if task["tool"] == "vanish":
            del TASKS[task["id"]]  # answered once more, then forgotten
            FORGOTTEN.add(task["id"])
        if task["status"] == "working" and task["tool"] == "count":
            task["polls"] += 1
            if task.get("token") is not None:  # valid until the task ends
                told = {"progressToken": task["token"], "progress": task["polls"], "total": task["n"]}
                send({"jsonrpc": "2.0", "method": "notifications/progress", "params": told})
            if task["polls"] >= task["n"]:
                task["result"] = text(f"counted {task['n']} by {NAME}")
                set_status(task, "completed")
        return task_json(task)
    if method == "tasks/cancel":
        if task["status"] in ("completed", "failed", "cancelled"):
            raise LookupError(f"Cannot cancel task {task['id']}: it is {task['status']}")
        set_status(task, "cancelled", "cancelled by request")
        for waiting in task.pop("waiting", []):  # the tasks/result requests that waited for its end
            said = {**text("cancelled"), "isError": True, "_meta": {RELATED: {"taskId": task["id"]}}}
            send({"jsonrpc": "2.0", "id": waiting, "result": said})
        return task_json(task)
    if task["tool"] == "ask" and task["status"] == "input_required":  # tasks/result
        answer = ask_host(task)
        said = answer.get("result", answer.get("error"))
        if task["hold"] and (answer.get("result") or {}).get("action") != "accept":
            set_status(task, "working", "no colour given")  # till cancelled
        else:
            task["result"] = text(f"{NAME} heard {json.dumps(said, sort_keys=True)}")
            set_status(task, "completed")
    if task["result"] is None and task["status"] == "working":
        task.setdefault("waiting", []).append(mcp_id)
        return None  # tasks/result waits for the task's end (answered when it is cancelled)
    if task["result"] is None:
        raise LookupError(f"task {task['id']} has no result ({task['status']})")
    time.sleep(task["settle"])
    return {**task["result"], "_meta": {RELATED: {"taskId": task["id"]}}}


def call(params: dict) -> dict:
    name, arguments, asked = params.get("name"), params.get("arguments") or {}, params.get("task")
    if name == "crash":
        sys.exit(3)
    if not isinstance(asked, dict):
        if name == "ask":
            return text(f"{NAME} answered plainly")
        raise PermissionError("Task augmentation required for tools/call requests")
    token = (params.get("_meta") or {}).get("progressToken")
    task = {"id": f"task-{next(NUMBERS)}", "tool": name, "n": int(arguments.get("n", 1)), "polls": 0,
            "token": token, "settle": float(arguments.get("settle", 0)),
            "ttl": int(asked.get("ttl", 60000)), "status": "working", "message": "", "result": None,
            "hold": bool(arguments.get("hold")), "method": arguments.get("method", "elicitation/create")}
    TASKS[task["id"]] = task
    if name == "ask":
        task["status"], task["message"] = "input_required", "needs a colour"
    if name == "count" and task["n"] == 0:  # ended as soon as made
        task["status"], task["result"] = "completed", text(f"counted 0 by {NAME}")
    return {"task": task_json(task)}


def handle(message: dict) -> None:
    method, mcp_id, params = message.get("method"), message.get("id"), message.get("params") or {}
    if mcp_id is None:
        return
    try:
        if method == "initialize":
            result: dict = {"protocolVersion": "2025-11-25", "serverInfo": {"name": NAME, "version": "1"},
                            "capabilities": {"tools": {}, "tasks": {"list": {}, "cancel": {},
                                                                    "requests": {"tools": {"call": {}}}}}}
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            result = call(params)
        elif method == "tasks/list":
            result = {"tasks": [task_json(task) for task in TASKS.values()]}
        elif method in ("tasks/get", "tasks/result", "tasks/cancel"):
            answered = on_task(method, params, mcp_id)
            if answered is None:
                return  # answered later
            result = answered
        elif method == "ping":
            result = {}
        else:
            said = {"code": -32601, "message": f"Method not found: {method}"}
            send({"jsonrpc": "2.0", "id": mcp_id, "error": said})
            return
    except PermissionError as exc:
        send({"jsonrpc": "2.0", "id": mcp_id, "error": {"code": -32600, "message": str(exc)}})
        return
    except LookupError as exc:
        send({"jsonrpc": "2.0", "id": mcp_id, "error": {"code": -32602, "message": str(exc)}})
        return
    send({"jsonrpc": "2.0", "id": mcp_id, "result": result})


def main() -> None:
    while True:
        message = BACKLOG.pop(0) if BACKLOG else read()
        if message is None:
            return
        handle(message)


if __name__ == "__main__":
    main()
