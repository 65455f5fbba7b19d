"""A small Streamable HTTP MCP endpoint for the cases a real server cannot be made to
produce: expired sessions, error statuses, token checks, a server request inside an SSE
reply, oversized bodies, a call that never ends, a stream to resume that the resumption
refuses or leaves empty. It records every HTTP request it gets, with when.

It runs on ``FakeHttpServer`` (toolrelay's own HTTP server in a thread); its handlers
share one event loop, so a reply POSTed on one connection wakes the SSE stream waiting
for it on another.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from .fake_http import FakeHttpServer, HttpRequest, HttpResponder, send_json

__all__ = ["Received", "StubBehaviour", "StubServer"]

_SSE = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]


@dataclass
class Received:
    verb: str
    headers: dict[str, str]
    body: Any
    """The JSON body, or None when there was none."""
    at: float = field(default_factory=time.monotonic)


@dataclass
class StubBehaviour:
    token: str | None = None
    """When set, every request needs ``Authorization: Bearer <token>``."""
    expire_next: int = 0
    """How many upcoming session-bearing requests get 404 (and the session forgotten)."""
    call_status: tuple[int, str] | None = None
    """(status, body) for tools/call of the tool "fail"."""
    sse_ping_first: bool = False
    """Answer tools/call of "echo" with an SSE stream that pings the client first."""
    huge_bytes: int = 0
    huge_as_sse: bool = False
    sse_garbage_first: bytes | None = None
    """Answer tools/call of "echo" with an SSE stream whose first event's data is these bytes."""
    resumable: bool = False
    """Answer tools/call of "echo" with a priming event only (id ``p-<request id>``,
    ``retry: retry_ms``) and end the stream; a GET with that Last-Event-ID brings the
    answer (as the conformance suite's sse-retry scenario does)."""
    retry_ms: int = 200
    resume_refusal: tuple[int, str] | None = None
    """(status, body) for a GET with Last-Event-ID, instead of the answer."""
    standalone_ends: bool = False
    """A GET without Last-Event-ID gets a priming event (id ``g-1``) and ends; the GET
    resuming it gets a ``notifications/tools/list_changed`` and stays open."""
    resume_silent: bool = False
    """A GET with Last-Event-ID gets an event stream that ends at once, with no event."""
    waiting: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Answers a resuming GET brings, by the Last-Event-ID it must send."""
    received: list[Received] = field(default_factory=list)
    replies: dict[Any, Any] = field(default_factory=dict)


def _event(message: dict[str, Any]) -> bytes:
    return b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n"


class StubServer:
    """The endpoint for a ``with`` block; ``url`` is its /mcp address."""

    def __init__(self, behaviour: StubBehaviour | None = None) -> None:
        self.behaviour = behaviour or StubBehaviour()
        self.sessions: set[str] = set()
        self.session_count = 0
        self._replied: asyncio.Condition | None = None
        self._http = FakeHttpServer(self._handle, name="mcp-http-stub")
        self.url = ""

    def __enter__(self) -> StubServer:
        self._http.start()
        self.url = f"{self._http.origin}/mcp"
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.stop()

    def posts(self) -> list[Received]:
        return [r for r in self.behaviour.received if r.verb == "POST"]

    def _new_session(self) -> str:
        self.session_count += 1
        session = f"session-{self.session_count}"
        self.sessions.add(session)
        return session

    async def _handle(self, request: HttpRequest, http: HttpResponder) -> None:
        message = json.loads(request.body) if request.body else None
        self.behaviour.received.append(Received(request.method, dict(request.headers), message))
        if request.method == "GET":
            await self._get(request, http)
        elif request.method == "DELETE":
            self.sessions.discard(request.header("mcp-session-id") or "")
            await http.send(200)
        else:
            await self._post(request, message, http)

    async def _get(self, request: HttpRequest, http: HttpResponder) -> None:
        behaviour = self.behaviour
        last_event_id = request.header("last-event-id")
        if behaviour.standalone_ends and last_event_id in (None, "g-1"):
            await self._standalone(last_event_id, http)
        elif last_event_id is None or not behaviour.resumable:
            await http.send(405)  # no standalone stream
        elif behaviour.resume_refusal is not None:
            status, body = behaviour.resume_refusal
            await send_json(http, status, body.encode())
        else:
            answer = None if behaviour.resume_silent else behaviour.waiting.pop(last_event_id, None)
            await http.start(200, _SSE)
            if answer is not None:
                await http.write(f"id: a-{answer['id']}\n".encode() + _event(answer))
            await http.end()

    async def _standalone(self, last_event_id: str | None, http: HttpResponder) -> None:
        await http.start(200, _SSE)
        if last_event_id is None:
            await http.write(f"id: g-1\nretry: {self.behaviour.retry_ms}\ndata:\n\n".encode())
            await http.end()
            return
        changed = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        await http.write(b"id: g-2\n" + _event(changed))
        await asyncio.Event().wait()  # open until the stub stops

    async def _post(self, request: HttpRequest, message: dict[str, Any], http: HttpResponder) -> None:
        behaviour = self.behaviour
        if behaviour.token and request.header("authorization") != f"Bearer {behaviour.token}":
            refused = {"error": "invalid_token", "error_description": "The access token is invalid"}
            await send_json(http, 401, refused)
        elif message.get("method") == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "stub", "version": "1"}}
            await send_json(http, 200, {"jsonrpc": "2.0", "id": message["id"], "result": result},
                            {"mcp-session-id": self._new_session()})
        elif not self._session_ok(request):
            error = {"code": -32001, "message": "Session not found"}
            await send_json(http, 404, {"jsonrpc": "2.0", "id": None, "error": error})
        elif "method" not in message:  # our answer to a server request
            behaviour.replies[message.get("id")] = message
            async with self._condition():
                self._condition().notify_all()
            await http.send(202)
        elif "id" not in message:
            await http.send(202)
        else:
            await self._answer(message, http)

    def _condition(self) -> asyncio.Condition:
        if self._replied is None:  # made on the server's own event loop
            self._replied = asyncio.Condition()
        return self._replied

    def _session_ok(self, request: HttpRequest) -> bool:
        session = request.header("mcp-session-id")
        behaviour = self.behaviour
        if session in self.sessions and behaviour.expire_next > 0:
            behaviour.expire_next -= 1
            self.sessions.discard(session)
        return session in self.sessions

    async def _answer(self, message: dict[str, Any], http: HttpResponder) -> None:
        method, params = message["method"], message.get("params") or {}
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if method == "tools/call":
            await self._call(message, params.get("name"), params.get("arguments") or {}, http)
            return
        if method == "tools/list":
            reply["result"] = {"tools": [{"name": n, "inputSchema": {"type": "object"}}
                                         for n in ("echo", "fail", "huge", "hang")]}
        else:
            reply["result"] = {}
        await send_json(http, 200, reply)

    async def _call(self, message: dict[str, Any], name: str, arguments: dict[str, Any],
                    http: HttpResponder) -> None:
        behaviour = self.behaviour
        result = {"content": [{"type": "text", "text": str(arguments.get("text", ""))}]}
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        if name == "echo" and behaviour.resumable:
            event_id = f"p-{message['id']}"
            behaviour.waiting[event_id] = answer
            await http.start(200, _SSE)
            await http.write(f"id: {event_id}\nretry: {behaviour.retry_ms}\ndata:\n\n".encode())
            await http.end()
        elif name == "fail" and behaviour.call_status is not None:
            status, body = behaviour.call_status
            await send_json(http, status, body.encode())
        elif name == "huge":
            result["content"][0]["text"] = "y" * behaviour.huge_bytes
            if behaviour.huge_as_sse:
                await http.start(200, _SSE)
                await http.write(_event(answer))
                await http.end()
            else:
                await send_json(http, 200, answer)
        elif name == "hang":
            await asyncio.Event().wait()  # until the stub stops (its connections are closed)
        elif behaviour.sse_garbage_first is not None:
            await http.start(200, _SSE)
            await http.write(b"event: message\ndata: " + behaviour.sse_garbage_first + b"\n\n")
            await http.write(_event(answer))
            await http.end()
        elif behaviour.sse_ping_first:
            await self._sse_with_ping(answer, http)
        else:
            await send_json(http, 200, answer)

    async def _sse_with_ping(self, final: dict[str, Any], http: HttpResponder) -> None:
        await http.start(200, _SSE)
        await http.write(b"id: 1\ndata:\n\n")  # a priming event with no data
        await http.write(_event({"jsonrpc": "2.0", "id": "ping-1", "method": "ping"}))
        async with self._condition():
            await asyncio.wait_for(self._condition().wait_for(lambda: "ping-1" in self.behaviour.replies), 5)
        answered = self.behaviour.replies["ping-1"]
        final["result"]["content"][0]["text"] += f" (ping answered: {json.dumps(answered)})"
        await http.write(_event(final))
        await http.end()
