"""A stdio server whose tasks cost next to nothing, in whichever era its client speaks: a
2025-11-25 handshake (``tasks`` with ``list``) or 2026-07-28 requests declaring the tasks
extension (SEP-2663). Standard library only: enough tasks to pass the proxy's cap are made
in a second or two.

Tools:
  quick(text)  a task (2025-11-25: [optional]; 2026-07-28: when the extension is declared)
               ``working`` when made, ``completed`` whenever it is shown again (``tasks/get``,
               ``tasks/list``); its result "quick TEXT"
  ask_now()    2025-11-25 only: a task [required], ``input_required`` when made, that asks an
               elicitation (its related-task meta naming it) in the same breath as the answer
               to the ``tools/call`` that made it; it completes with the answer
  ask_later()  2025-11-25 only: a task [required], ``input_required`` when made, that asks an
               elicitation (its related-task meta naming it) right after the server next
               answers ``tasks/list``: no ``tasks/get`` or ``tasks/result`` of it is pending
               then; it completes with the answer
A ``tasks/result`` of a task that waits for its answer is answered once the task ends.
"""

from __future__ import annotations

import itertools
import json
import sys
from typing import Any

META = "io.modelcontextprotocol/"
EXTENSION = META + "tasks"
RELATED = META + "related-task"
TASKS: dict[str, dict[str, Any]] = {}
NUMBERS = itertools.count(1)
ASKED: dict[int, str] = {}
"""The id of each elicitation this server asked → the task it asked for."""
IDS = itertools.count(9000)
WAITING: dict[str, list[Any]] = {}
"""Task id → the ids of the ``tasks/result`` requests that wait for its end (it needs input)."""
TOOLS_2025 = [
    {"name": "quick", "execution": {"taskSupport": "optional"},
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "ask_now", "execution": {"taskSupport": "required"}, "inputSchema": {"type": "object"}},
    {"name": "ask_later", "execution": {"taskSupport": "required"}, "inputSchema": {"type": "object"}},
]
TOOLS_2026 = [{"name": "quick",
               "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]
NOW = "2026-07-28T00:00:00Z"


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": False}


def shown(task: dict[str, Any], modern: bool) -> dict[str, Any]:
    if modern:
        state = {"taskId": task["id"], "status": task["status"], "createdAt": NOW, "lastUpdatedAt": NOW,
                 "ttlMs": 600_000, "pollIntervalMs": 20}
        return state | ({"result": task["result"]} if task["status"] == "completed" else {})
    return {"taskId": task["id"], "status": task["status"], "createdAt": NOW, "lastUpdatedAt": NOW,
            "ttl": 600000, "pollInterval": 20}


def make(name: str, arguments: dict[str, Any], modern: bool) -> dict[str, Any]:
    task_id = f"q-{next(NUMBERS)}"
    result = text(f"quick {arguments.get('text', '')}")
    status = "input_required" if name in ("ask_now", "ask_later") else "working"
    return TASKS.setdefault(task_id, {"id": task_id, "status": status, "result": result})


def seen(task: dict[str, Any]) -> dict[str, Any]:
    """The task as shown again: a quick one has completed by then."""
    if task["status"] == "working":
        task["status"] = "completed"
    return task


def ask_for(task: dict[str, Any]) -> None:
    """The task's question (asked after a ``tasks/list`` answer: no tasks/result is pending)."""
    if task["status"] != "input_required" or task["id"] in ASKED.values():
        return
    number = next(IDS)
    ASKED[number] = task["id"]
    send({"jsonrpc": "2.0", "id": number, "method": "elicitation/create", "params": {
        "mode": "form", "message": "Colour?", "_meta": {RELATED: {"taskId": task["id"]}},
        "requestedSchema": {"type": "object", "properties": {"colour": {"type": "string"}}}}})


def answered(message: dict[str, Any]) -> None:
    task = TASKS.get(ASKED.pop(message.get("id"), ""))
    if task is not None:
        task["status"], task["result"] = "completed", text(f"heard {json.dumps(message.get('result'))}")
        for waiting in WAITING.pop(task["id"], []):  # the tasks/result that waited for its end
            send({"jsonrpc": "2.0", "id": waiting, "result": ended(task)})


def ended(task: dict[str, Any]) -> dict[str, Any]:
    return {**task["result"], "_meta": {RELATED: {"taskId": task["id"]}}}


def handle(method: str, params: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(result, error) of one request."""
    modern = META + "protocolVersion" in (params.get("_meta") or {})
    if method == "initialize":
        return {"protocolVersion": "2025-11-25", "serverInfo": {"name": "quick", "version": "1"},
                "capabilities": {"tools": {}, "tasks": {"list": {}, "cancel": {},
                                                        "requests": {"tools": {"call": {}}}}}}, None
    if method == "server/discover":
        return {"resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}, "extensions": {EXTENSION: {}}},
                "_meta": {META + "serverInfo": {"name": "quick", "version": "1"}}}, None
    if method == "tools/list":
        return ({"resultType": "complete", "tools": TOOLS_2026} if modern else {"tools": TOOLS_2025}), None
    if method == "tools/call":
        declared = EXTENSION in ((params.get("_meta") or {}).get(META + "clientCapabilities") or {}).get(
            "extensions", {})
        arguments = params.get("arguments") or {}
        if modern and not declared:
            return {"resultType": "complete", **text(f"quick {arguments.get('text', '')}")}, None
        if not modern and not isinstance(params.get("task"), dict):
            return text(f"quick {arguments.get('text', '')}"), None
        task = make(str(params.get("name")), arguments, modern)
        return ({"resultType": "task", **shown(task, True)} if modern else {"task": shown(task, False)}), None
    task = TASKS.get(str(params.get("taskId")))
    if method == "tasks/list":
        return {"tasks": [shown(seen(t), False) for t in TASKS.values()]}, None
    if task is None:
        return None, {"code": -32602, "message": f"no task {params.get('taskId')}"}
    if method == "tasks/get":
        seen(task)
        return ({"resultType": "complete", **shown(task, True)} if modern else shown(task, False)), None
    if method == "tasks/result":
        return ended(task), None
    if method == "tasks/cancel":
        return None, {"code": -32602, "message": f"Cannot cancel task: already in terminal status "
                                                 f"'{task['status']}'"}
    return None, {"code": -32601, "message": f"Method not found: {method}"}


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "method" not in message:
            answered(message)
            continue
        if "id" not in message:
            continue
        method, params = message["method"], message.get("params") or {}
        waits_for = TASKS.get(str(params.get("taskId")), {})
        if method == "tasks/result" and waits_for.get("status") == "input_required":
            WAITING.setdefault(waits_for["id"], []).append(message["id"])  # answered once it ends
            continue
        result, error = handle(method, params)
        answer = {"result": result} if error is None else {"error": error}
        made = (result or {}).get("task") if method == "tools/call" else None
        if isinstance(made, dict) and params.get("name") == "ask_now":  # both lines in one write
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], **answer}) + "\n")
            ask_for(TASKS[made["taskId"]])
            continue
        send({"jsonrpc": "2.0", "id": message["id"], **answer})
        if method == "tasks/list":
            for task in list(TASKS.values()):
                ask_for(task)


if __name__ == "__main__":
    main()
