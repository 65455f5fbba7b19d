"""The 2026-07-28 tasks extension ``io.modelcontextprotocol/tasks`` (SEP-2663), sans-IO:
its names and how a task's messages read.

A client declares the extension in a request's per-request capabilities
(``clientCapabilities.extensions``); the server alone decides whether a ``tools/call``
becomes a task, answering ``resultType: "task"`` with the task's fields at the top level
(``CreateTaskResult = Result & Task``). The client polls ``tasks/get`` (a ``DetailedTask``:
``inputRequests`` while ``input_required``, ``result`` once ``completed``, ``error`` once
``failed``), answers input through ``tasks/update`` and may ask ``tasks/cancel`` (whose
params are the ``taskId`` alone; toolrelay echoes a ``requestState`` only where the server
gave one, an older draft's). ``tasks/result`` and ``tasks/list`` are gone. The text
followed is the locked 2026-07-28 extension spec: a task's ``ttlMs`` (integer ms, null:
unlimited) and ``pollIntervalMs``; an older draft's ``ttlSeconds`` and
``pollIntervalMilliseconds`` are still read (``with_locked_names``). The live client
(``client/ext_tasks.py``) and ``verify`` read a finished task with the same function,
``settled_answer``.
"""

from __future__ import annotations

from typing import Any, Final

from .jsonrpc import ErrorResponse, JSONObject, RequestId, Response
from .passthrough import passed_on

__all__ = [
    "EXTENSION",
    "POLL_MS",
    "RESULT_TASK",
    "TASKS_UPDATE",
    "TTL_MS",
    "as_2025_task",
    "as_ext_task",
    "created_ext_task",
    "ended_ext_task",
    "extension_declared",
    "lost_task_error",
    "no_result_reason",
    "settled_answer",
    "settled_message",
    "with_locked_names",
]

EXTENSION: Final = "io.modelcontextprotocol/tasks"
"""The extension's identifier, in ``capabilities.extensions`` of both sides."""
RESULT_TASK: Final = "task"
"""The ``resultType`` of a ``CreateTaskResult``."""
TASKS_UPDATE: Final = "tasks/update"
TTL_MS: Final = "ttlMs"
"""A task's time to live in integer milliseconds (null: unlimited)."""
POLL_MS: Final = "pollIntervalMs"
"""A task's suggested polling interval in integer milliseconds."""
_DRAFT_TTL: Final = "ttlSeconds"
_DRAFT_POLL: Final = "pollIntervalMilliseconds"
"""The older draft's names (a server on it; transcripts recorded before the spec was locked)."""


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def with_locked_names(task: JSONObject) -> JSONObject:
    """A task state (``CreateTaskResult``, ``tasks/get`` answer) with the older draft's
    ``ttlSeconds`` said as ``ttlMs`` and ``pollIntervalMilliseconds`` as ``pollIntervalMs``
    (a locked name already there wins); a state without them is returned as it is."""
    if _DRAFT_TTL not in task and _DRAFT_POLL not in task:
        return task
    out = {k: v for k, v in task.items() if k not in (_DRAFT_TTL, _DRAFT_POLL)}
    if TTL_MS not in task and _DRAFT_TTL in task:
        seconds = task[_DRAFT_TTL]
        out[TTL_MS] = round(seconds * 1000) if _number(seconds) else None
    if POLL_MS not in task and _DRAFT_POLL in task:
        out[POLL_MS] = task[_DRAFT_POLL]
    return out


def extension_declared(capabilities: Any) -> bool:
    """Whether a capabilities object declares the extension."""
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION), dict)


def created_ext_task(result: Any) -> JSONObject | None:
    """The result when it is a ``CreateTaskResult`` (``resultType: "task"``), else None."""
    if isinstance(result, dict) and result.get("resultType") == RESULT_TASK:
        return result
    return None


def settled_answer(mcp_id: RequestId, response: JSONObject) -> Response | ErrorResponse | str:
    """The answer a finished task gives the request that created it (``mcp_id``), read from
    the ``tasks/get`` response that showed it ``completed`` (its ``result``) or ``failed``
    (its JSON-RPC ``error``); a string says why it gives none."""
    task = response.get("result")
    status = task.get("status") if isinstance(task, dict) else None
    if not isinstance(task, dict):
        return "its tasks/get answer has no result"
    if status == "completed":
        result = task.get("result")
        if not isinstance(result, dict):
            return "it ended completed without a result object"
        return Response(id=mcp_id, result=result, raw=response)
    if status == "failed":
        error = task.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        if not isinstance(error, dict) or not isinstance(code, int) or isinstance(code, bool):
            return "it ended failed without a JSON-RPC error (code and message)"
        return ErrorResponse(id=mcp_id, code=code, message=str(error.get("message", "")),
                             data=error.get("data"), raw=response)
    said = task.get("statusMessage")
    return f"it ended {status}" + (f" ({said})" if isinstance(said, str) and said else "")


