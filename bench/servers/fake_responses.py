"""The loop bench's fake Responses endpoint: stateless, loopback only, in its own process.

Every runner of ``loop_bench.py`` talks to this one endpoint. It decides from the request
alone, so runners that name the tool differently (toolrelay's ``echo__echo``, the SDKs'
``echo``) and clients that resend the whole conversation all get the same two turns:

  * no ``function_call_output`` at the end of ``input``: one ``function_call`` to the
    first function tool offered, with arguments ``{"text": TEXT}``;
  * otherwise: a final assistant message, ``Done. The tool returned: <output text>``.

The bodies are toolrelay's own wire shapes (``toolrelay.offline.wire``: the full
``Response`` object the openai SDK and the Agents SDK parse). It keeps no ledger and runs
no request checks, so its cost per request is small and the same for every runner.

Side endpoints (not OpenAI's): ``GET /_stats`` → ``{"requests": n, "handler_s_total": s}``
(its own time, from the end of reading a request to the end of writing the answer) and
``POST /_stats/reset``.

    python fake_responses.py [--text TEXT] [--max-seconds 3600]
    → prints FAKE_RESPONSES_BASE_URL=http://127.0.0.1:PORT/v1, serves until killed
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from toolrelay.offline.wire import function_call_item, message_item, response_object, usage

DEFAULT_TEXT = "hello from the fake model"


class Endpoint:
    """The decisions and the handler-time counters (shared by the handler threads)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lock = threading.Lock()
        self.requests = 0
        self.handler_s = 0.0
        self._ids = itertools.count(1)
        self._prefix = f"{os.getpid():x}"

    def next_id(self, kind: str) -> str:
        return f"{kind}_{self._prefix}{next(self._ids):010d}"

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        items = body.get("input")
        items = items if isinstance(items, list) else []
        last = items[-1] if items and isinstance(items[-1], dict) else {}
        if last.get("type") == "function_call_output":
            text = "Done. The tool returned: " + _output_text(last.get("output"))
            output = [message_item(self.next_id("msg"), text)]
        else:
            output = self._call(body)
        return response_object(response_id=self.next_id("resp"), created_at=int(time.time()),
                               request=body, output=output, token_usage=usage(10, 5))

    def _call(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        tools = [t for t in body.get("tools") or [] if isinstance(t, dict) and t.get("type") == "function"]
        if not tools:
            return [message_item(self.next_id("msg"), "Done. No tool was offered.")]
        arguments = json.dumps({"text": self.text})
        return [function_call_item(self.next_id("fc"), self.next_id("call"), tools[0]["name"], arguments)]

    def record(self, seconds: float) -> None:
        with self.lock:
            self.requests += 1
            self.handler_s += seconds

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {"requests": self.requests, "handler_s_total": self.handler_s}

    def reset(self) -> None:
        with self.lock:
            self.requests, self.handler_s = 0, 0.0


def _output_text(output: Any) -> str:
    """A function_call_output's text: a string, or the text of its input_text parts."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "".join(str(p.get("text", "")) for p in output if isinstance(p, dict))
    return json.dumps(output)


def make_handler(endpoint: Endpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, like the real API
        disable_nagle_algorithm = True  # headers and body in one segment (no 40 ms delayed ACK)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

        def _send(self, status: int, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()

        def do_GET(self) -> None:
            found = self.path.startswith("/_stats")
            self._send(200 if found else 404, json.dumps(endpoint.stats() if found else {}).encode())

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            started = time.perf_counter()
            if self.path.startswith("/_stats/reset"):
                endpoint.reset()
                self._send(200, b"{}")
                return
            if not self.path.rstrip("/").endswith("/responses"):
                self._send(404, b'{"error": {"message": "no such route", "type": "invalid_request_error"}}')
                return
            body = json.loads(raw or b"{}")
            if body.get("stream"):
                self._send(400, b'{"error": {"message": "stream is not offered by the bench endpoint"}}')
                return
            self._send(200, json.dumps(endpoint.answer(body)).encode())
            endpoint.record(time.perf_counter() - started)

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--text", default=DEFAULT_TEXT, help="the echo tool's text argument")
    parser.add_argument("--max-seconds", type=float, default=3600.0, help="stop serving after this long")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(Endpoint(args.text)))
    server.daemon_threads = True
    print(f"FAKE_RESPONSES_BASE_URL=http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    threading.Timer(args.max_seconds, server.shutdown).start()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        os._exit(0)  # the timer thread must not keep the process alive


if __name__ == "__main__":
    main()
