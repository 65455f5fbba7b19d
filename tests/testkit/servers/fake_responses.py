"""The loop bench's fake Responses endpoint: stateless, loopback only, in its own process.

Every runner of ``loop_bench.py`` talks to this one endpoint. It decides from the request
alone, so runners that name the tool differently (toolrelay's ``echo__echo``, the SDKs'
``echo``) and clients that resend the whole conversation all get the same two turns:

  * no ``function_call_output`` at the end of ``input``: one ``function_call`` to the
    first function tool offered, with arguments ``{"text": TEXT}``;
  * otherwise: a final assistant message, ``Done. The tool returned: <output text>``.

The bodies are toolrelay's own wire shapes (``toolrelay.offline.wire``: the full
``Response`` object the openai SDK and the Agents SDK parse), served over keep-alive
HTTP/1.1 framed by hand (``Http11``: requests with a Content-Length, as every bench client
sends them). It keeps no ledger and runs no request checks, so its cost per request is
small and the same for every runner.

Side endpoints (not OpenAI's): ``GET /_stats`` → ``{"requests": n, "handler_s_total": s,
"first_request_monotonic": t}`` (its own time, from the end of reading a request to the end
of writing the answer; ``time.monotonic()`` when the first Responses request since the last
reset was read, None before: the start-up bench's "first request") and ``POST /_stats/reset``.

    python fake_responses.py [--text TEXT] [--max-seconds 3600]
    → prints FAKE_RESPONSES_BASE_URL=http://127.0.0.1:PORT/v1, serves until killed
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import time
from typing import Any

from toolrelay.offline.wire import function_call_item, message_item, response_object, usage

DEFAULT_TEXT = "hello from the fake model"


class Endpoint:
    """The decisions and the handler-time counters (one event loop: no lock needed)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.requests = 0
        self.handler_s = 0.0
        self.first_request: float | None = None
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
        self.requests += 1
        self.handler_s += seconds

    def stats(self) -> dict[str, Any]:
        return {"requests": self.requests, "handler_s_total": self.handler_s,
                "first_request_monotonic": self.first_request}

    def reset(self) -> None:
        self.requests, self.handler_s, self.first_request = 0, 0.0, None


def _output_text(output: Any) -> str:
    """A function_call_output's text: a string, or the text of its input_text parts."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "".join(str(p.get("text", "")) for p in output if isinstance(p, dict))
    return json.dumps(output)


MAX_BODY = 64 * 1024 * 1024
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 411: "Length Required",
            413: "Content Too Large"}


class Handler:
    """The routes, the stats side endpoints, and the handler-time record."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    def __call__(self, method: str, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
        """The status and JSON payload of one request."""
        if method == "GET":
            found = path.startswith("/_stats")
            return (200, self.endpoint.stats()) if found else (404, {})
        if path.startswith("/_stats/reset"):
            self.endpoint.reset()
            return 200, {}
        if not path.split("?", 1)[0].rstrip("/").endswith("/responses"):
            return 404, {"error": {"message": "no such route", "type": "invalid_request_error"}}
        if self.endpoint.first_request is None:
            self.endpoint.first_request = time.monotonic()
        request = json.loads(body or b"{}")
        if request.get("stream"):
            return 400, {"error": {"message": "stream is not offered by the bench endpoint"}}
        return 200, self.endpoint.answer(request)


class Http11(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection, requests framed by Content-Length (what every
    client of the benches sends): a few lines of framing, so the endpoint's own CPU per
    request stays small beside what the runners under test spend (with h11 it was about a
    third of a one-call batch task's)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while self.transport is not None and not self.transport.is_closing():
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            lines = self.buffer[:head_end].decode("latin-1").split("\r\n")
            headers = dict(_header(line) for line in lines[1:])
            method, target, *_ = [*lines[0].split(" "), "", ""]
            if "chunked" in headers.get("transfer-encoding", ""):
                return self._reply(411, {"error": {"message": "send a Content-Length"}}, close=True)
            length = int(headers.get("content-length") or 0)
            if length > MAX_BODY:
                return self._reply(413, {"error": {"message": "the body is too large"}}, close=True)
            if len(self.buffer) < head_end + 4 + length:
                return
            body = bytes(self.buffer[head_end + 4:head_end + 4 + length])
            del self.buffer[:head_end + 4 + length]
            started = time.perf_counter()  # the body has been read: the handler's own time starts
            status, payload = self.handler(method, target, body)
            self._reply(status, payload, close=headers.get("connection", "").lower() == "close")
            if status == 200 and target.split("?", 1)[0].rstrip("/").endswith("/responses"):
                self.handler.endpoint.record(time.perf_counter() - started)

    def _reply(self, status: int, payload: dict[str, Any], *, close: bool) -> None:
        assert self.transport is not None
        body = json.dumps(payload).encode()
        ending = "connection: close\r\n\r\n" if close else "\r\n"
        head = (f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body)}\r\n{ending}")
        self.transport.write(head.encode() + body)
        if close:
            self.transport.close()


def _header(line: str) -> tuple[str, str]:
    name, _, value = line.partition(":")
    return name.strip().lower(), value.strip()


async def serve(text: str, max_seconds: float) -> None:
    handler = Handler(Endpoint(text))
    server = await asyncio.get_running_loop().create_server(lambda: Http11(handler), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    print(f"FAKE_RESPONSES_BASE_URL=http://127.0.0.1:{port}/v1", flush=True)
    async with server:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.serve_forever(), max_seconds)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--text", default=DEFAULT_TEXT, help="the echo tool's text argument")
    parser.add_argument("--max-seconds", type=float, default=3600.0, help="stop serving after this long")
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.text, args.max_seconds))


if __name__ == "__main__":
    main()
