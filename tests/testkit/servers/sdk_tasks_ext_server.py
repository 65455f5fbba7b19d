"""An official-SDK server (mcp 2.x ``MCPServer``, stdio, both eras) carrying the 2026-07-28
tasks extension ``io.modelcontextprotocol/tasks`` (SEP-2663), written to the SEP's text.

The SDK (2.3) has the extension machinery (SEP-2133: ``Extension``, ``MethodBinding``,
``intercept_tool_call``; an extension ``resultType`` passes its result sieve) but no tasks
extension of its own, so this module is that extension: ``tasks/get``, ``tasks/update``
and ``tasks/cancel`` as extension methods, and a ``tools/call`` interceptor that answers
``resultType: "task"`` (a ``CreateTaskResult``) when, and only when, the request's
per-request capabilities declare the extension (the SEP: a server MUST NOT return one
otherwise; the server alone decides).

By default it speaks the locked 2026-07-28 extension spec: a task shows ``ttlMs`` and
``pollIntervalMs`` (integer ms) and no ``requestState``, and a ``tasks/*`` request naming
one (it gave none) is refused -32602. With ``--draft`` it speaks the older draft the
spec was locked from: ``ttlSeconds`` and ``pollIntervalMilliseconds``, and every
task-bearing message carries a new ``requestState`` (``state-N``); a ``tasks/get`` or
``tasks/update`` that does not echo the latest one is refused -32602 saying so.
``tasks/update`` and ``tasks/cancel`` are acknowledged with an empty result even for an
unknown task, as the spec says.

Tools (each answered plainly to a client without the extension):
- ``slow(text, seconds)``: a task ``working`` for ``seconds``, then ``completed`` with text;
- ``ask()``: a task ``input_required`` with an elicitation ``name-1``; answered through
  ``tasks/update``, it completes with ``hello <name>``;
- ``fail()``: a task that ends ``failed`` with JSON-RPC error -32001;
- ``forever()``: a task that only ends when cancelled (``tasks/cancel`` → ``cancelled``);
- ``abandon()``: a task the server itself ends ``cancelled`` (no result);
- ``plain(text)``: never a task.

Run:  python sdk_tasks_ext_server.py [--poll-ms N] [--draft]
"""

from __future__ import annotations

import asyncio
import datetime
import sys
from typing import Any

from mcp.server.extension import Extension, MethodBinding, ToolBinding
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import RequestParams

TASKS = "io.modelcontextprotocol/tasks"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
POLL_MS = int(sys.argv[sys.argv.index("--poll-ms") + 1]) if "--poll-ms" in sys.argv else 20
DRAFT = "--draft" in sys.argv
"""The older draft's task shape (seconds, long names, a requestState to echo)."""


class TaskParams(RequestParams):
    taskId: str
    requestState: str | None = None
    inputResponses: dict[str, Any] | None = None


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat()


class Task:
    """One task: its status, the payload of that status, and its latest requestState (the draft's)."""

    def __init__(self, number: int) -> None:
        self.task_id = f"ext-task-{number}"
        self.status, self.message = "working", "started"
        self.created = self.updated = _now()
        self.payload: dict[str, Any] = {}
        self.states = 0
        self.state = self._next_state()
        self.answers: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.runner: asyncio.Task[None] | None = None

    def _next_state(self) -> str:
        self.states += 1
        return f"{self.task_id}-state-{self.states}"

    def move(self, status: str, **payload: Any) -> None:
        self.status, self.payload, self.updated = status, payload, _now()

    def seen(self, *, result_type: str) -> dict[str, Any]:
        """The task as a task-bearing message shows it (on the draft, a new requestState each time)."""
        self.state = self._next_state()
        shown = {"resultType": result_type, "taskId": self.task_id, "status": self.status,
                 "statusMessage": self.message, "createdAt": self.created, "lastUpdatedAt": self.updated}
        if DRAFT:
            shown |= {"ttlSeconds": 600, "pollIntervalMilliseconds": POLL_MS, "requestState": self.state}
        else:
            shown |= {"ttlMs": 600_000, "pollIntervalMs": POLL_MS}
        if result_type == "complete":
            shown.update(self.payload)
        return shown


