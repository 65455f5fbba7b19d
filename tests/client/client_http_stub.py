"""A small Streamable HTTP MCP endpoint (stdlib http.server on loopback) for the cases the SDK
server cannot be made to produce: expired sessions, error statuses, token checks, a server
request inside an SSE reply, oversized bodies. It records every HTTP request it gets.
"""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    verb: str
    headers: dict[str, str]
    body: Any


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
    received: list[Received] = field(default_factory=list)
    replies: dict[Any, Any] = field(default_factory=dict)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default backlog of 5 resets concurrent connections


class StubServer:
    """Runs the endpoint in a thread; ``url`` is its /mcp address."""

    def __init__(self, behaviour: StubBehaviour | None = None) -> None:
        self.behaviour = behaviour or StubBehaviour()
        self.sessions: set[str] = set()
        self.session_count = 0
        self.lock = threading.Condition()
        self.release = threading.Event()
        handler = type("Handler", (_Handler,), {"stub": self})
        self.httpd = _Server(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/mcp"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> StubServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)

    def posts(self) -> list[Received]:
        return [r for r in self.behaviour.received if r.verb == "POST"]

    def new_session(self) -> str:
        with self.lock:
            self.session_count += 1
            session = f"session-{self.session_count}"
            self.sessions.add(session)
            return session


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    stub: StubServer

    def setup(self) -> None:
        super().setup()
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # headers and body go apart

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def _record(self, body: Any) -> None:
        headers = {key.lower(): value for key, value in self.headers.items()}
        self.stub.behaviour.received.append(Received(self.command, headers, body))

    def _send(self, status: int, payload: Any = None, headers: dict[str, str] | None = None) -> None:
        if payload is None or isinstance(payload, bytes):
            data = payload or b""
        else:
            data = json.dumps(payload).encode()
        self.send_response(status)
        if payload is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._record(None)
        self._send(405)

    def do_DELETE(self) -> None:
        self._record(None)
        self.stub.sessions.discard(self.headers.get("Mcp-Session-Id", ""))
        self._send(200)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        message = json.loads(self.rfile.read(length))
        self._record(message)
        behaviour = self.stub.behaviour
        if behaviour.token and self.headers.get("Authorization") != f"Bearer {behaviour.token}":
            self._send(401, {"error": "invalid_token", "error_description": "The access token is invalid"})
            return
        if message.get("method") == "initialize":
            session = self.stub.new_session()
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "stub", "version": "1"}}
            self._send(200, {"jsonrpc": "2.0", "id": message["id"], "result": result},
                       {"Mcp-Session-Id": session})
            return
        if not self._session_ok():
            return
        if "method" not in message:  # our answer to a server request
            with self.stub.lock:
                behaviour.replies[message.get("id")] = message
                self.stub.lock.notify_all()
            self._send(202)
        elif "id" not in message:
            self._send(202)
        else:
            self._answer(message)

    def _session_ok(self) -> bool:
        session = self.headers.get("Mcp-Session-Id")
        behaviour = self.stub.behaviour
        if session in self.stub.sessions and behaviour.expire_next > 0:
            behaviour.expire_next -= 1
            self.stub.sessions.discard(session)
        if session not in self.stub.sessions:
            error = {"code": -32001, "message": "Session not found"}
            self._send(404, {"jsonrpc": "2.0", "id": None, "error": error})
            return False
        return True

    def _answer(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params") or {}
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if method == "tools/list":
            reply["result"] = {"tools": [{"name": n, "inputSchema": {"type": "object"}}
                                         for n in ("echo", "fail", "huge", "hang")]}
        elif method == "tools/call":
            self._call(message, params.get("name"), params.get("arguments") or {})
            return
        else:
            reply["result"] = {}
        self._send(200, reply)

    def _call(self, message: dict[str, Any], name: str, arguments: dict[str, Any]) -> None:
        behaviour = self.stub.behaviour
        result = {"content": [{"type": "text", "text": str(arguments.get("text", ""))}]}
        if name == "fail" and behaviour.call_status is not None:
            status, body = behaviour.call_status
            self._send(status, body.encode())
        elif name == "huge":
            result["content"][0]["text"] = "y" * behaviour.huge_bytes
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            if behaviour.huge_as_sse:
                self._send_events([answer])
            else:
                self._send(200, answer)
        elif name == "hang":
            self.stub.release.wait(20)
        elif behaviour.sse_garbage_first is not None:
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            self._send_events([behaviour.sse_garbage_first, answer])
        elif behaviour.sse_ping_first:
            self._sse_with_ping({"jsonrpc": "2.0", "id": message["id"], "result": result})
        else:
            self._send(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})

    def _send_events(self, messages: list[dict[str, Any] | bytes]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for message in messages:
            data = message if isinstance(message, bytes) else json.dumps(message).encode()
            self.wfile.write(b"event: message\ndata: " + data + b"\n\n")
        self.close_connection = True

    def _sse_with_ping(self, final: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b"id: 1\ndata:\n\n")  # a priming event with no data
        self.wfile.write(b"event: message\ndata: " + json.dumps(
            {"jsonrpc": "2.0", "id": "ping-1", "method": "ping"}).encode() + b"\n\n")
        self.wfile.flush()
        with self.stub.lock:
            self.stub.lock.wait_for(lambda: "ping-1" in self.stub.behaviour.replies, timeout=5)
        answered = self.stub.behaviour.replies.get("ping-1")
        final["result"]["content"][0]["text"] += f" (ping answered: {json.dumps(answered)})"
        self.wfile.write(b"event: message\ndata: " + json.dumps(final).encode() + b"\n\n")
        self.wfile.flush()
        self.close_connection = True
