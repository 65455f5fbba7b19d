"""The offline model: a deterministic stand-in for a Responses endpoint, on loopback HTTP.

``--model offline`` starts it. It speaks the Responses wire format exactly — the same
``POST /v1/responses``, the full ``Response`` object, the API's 400 error bodies, SSE when
``stream`` is true — so the client and the loop take the same path as with a hosted
model, and nothing else knows it is not one. It follows a script (``script.py``) or
plays the seed's scenario (``offline_answer.py``); it validates each request like the
real API (``offline_checks.py``). It is a stand-in for tests, demos and benchmarks: its
"answers" are rules, not a model's judgement.

It runs ``http.server.ThreadingHTTPServer`` on 127.0.0.1 in a background thread, so it is
independent of the caller's event loop: ``with OfflineModel() as model:`` or
``async with OfflineModel() as model:``. Side endpoints for benchmarks (not OpenAI API):
``GET /_stats`` and ``POST /_stats/reset`` report its own handling time (from the end of
reading a request to its answer being ready to send).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from ..errors import UsageError
from .offline_answer import Decision, final_answer, scenario_answer, scripted_answer
from .offline_checks import RequestRejected, check_request
from .offline_state import IdSource, IssuedResponse, Ledger
from .script import Script, ScriptTurn, load_script
from .wire import OFFLINE_EPOCH, error_body, response_object, sse_events, token_estimate, usage

__all__ = ["OfflineModel"]

MAX_BODY_BYTES: Final = 64 * 1024 * 1024
RESPONSES_PATH: Final = "/v1/responses"
_LOOPBACK: Final = ("127.0.0.1", "localhost")
_PARSE_ERROR: Final = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your "
    "HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)"
)
_FAULT_DEFAULTS: Final = {
    429: ("Rate limit reached for requests on the offline model. Please try again in {wait}.", "requests",
          "rate_limit_exceeded"),
    500: ("The server had an error while processing your request. Sorry about that!", "server_error", None),
    503: ("The engine is currently overloaded, please try again later.", "server_error", None),
}


@dataclass(slots=True, kw_only=True)
class HttpAnswer:
    """What the handler writes: a status, a body and its headers."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()


def _json_answer(status: int, value: Any, headers: tuple[tuple[str, str], ...] = ()) -> HttpAnswer:
    return HttpAnswer(status=status, body=json.dumps(value, ensure_ascii=False).encode(), headers=headers)


def _sse_answer(response: dict[str, Any]) -> HttpAnswer:
    chunks = [f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
              for name, data in sse_events(response)]
    return HttpAnswer(status=200, body="".join(chunks).encode(), content_type="text/event-stream",
                      headers=(("Cache-Control", "no-cache"),))


class _Responder:
    """The stand-in's state and its answer to each request (the HTTP layer is separate)."""

    def __init__(self, script: Script | None, require_key: str | None) -> None:
        self.lock = threading.Lock()
        self.script = script
        self.require_key = require_key
        self.requests: list[dict[str, Any]] = []
        self.handler_us: list[float] = []
        self.reset()

    def reset(self) -> None:
        self.cursor = 0
        self.ids = IdSource()
        self.ledger = Ledger()
        self.requests.clear()
        self.handler_us.clear()

    def stats(self) -> dict[str, Any]:
        return {"requests": len(self.handler_us), "handler_s_total": round(sum(self.handler_us) / 1e6, 6),
                "handler_us": list(self.handler_us)}

    # -- one request ----------------------------------------------------------------------

    def post(self, path: str, headers: Mapping[str, str], raw: bytes) -> HttpAnswer:
        """The answer to one POST; ``headers`` have lower-case names."""
        route = path.split("?", 1)[0]
        if route == "/_stats/reset":
            self.handler_us.clear()
            return _json_answer(200, {})
        if route != RESPONSES_PATH:
            return _json_answer(404, error_body(f"Invalid URL (POST {route})"))
        refused = self._check_key(headers)
        if refused is not None:
            return refused
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return _json_answer(400, error_body(_PARSE_ERROR))
        if not isinstance(body, dict):
            return _json_answer(400, error_body(_PARSE_ERROR))
        self.requests.append(body)
        return self._answer(body)

    def _answer(self, body: dict[str, Any]) -> HttpAnswer:
        entry = self._peek()
        if entry is not None and entry.is_fault:
            self.cursor += 1
            return _fault_answer(entry)
        try:
            context = check_request(body, self.ledger)
        except RequestRejected as rejected:
            return _json_answer(rejected.status, rejected.body)
        if entry is not None:
            self.cursor += 1
        if entry is not None and not entry.auto:
            decision = scripted_answer(entry, body, self.ids)
        elif self.script is not None and entry is None:
            decision = final_answer(context, self.ids)
        else:
            decision = scenario_answer(context, body, self.ids)
        response = self._respond(body, context, decision)
        return _sse_answer(response) if body.get("stream") is True else _json_answer(200, response)

    def _peek(self) -> ScriptTurn | None:
        if self.script is None or self.cursor >= len(self.script.turns):
            return None
        return self.script.turns[self.cursor]

    def _respond(
        self, body: dict[str, Any], context: list[dict[str, Any]], decision: Decision
    ) -> dict[str, Any]:
        response_id = self.ids.next("resp")
        thought = 8 * sum(1 for item in decision.output if item["type"] == "reasoning")
        response = response_object(
            response_id=response_id,
            created_at=OFFLINE_EPOCH + len(self.ledger.responses),
            request=body,
            output=decision.output,
            status=decision.status,
            error=decision.error,
            incomplete_reason=decision.incomplete_reason,
            token_usage=usage(token_estimate(context), token_estimate(decision.output) + thought, thought),
        )
        store = body.get("store", True) is not False
        self.ledger.record(IssuedResponse(response_id=response_id, store=store, context=context,
                                          output=decision.output))
        return response

    def _check_key(self, headers: Mapping[str, str]) -> HttpAnswer | None:
        if self.require_key is None:
            return None
        given = headers.get("api-key") or headers.get("authorization", "").removeprefix("Bearer ").strip()
        if given == self.require_key:
            return None
        if not given:
            message = ("You didn't provide an API key. You need to provide your API key in an Authorization "
                       "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).")
            return _json_answer(401, error_body(message))
        shown = f"{given[:3]}{'*' * 8}{given[-4:]}" if len(given) >= 12 else "*" * len(given)
        message = (f"Incorrect API key provided: {shown}. You can find your API key at "
                   "https://platform.openai.com/account/api-keys.")
        return _json_answer(401, error_body(message, code="invalid_api_key"))


