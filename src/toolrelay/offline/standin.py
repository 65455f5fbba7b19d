"""The offline model: a deterministic stand-in for a Responses endpoint, on loopback HTTP.

``--model offline`` starts it. It speaks the Responses wire format exactly — the same
``POST /v1/responses``, the full ``Response`` object, the API's 400 error bodies, SSE when
``stream`` is true — so the client and the loop take the same path as with a hosted
model, and nothing else knows it is not one. What it answers is ``responder.py``'s job;
this module is its HTTP side. It is a stand-in for tests, demos and benchmarks: its
"answers" are rules, not a model's judgement.

It serves on toolrelay's one HTTP server (``httpserver.py``, asyncio + h11) on 127.0.0.1,
on its own event loop in a background thread, so it is independent of the caller's
loop: ``with OfflineModel() as model:`` or ``async with OfflineModel() as model:``. Side
endpoints for benchmarks (not OpenAI API): ``GET /_stats`` and ``POST /_stats/reset``
report its own handling time (from the end of reading a request to its answer being
ready to send); ``GET /_health`` answers ``ok``. ``POST /v1/chat/completions`` answers the
same scripts in the Chat Completions dialect (``chat_route.py``).

A streamed answer is written at once, or, when its script entry paces it (a rate, pauses),
holds it (until a file exists) or cuts it, as the timed writes of its ``StreamPlan``: on
the server's own loop, outside the responder's lock, so other requests are answered
meanwhile.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from ..errors import UsageError
from ..httpserver import HttpRequest, HttpResponder, ServerThread
from .responder import CHAT_COMPLETIONS_PATH, RESPONSES_PATH, Answer, Responder, json_answer
from .script import Script, load_script
from .stream_plan import StreamPlan
from .wire import error_body

__all__ = ["MAX_BODY_BYTES", "OfflineModel"]

MAX_BODY_BYTES: Final = 64 * 1024 * 1024
_LOOPBACK: Final = ("127.0.0.1", "localhost")
_HEALTHY: Final = Answer(status=200, body=b"ok", content_type="text/plain")
_HOLD_POLL: Final = 0.005
"""Seconds between looks for a hold file."""


class _Endpoint:
    """The HTTP handler: side endpoints, body checks, and the responder's answer to a POST."""

    def __init__(self, responder: Responder) -> None:
        self._responder = responder

    async def handle(self, request: HttpRequest, http: HttpResponder) -> None:
        if request.method == "GET":
            answer = self._get(request.path)
        elif request.method == "POST":
            answer = self._post(request)
        else:
            answer = json_answer(404, error_body(f"Invalid URL ({request.method} {request.path})"))
        headers = [("Content-Type", answer.content_type), *answer.headers]
        if answer.plan is not None:
            await _write_stream(http, answer.status, headers, answer.plan)
        else:
            await http.send(answer.status, headers, answer.body)

    def _get(self, path: str) -> Answer:
        if path == "/_stats":
            with self._responder.lock:
                return json_answer(200, self._responder.stats())
        if path == "/_health":
            return _HEALTHY
        return json_answer(404, error_body(f"Invalid URL (GET {path})"))

    def _post(self, request: HttpRequest) -> Answer:
        if request.header("transfer-encoding") is not None:
            return json_answer(411, error_body("A Content-Length header is required."))
        if request.body_too_large:
            return json_answer(413, error_body(f"Request body larger than {MAX_BODY_BYTES} bytes."))
        started = time.perf_counter()
        responder = self._responder
        headers = dict(request.headers)  # names are lower-case already
        with responder.lock:
            answer = responder.post(request.path, headers, request.body)
            # Counted before the answer leaves, so a client that reads /_stats right after
            # the answer always sees this request.
            if request.path in (RESPONSES_PATH, CHAT_COMPLETIONS_PATH):
                responder.handler_us.append(round((time.perf_counter() - started) * 1e6, 1))
        return answer


async def _write_stream(
    http: HttpResponder, status: int, headers: list[tuple[str, str]], plan: StreamPlan
) -> None:
    """Carry out the plan's writes at their times; end the answer, or cut the connection."""
    await http.start(status, headers)
    loop = asyncio.get_running_loop()
    started = loop.time()
    for step in plan.steps:
        wait = started + step.at - loop.time()
        if wait > 0:
            await asyncio.sleep(wait)
        if step.hold and plan.hold_file is not None and not await _appears(plan.hold_file, plan.hold_timeout):
            await http.write(plan.hold_failure)
            break
        await http.write(step.data)
    if not plan.cut:  # a cut: the handler returns mid-answer, so the server closes the connection
        await http.end()


async def _appears(path: str, timeout: float) -> bool:
    """Whether ``path`` exists within ``timeout`` seconds (looked for every few ms)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not await asyncio.to_thread(os.path.exists, path):
        if asyncio.get_running_loop().time() >= deadline:
            return False
        await asyncio.sleep(_HOLD_POLL)
    return True


class OfflineModel:
    """The stand-in Responses endpoint; ``base_url`` is ``http://127.0.0.1:PORT/v1``."""

    def __init__(
        self,
        script: Script | str | Path | None = None,
        *,
        require_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        chat_only: bool = False,
    ) -> None:
        if host not in _LOOPBACK:
            raise UsageError(f"the offline model listens on loopback only, not {host}")
        if isinstance(script, str | Path):
            script = load_script(script)
        self._responder = Responder(script, require_key)
        self._responder.chat_only = chat_only
        self._port = port
        self._server: ServerThread | None = None
        self.base_url = ""

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request body received, in order (rejected ones too)."""
        return self._responder.requests

    @property
    def request_bytes(self) -> list[int]:
        """The size in bytes of each body in ``requests``, as it came over the wire."""
        return self._responder.request_bytes

    @property
    def handler_seconds(self) -> float:
        """Its own total handling time for model requests (run time minus this = ours)."""
        with self._responder.lock:
            return sum(self._responder.handler_us) / 1e6

    def stats(self) -> dict[str, Any]:
        with self._responder.lock:
            return self._responder.stats()

    def reset(self) -> None:
        """Forget everything: the faults served, ids, stored responses, requests, stats."""
        with self._responder.lock:
            self._responder.reset()

    def start(self) -> OfflineModel:
        """Listen on 127.0.0.1 (raises ``TransportError`` when the port is taken)."""
        if self._server is not None:
            return self
        server = ServerThread(_Endpoint(self._responder).handle, max_body_bytes=MAX_BODY_BYTES,
                              name="toolrelay-offline-model")
        port = server.start("127.0.0.1", self._port)
        self._server = server
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    def close(self) -> None:
        """Stop serving: the listener and every open connection close."""
        server, self._server = self._server, None
        if server is not None:
            server.stop()

    def __enter__(self) -> OfflineModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> OfflineModel:
        return self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.close)
