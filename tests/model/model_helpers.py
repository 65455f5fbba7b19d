"""Helpers for the model client's tests: a canned HTTP endpoint, and the shared helpers.

``CannedEndpoint`` is a small stdlib HTTP server on 127.0.0.1 that answers each POST with
the next canned answer (status, headers, body) and records what it received, exactly.
It stands in for the hosted endpoints whose failures (429 with Retry-After, 5xx, error
bodies of OpenAI, Ollama, vLLM, llama-server, LM Studio) cannot be produced here; the
client talks real HTTP to it.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from responses_helpers import Recorder, read_tool, recorded_stream, run
from toolrelay.offline.wire import message_item, response_object

__all__ = [
    "Canned",
    "CannedEndpoint",
    "Recorder",
    "Seen",
    "closed_port",
    "read_tool",
    "recorded_stream",
    "run",
    "valid_response",
]

def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def valid_response(text: str = "done") -> dict[str, Any]:
    """A well-formed Responses object with one message."""
    return response_object(
        response_id="resp_canned",
        created_at=1,
        request={"model": "m"},
        output=[message_item("msg_canned", text)],
    )


# -- canned endpoint -------------------------------------------------------------------------


@dataclass
class Canned:
    """One answer: status, body (dict → JSON, str/bytes as is) and extra headers."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    def payload(self) -> tuple[bytes, str]:
        if isinstance(self.body, bytes):
            return self.body, "application/octet-stream"
        if isinstance(self.body, str):
            return self.body.encode(), "text/plain; charset=utf-8"
        return json.dumps(self.body).encode(), "application/json"


@dataclass
class Seen:
    """A request the endpoint received, exactly."""

    path: str
    headers: dict[str, str]
    body: bytes
    at: float


class CannedEndpoint:
    """Answers POSTs with the canned answers in order (the last one repeats)."""

    def __init__(self, *answers: Canned) -> None:
        self.answers = list(answers)
        self.seen: list[Seen] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05})

    def __enter__(self) -> CannedEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _next(self) -> Canned:
        index = min(len(self.seen) - 1, len(self.answers) - 1)
        return self.answers[index]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                endpoint.seen.append(Seen(self.path, headers, body, time.monotonic()))
                answer = endpoint._next()
                if answer.delay:
                    time.sleep(answer.delay)
                payload, content_type = answer.payload()
                self.send_response(answer.status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("Connection", "close")
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                with contextlib.suppress(ConnectionError):  # the client may have given up (timeout)
                    self.wfile.write(payload)
                self.close_connection = True

        return Handler
