"""A 2025-11-25 host that takes tasks, speaking JSON-RPC to ``toolrelay proxy`` over stdio
(``TaskHost``) or Streamable HTTP (``HttpTaskHost``).

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
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final

import httpx2 as httpx
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

    def start_request(self, method: str, params: dict[str, Any] | None = None
                      ) -> tuple[int, asyncio.Future[dict[str, Any]]]:
        """Send a request: its id, and the future of the proxy's response to it."""
        number = next(self._ids)
        answer = self._waiting[number] = asyncio.get_running_loop().create_future()
        self.send({"jsonrpc": "2.0", "id": number, "method": method,
                   **({"params": params} if params else {})})
        return number, answer

    async def raw(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The proxy's whole response (``result`` or ``error``)."""
        _, answer = self.start_request(method, params)
        return await asyncio.wait_for(answer, 30)

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


class HttpTaskHost:
    """The same host over Streamable HTTP (one session): requests POSTed, its GET stream read
    in a thread (where what belongs to no request comes: the status of its tasks)."""

    HEADERS: Final = {"accept": "application/json, text/event-stream", "content-type": "application/json"}

    def __init__(self, url: str, *, capabilities: dict[str, Any] | None = None,
                 answer: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self.url = url
        self.answer = answer
        self.asked: list[dict[str, Any]] = []
        """The proxy's requests to this host, as they came on a request's stream."""
        self.http = httpx.Client(timeout=30)
        self._ids = itertools.count(1)
        declared = capabilities if capabilities is not None else {"tasks": TASKS_CAPABILITY,
                                                                  "elicitation": {"form": {}}}
        opened = self.http.post(url, headers=self.HEADERS, json={
            "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": declared,
                "clientInfo": {"name": "http-task-host", "version": "1"}}})
        self.initialized = opened.json()["result"]
        self.session = {"mcp-session-id": opened.headers["mcp-session-id"],
                        "mcp-protocol-version": "2025-11-25"}
        self.http.post(url, headers={**self.HEADERS, **self.session},
                       json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.told: list[dict[str, Any]] = []
        """What came on the GET stream."""
        self._listening = threading.Event()
        self._reader = threading.Thread(target=self._listen, daemon=True)
        self._reader.start()
        self._listening.wait(10)

    def _listen(self) -> None:
        with contextlib.suppress(httpx.HTTPError), httpx.Client(timeout=None) as http, http.stream(
                "GET", self.url, headers={"accept": "text/event-stream", **self.session}) as stream:
            self._listening.set()
            for line in stream.iter_lines():
                if line.startswith("data:") and line[5:].strip():
                    self.told.append(json.loads(line[5:]))

    def raw(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        number = next(self._ids)
        body = {"jsonrpc": "2.0", "id": number, "method": method, **({"params": params} if params else {})}
        headers = {**self.HEADERS, **self.session}
        with self.http.stream("POST", self.url, headers=headers, json=body) as response:
            if response.headers.get("content-type", "").startswith("application/json"):
                return dict(json.loads(response.read()))
            for line in response.iter_lines():  # what comes on the request's stream, in order
                if not (line.startswith("data:") and line[5:].strip()):
                    continue
                message = json.loads(line[5:])
                if "method" in message and "id" in message:  # the proxy asks, during the request
                    self.asked.append(message)
                    if message["method"] == "elicitation/create":
                        wire.ElicitRequest.model_validate(message)
                    said = self.answer(message) if self.answer is not None else {"action": "decline"}
                    self.http.post(self.url, headers=headers,
                                   json={"jsonrpc": "2.0", "id": message["id"], "result": said})
                elif message.get("id") == number:
                    return dict(message)
        raise AssertionError(f"no answer to {method} (id {number}) on its stream")

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        response = self.raw(method, params)
        assert "result" in response, response
        judge = RESULT_TYPES.get(method)
        if method == "tools/call":
            judge = wire.CreateTaskResult if "task" in response["result"] else wire.CallToolResult
        if judge is not None:
            judge.model_validate(response["result"])
        return dict(response["result"])

    def close(self) -> None:
        self.http.close()
