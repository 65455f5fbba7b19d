"""A 2025-11-25 host that takes tasks, speaking JSON-RPC to ``toolrelay proxy`` over stdio.

The official SDK's client (mcp 2.3.0) declares no ``tasks`` capability and has no tasks
API, so this host writes the messages itself; every answer and notification it gets is
judged by the SDK's own 2025-11-25 wire types (``mcp_types``), which is what a host
built on them would accept.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp_types import _v2025_11_25 as wire
from pydantic import BaseModel

from conftest import PYTHON

from .proxy_helpers import proxy_args

TASKS_CAPABILITY = {"list": {}, "cancel": {}, "requests": {"elicitation": {"create": {}}}}
RESULT_TYPES: dict[str, type[BaseModel]] = {
    "initialize": wire.InitializeResult, "tools/list": wire.ListToolsResult, "tasks/get": wire.GetTaskResult,
    "tasks/list": wire.ListTasksResult, "tasks/cancel": wire.CancelTaskResult,
}
Answer = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class TaskHost:
    """One host process's side of the proxy's stdio: requests out, answers and notifications in."""

    def __init__(self, proc: asyncio.subprocess.Process, answer: Answer | None) -> None:
        self.proc = proc
        self.answer = answer
        self.notifications: list[dict[str, Any]] = []
        self.initialized: dict[str, Any] = {}
        self.asked: list[dict[str, Any]] = []
        """The proxy's requests to this host (what an upstream asked during a task)."""
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader = asyncio.ensure_future(self._read())
        self._answering: set[asyncio.Future[None]] = set()

    @classmethod
    async def start(cls, config: Path, transcript: Path, *, capabilities: dict[str, Any] | None = None,
                    version: str = "2025-11-25", answer: Answer | None = None, more: tuple[str, ...] = ()
                    ) -> TaskHost:
        proc = await asyncio.create_subprocess_exec(
            PYTHON, *proxy_args(config, transcript, *more), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, limit=2**22)
        host = cls(proc, answer)
        declared = capabilities if capabilities is not None else {"tasks": TASKS_CAPABILITY,
                                                                  "elicitation": {"form": {}}}
        host.initialized = await host.request("initialize", {
            "protocolVersion": version, "capabilities": declared,
            "clientInfo": {"name": "task-host", "version": "1"}})
        host.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return host

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())

    async def raw(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The proxy's whole response (``result`` or ``error``)."""
        number = next(self._ids)
        self._waiting[number] = asyncio.get_running_loop().create_future()
        self.send({"jsonrpc": "2.0", "id": number, "method": method,
                   **({"params": params} if params else {})})
        return await asyncio.wait_for(self._waiting[number], 30)

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The result, judged by the SDK's type for it; AssertionError on an error."""
        response = await self.raw(method, params)
        assert "result" in response, response
        result = response["result"]
        judge = RESULT_TYPES.get(method)
        if method == "tools/call":
            judge = wire.CreateTaskResult if "task" in result else wire.CallToolResult
        if judge is not None:
            judge.model_validate(result)
        return dict(result)

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        async for line in self.proc.stdout:
            message = json.loads(line)
            if "method" in message and "id" in message:
                answering = asyncio.ensure_future(self._answer(message))
                self._answering.add(answering)
                answering.add_done_callback(self._answering.discard)
            elif "method" in message:
                if message["method"] == "notifications/tasks/status":
                    wire.TaskStatusNotification.model_validate(message)
                self.notifications.append(message)
            elif isinstance(message.get("id"), int) and message["id"] in self._waiting:
                self._waiting.pop(message["id"]).set_result(message)

    async def _answer(self, request: dict[str, Any]) -> None:
        self.asked.append(request)
        if request["method"] == "elicitation/create":
            wire.ElicitRequest.model_validate(request)
        result = await self.answer(request) if self.answer is not None else {"action": "decline"}
        self.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    async def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.proc.wait(), 15)
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