def settled_message(mcp_id: RequestId, response: JSONObject) -> JSONObject | str:
    """``settled_answer`` as the JSON-RPC message it amounts to (what a proxy passes on)."""
    answer = settled_answer(mcp_id, response)
    if isinstance(answer, str):
        return answer
    if isinstance(answer, Response):
        return {"jsonrpc": "2.0", "id": mcp_id, "result": answer.result}
    error: JSONObject = {"code": answer.code, "message": answer.message}
    if answer.data is not None:
        error["data"] = answer.data
    return {"jsonrpc": "2.0", "id": mcp_id, "error": error}


def no_result_reason(task_id: str, why: str) -> str:
    """Why a task's end answers its call with no result (``why``: ``settled_answer``'s)."""
    return f"its task {task_id} gave no result: {why}"


_TASK_2025_FIELDS: Final = ("status", "statusMessage", "createdAt", "lastUpdatedAt")


def as_ext_task(task: JSONObject, task_id: str) -> JSONObject:
    """A 2025-11-25 ``Task`` (a ``tasks/get`` answer, or a ``CreateTaskResult``'s ``task``)
    as the extension's task named ``task_id``: ``as_2025_task`` the other way (both eras
    say milliseconds: ``ttl`` as ``ttlMs``, null kept: unlimited; ``pollInterval`` as
    ``pollIntervalMs``)."""
    out: JSONObject = {"taskId": task_id}
    out.update({name: task[name] for name in _TASK_2025_FIELDS if name in task})
    ttl = task.get("ttl")
    out[TTL_MS] = ttl if _number(ttl) else None
    poll = task.get("pollInterval")
    if _number(poll):
        out[POLL_MS] = poll
    return out


def ended_ext_task(state: JSONObject, final: JSONObject) -> JSONObject:
    """An extension task (``state``, ``as_ext_task``'s) once a 2025-11-25 ``tasks/result``
    answered ``final`` (a JSON-RPC message): ``completed`` with its ``result``, or
    ``failed`` with its ``error`` (a status the upstream already said ended is kept)."""
    error = final.get("error")
    ended = state.get("status") in ("completed", "failed")
    if not ended:  # what it said while it ran (e.g. why it needed input) is not said of its end
        state = {k: v for k, v in state.items() if k != "statusMessage"}
    if isinstance(error, dict):
        return {**state, "status": state["status"] if ended else "failed", "error": error}
    result = final.get("result")
    passed = passed_on(result) if isinstance(result, dict) else result  # its leg's meta stays there
    return {**state, "status": state["status"] if ended else "completed", "result": passed}


def lost_task_error(server: str, upstream_id: str, error: Any) -> JSONObject:
    """The error a 2025-11-25 server's task ends with when its ``tasks/get`` answered
    ``error`` (the server lost the task): the proxy's words, quoting the server's (the
    proxy redacts the message; ``verify`` reads ``[redacted]`` as any text)."""
    code = error.get("code") if isinstance(error, dict) else None
    said = error.get("message") if isinstance(error, dict) else None
    return {"code": -32603, "message": f"toolrelay proxy: server {server} lost the task {upstream_id}: its "
                                      f"tasks/get answered {code}: {said}"}


def as_2025_task(task: JSONObject, task_id: str) -> JSONObject:
    """An extension task's state (a ``CreateTaskResult`` or ``tasks/get`` answer) as a
    2025-11-25 ``Task`` named ``task_id``: the status names are the same in both eras;
    ``ttlMs`` is said as ``ttl`` (null: unlimited) and ``pollIntervalMs`` as
    ``pollInterval`` (an older draft's names read too: ``with_locked_names``); the rest of
    the 2026 task (a ``requestState``, its ``inputRequests``, ``result``) is not a 2025 task's."""
    task = with_locked_names(task)
    out: JSONObject = {"taskId": task_id}
    out.update({name: task[name] for name in _TASK_2025_FIELDS if name in task})
    ttl = task.get(TTL_MS)
    out["ttl"] = ttl if _number(ttl) else None
    poll = task.get(POLL_MS)
    if _number(poll):
        out["pollInterval"] = poll
    return out
