"""Helpers for the HTTP server tests: a few raw Streamable HTTP calls made with httpx2 (no
MCP SDK in between) and a raw HTTP/1.1 connection. (The MCP conformance suite is
``testkit.conformance``.)

The servers they talk to are testkit's (``testkit.mcp_http``): ``running_server`` /
``McpHttpThread`` (the endpoint in this process, on its own thread), ``echo_http_process``
(a subprocess) and ``files_http_process`` (``toolrelay files --http``).
"""

from __future__ import annotations

import json
import socket
from typing import Any

import h11
import httpx2

ACCEPT_BOTH = "application/json, text/event-stream"
BASE_HEADERS = {"accept": ACCEPT_BOTH, "content-type": "application/json"}
NEGOTIATED = "2025-06-18"


def init_message(msg_id: int | str = 0, *, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0", "id": msg_id, "method": "initialize",
        "params": {"protocolVersion": NEGOTIATED, "capabilities": capabilities or {},
                   "clientInfo": {"name": "raw-test", "version": "0"}},
    }


def post(
    client: httpx2.Client, url: str, message: dict[str, Any] | bytes, *,
    session: str | None = None, headers: dict[str, str] | None = None,
) -> httpx2.Response:
    """POST one message (a dict is JSON-encoded) with the headers a good client sends."""
    all_headers = dict(BASE_HEADERS)
    if session is not None:
        all_headers["mcp-session-id"] = session
        all_headers["mcp-protocol-version"] = NEGOTIATED
    all_headers.update(headers or {})
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return client.post(url, content=body, headers=all_headers)


def open_session(client: httpx2.Client, url: str, *, capabilities: dict[str, Any] | None = None) -> str:
    """initialize + notifications/initialized; the session id."""
    reply = post(client, url, init_message(capabilities=capabilities))
    assert reply.status_code == 200, reply.text
    session = reply.headers["mcp-session-id"]
    done = post(client, url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session=session)
    assert done.status_code == 202, done.text
    return session


def rpc_error(reply: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC error object of an error reply (checks it is a JSON-RPC error body)."""
    assert reply.headers["content-type"] == "application/json"
    body = reply.json()
    assert body["jsonrpc"] == "2.0" and "result" not in body
    error: dict[str, Any] = body["error"]
    return error


def sse_messages(text: str) -> list[dict[str, Any]]:
    """The JSON messages of an SSE body (``data:`` lines of ``message`` events)."""
    messages = []
    for block in text.split("\n\n"):
        data = [line[len("data: "):] for line in block.splitlines() if line.startswith("data: ")]
        if data:
            messages.append(json.loads("\n".join(data)))
    return messages


class RawConnection:
    """One TCP connection speaking HTTP/1.1 by hand (h11 client side): for keep-alive,
    malformed requests and clients that vanish mid-request."""

    def __init__(self, url: str) -> None:
        address = httpx2.URL(url)
        self.target = address.raw_path
        self.host = f"{address.host}:{address.port}"
        self.sock = socket.create_connection((address.host, address.port), timeout=10)
        self._conn = h11.Connection(h11.CLIENT)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RawConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read_until(self, marker: bytes) -> bytes:
        """Bytes received until ``marker`` has arrived (they may come in several pieces)."""
        data = b""
        while marker not in data:
            chunk = self.sock.recv(65536)
            assert chunk, f"connection closed before {marker!r}: {data!r}"
            data += chunk
        return data

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send_head(self, method: str, headers: dict[str, str], *, content_length: int | None = None) -> None:
        all_headers = {"host": self.host, **headers}
        if content_length is not None:
            all_headers["content-length"] = str(content_length)
        event = h11.Request(method=method, target=self.target, headers=list(all_headers.items()))
        self.sock.sendall(self._conn.send(event))

    def request(
        self, method: str, headers: dict[str, str], body: bytes = b""
    ) -> tuple[int, dict[str, str], bytes]:
        """Send a whole request; read the whole response; ready for the next one."""
        if self._conn.our_state is h11.DONE and self._conn.their_state is h11.DONE:
            self._conn.start_next_cycle()
        self.send_head(method, headers, content_length=len(body))
        self.sock.sendall(self._conn.send(h11.Data(data=body)) + self._conn.send(h11.EndOfMessage()))
        return self.read_response()

    def read_response(self) -> tuple[int, dict[str, str], bytes]:
        status, headers, body = 0, {}, bytearray()
        while True:
            event = self._conn.next_event()
            if event is h11.NEED_DATA:
                self._conn.receive_data(self.sock.recv(65536))
            elif isinstance(event, h11.InformationalResponse):
                continue
            elif isinstance(event, h11.Response):
                status = event.status_code
                headers = {k.decode(): v.decode() for k, v in event.headers}
            elif isinstance(event, h11.Data):
                body += event.data
            else:
                return status, headers, bytes(body)

    def closed_by_server(self) -> bool:
        """Whether the server closed this connection (EOF within the socket timeout)."""
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True