def _text(text: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": error}


class TasksExtension(Extension):
    identifier = TASKS

    def __init__(self) -> None:
        self.tasks: dict[str, Task] = {}

    def tools(self) -> list[ToolBinding]:
        plain_text = {"structured_output": False}
        return [ToolBinding(fn, kwargs=plain_text) for fn in (slow, ask, fail, forever, abandon, plain)]

    def methods(self) -> list[MethodBinding]:
        return [MethodBinding("tasks/get", TaskParams, self.get),
                MethodBinding("tasks/update", TaskParams, self.update),
                MethodBinding("tasks/cancel", TaskParams, self.cancel)]

    async def intercept_tool_call(self, params: Any, ctx: Any, call_next: Any) -> Any:
        capabilities = (ctx.meta or {}).get(CAPABILITIES) or {}
        declared = TASKS in (capabilities.get("extensions") or {})
        work = _WORK.get(params.name)
        if not declared or work is None:
            return await call_next(ctx)
        task = Task(len(self.tasks) + 1)
        self.tasks[task.task_id] = task
        task.runner = asyncio.ensure_future(work(task, params.arguments or {}))
        return task.seen(result_type="task")

    def _task(self, params: TaskParams, *, check_state: bool) -> Task | None:
        task = self.tasks.get(params.taskId)
        if not DRAFT and params.requestState is not None:
            raise MCPError(code=-32602, message=f"requestState {params.requestState!r} was never given "
                           f"(task {params.taskId})")
        if DRAFT and task is not None and check_state and params.requestState != task.state:
            raise MCPError(code=-32602, message=f"requestState {params.requestState!r} is not the latest "
                           f"of task {task.task_id} ({task.state!r})")
        return task

    async def get(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        task = self._task(params, check_state=True)
        if task is None:
            raise MCPError(code=-32602, message=f"no task {params.taskId}")
        return task.seen(result_type="complete")

    async def update(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        task = self._task(params, check_state=True)
        if task is not None and params.inputResponses:
            await task.answers.put(params.inputResponses)
        return {}

    async def cancel(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        task = self._task(params, check_state=False)
        if task is not None and task.status not in ("completed", "failed", "cancelled"):
            if task.runner is not None:
                task.runner.cancel()
            task.message = "cancelled by the client"
            task.move("cancelled")
        return {}


async def _slow(task: Task, arguments: dict[str, Any]) -> None:
    await asyncio.sleep(float(arguments.get("seconds", 0.1)))
    task.message = "done"
    task.move("completed", result=_text(str(arguments.get("text", ""))))


async def _ask(task: Task, arguments: dict[str, Any]) -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string", "default": "Ada"}},
              "required": ["name"]}
    asked = {"method": "elicitation/create",
             "params": {"mode": "form", "message": "Your name?", "requestedSchema": schema}}
    task.message = "waiting for a name"
    task.move("input_required", inputRequests={"name-1": asked})
    answers = await task.answers.get()
    answer = answers.get("name-1") or {}
    name = (answer.get("content") or {}).get("name", "?") if answer.get("action") == "accept" else "nobody"
    task.message = "done"
    task.move("completed", result=_text(f"hello {name}"))


async def _fail(task: Task, arguments: dict[str, Any]) -> None:
    await asyncio.sleep(0.05)
    task.message = "the backend refused"
    task.move("failed", error={"code": -32001, "message": "backend refused the job"})


async def _forever(task: Task, arguments: dict[str, Any]) -> None:
    await asyncio.Event().wait()


async def _abandon(task: Task, arguments: dict[str, Any]) -> None:
    await asyncio.sleep(0.05)
    task.message = "the server gave up"
    task.move("cancelled")


_WORK = {"slow": _slow, "ask": _ask, "fail": _fail, "forever": _forever, "abandon": _abandon}


def slow(text: str, seconds: float = 0.1) -> str:
    """Return the text after a while (a task where the client declares the extension)."""
    return text


def ask() -> str:
    """Greet the user by the name they give (a task asking for it)."""
    return "hello (asked plainly)"


def fail() -> str:
    """A job the backend refuses (as a task: failed)."""
    raise ValueError("backend refused the job")


def forever() -> str:
    """A job that never ends (as a task: until cancelled)."""
    return "ended at once (asked plainly)"


def abandon() -> str:
    """A job the server gives up on (as a task: cancelled by the server)."""
    return "ended at once (asked plainly)"


def plain(text: str) -> str:
    """Return the text, never as a task."""
    return text


server = MCPServer("sdk-tasks-ext", log_level="WARNING", extensions=[TasksExtension()])

if __name__ == "__main__":
    server.run("stdio")