def _fault_answer(entry: ScriptTurn) -> HttpAnswer:
    """The scripted HTTP failure of one request (rate limit, server error, ...)."""
    status = entry.http_status or 500
    headers: list[tuple[str, str]] = []
    if entry.retry_after is not None:
        headers.append(("Retry-After", f"{entry.retry_after:g}"))
    if entry.retry_after_ms is not None:
        headers.append(("retry-after-ms", f"{entry.retry_after_ms:g}"))
    wait = f"{entry.retry_after:g}s" if entry.retry_after is not None else "a moment"
    fallback = (HTTPStatus(status).phrase + ".", "server_error", None)
    template, kind, code = _FAULT_DEFAULTS.get(status, fallback)
    message = entry.error["message"] if entry.error else template.format(wait=wait)
    if status < 500 and status != 429:
        kind = "invalid_request_error"
    return _json_answer(status, error_body(message, type=kind, code=code), tuple(headers))


# -- HTTP ---------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body in one segment: without NODELAY, Nagle + delayed ACK add ~40 ms.
    disable_nagle_algorithm = True
    timeout = 60
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the stand-in is part of a test or a run, not a server with logs."""

    def do_GET(self) -> None:
        route = self.path.split("?", 1)[0]
        responder = self.server.responder
        if route == "/_stats":
            with responder.lock:
                self._write(_json_answer(200, responder.stats()))
        elif route == "/_health":
            self._write(HttpAnswer(status=200, body=b"ok", content_type="text/plain"))
        else:
            self._write(_json_answer(404, error_body(f"Invalid URL (GET {route})")))

    def do_POST(self) -> None:
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            self._write(_json_answer(411, error_body("A Content-Length header is required.")))
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self.close_connection = True
            self._write(_json_answer(413, error_body(f"Request body larger than {MAX_BODY_BYTES} bytes.")))
            return
        raw = self.rfile.read(length)
        started = time.perf_counter()
        responder = self.server.responder
        with responder.lock:
            answer = responder.post(self.path, {k.lower(): v for k, v in self.headers.items()}, raw)
            # Counted before the answer leaves, so a client that reads /_stats right after
            # the answer always sees this request.
            if self.path.split("?", 1)[0] == RESPONSES_PATH:
                responder.handler_us.append(round((time.perf_counter() - started) * 1e6, 1))
        self._write(answer)

    def _write(self, answer: HttpAnswer) -> None:
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(len(answer.body)))
        for name, value in answer.headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(answer.body)
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    """Tracks open connections so closing the stand-in also ends idle keep-alive threads."""

    def __init__(self, address: tuple[str, int], responder: _Responder) -> None:
        self.responder = responder
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-answer is not an error of the stand-in."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)

    def close_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


class OfflineModel:
    """The stand-in Responses endpoint; ``base_url`` is ``http://127.0.0.1:PORT/v1``."""

    def __init__(
        self,
        script: Script | str | Path | None = None,
        *,
        require_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        if host not in _LOOPBACK:
            raise UsageError(f"the offline model listens on loopback only, not {host}")
        if isinstance(script, str | Path):
            script = load_script(script)
        self._responder = _Responder(script, require_key)
        self._address = ("127.0.0.1", port)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request body received, in order (rejected ones too)."""
        return self._responder.requests

    @property
    def handler_seconds(self) -> float:
        """Its own total handling time for model requests (run time minus this = ours)."""
        with self._responder.lock:
            return sum(self._responder.handler_us) / 1e6

    def stats(self) -> dict[str, Any]:
        with self._responder.lock:
            return self._responder.stats()

    def reset(self) -> None:
        """Forget everything: script position, ids, stored responses, requests, stats."""
        with self._responder.lock:
            self._responder.reset()

    def start(self) -> OfflineModel:
        if self._server is not None:
            return self
        self._server = _Server(self._address, self._responder)
        self.base_url = f"http://127.0.0.1:{self._server.server_port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="toolrelay-offline-model", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._server = self._thread = None
        server.shutdown()
        server.close_connections()
        server.server_close()
        thread.join()

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
