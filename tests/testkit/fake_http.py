"""Scripted HTTP endpoints on 127.0.0.1, served by toolrelay's own HTTP server.

``FakeHttpServer`` runs ``toolrelay.httpserver`` (the one HTTP stack of src/) with a
handler the test writes, on its own event loop in a daemon thread (``ServerThread``), and
records every request exactly as it arrived (``Seen``). A handler answers whole
(``http.send``), streams (``http.start`` / ``write`` / ``end``, with sleeps between for a
slow body), sends any status with any headers, or closes the connection after the
answer (a ``connection: close`` header). For bytes no HTTP server would write (a reset
mid-answer, a broken chunk), use ``testkit.raw_http.RawServer``.

``CannedEndpoint`` answers each request with the next ``Canned`` answer: the hosted
endpoints' failures (429 with Retry-After, 5xx, the error bodies of OpenAI, Ollama, vLLM,
llama-server, LM Studio) that cannot be produced here, for the model client to meet over
real HTTP.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from toolrelay.httpserver import HttpRequest, HttpResponder, ServerThread

__all__ = ["Canned", "CannedEndpoint", "FakeHttpServer", "HttpRequest", "HttpResponder", "Seen", "send_json"]

Answer = Callable[[HttpRequest, HttpResponder], Awaitable[None]]
MAX_BODY_BYTES = 64 * 1024 * 1024


@dataclass
class Seen:
    """A request the endpoint received, exactly."""

    method: str
    path: str
    """The target as sent: the path and, after ``?``, the query string."""
    headers: dict[str, str]
    """Names lower-case (a repeated header: its values joined with ", ")."""
    body: bytes
    at: float
    """``time.monotonic()`` when its body had been read."""

    def json(self) -> Any:
        return json.loads(self.body)


class FakeHttpServer:
    """``answer`` serves every request; ``seen`` holds them in order. ``with`` starts and stops it."""

    def __init__(
        self, answer: Answer, *, name: str = "fake-http", max_body_bytes: int = MAX_BODY_BYTES
    ) -> None:
        self._answer = answer
        self._thread = ServerThread(self._record_and_answer, max_body_bytes=max_body_bytes, name=name)
        self.seen: list[Seen] = []
        self.port = 0

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT``: append a path."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.port = self._thread.start("127.0.0.1", 0)

    def stop(self) -> None:
        """Close the listener and every connection (handlers still running are cancelled)."""
        self._thread.stop()

    def __enter__(self) -> FakeHttpServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _record_and_answer(self, request: HttpRequest, http: HttpResponder) -> None:
        headers: dict[str, str] = {}
        for name, value in request.headers:
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        target = f"{request.path}?{request.query}" if request.query else request.path
        self.seen.append(Seen(request.method, target, headers, request.body, time.monotonic()))
        await self._answer(request, http)


async def send_json(
    http: HttpResponder, status: int, payload: Any, headers: dict[str, str] | None = None
) -> None:
    """A whole JSON answer (``payload`` bytes are sent as they are)."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    await http.send(status, [("content-type", "application/json"), *(headers or {}).items()], body)


@dataclass
class Canned:
    """One answer: status, body (dict → JSON, str/bytes as is), extra headers, and a delay
    before it is sent."""

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


class CannedEndpoint(FakeHttpServer):
    """Answers every request with the canned answers in order (the last one repeats), each
    on a connection it then closes; ``base_url`` is its ``/v1``."""

    def __init__(self, *answers: Canned) -> None:
        super().__init__(self._canned, name="canned-endpoint")
        self.answers = list(answers)

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def __enter__(self) -> CannedEndpoint:
        self.start()
        return self

    async def _canned(self, request: HttpRequest, http: HttpResponder) -> None:
        answer = self.answers[min(len(self.seen), len(self.answers)) - 1]
        if answer.delay:
            await asyncio.sleep(answer.delay)
        payload, content_type = answer.payload()
        headers = [("content-type", content_type), ("connection", "close"), *answer.headers.items()]
        await http.send(answer.status, headers, payload)
