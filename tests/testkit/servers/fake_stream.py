"""The stream bench's fake Responses endpoint: the issue's scenario, paced like a real model.

It decides from the request alone, so runners that name the tool differently (toolrelay's
``slow__look``, the Agents SDK's ``look``) get the same turns:

  * no ``function_call_output`` in ``input``: 300 tokens at ``--rate`` tokens/s (6 s at
    50/s): text, a ``function_call`` to the first function tool offered whose item closes
    after 100 tokens (2 s), more text, a second call closing after 150 tokens (3 s), and
    text to the end;
  * otherwise: a short answer, 10 tokens.

With ``stream: true`` the events go out as they are made (``sequence_number``, item ids,
``obfuscation`` padding on deltas, as the API sends them), over chunked HTTP/1.1;
without it the whole Response comes as JSON once its generation time has passed (a
model takes as long either way). ``--scale`` multiplies every time (the smoke test runs
at 0.05); ``--stamp`` makes each text token carry its send time (``⟦1712345678.123456⟧``),
for the delta-to-stdout latency. The Response bodies are toolrelay's own wire shapes
(``toolrelay.offline.wire``), which the openai SDK and the Agents SDK parse.

    python fake_stream.py [--rate 50] [--scale 1] [--stamp] [--max-seconds 3600]
    → prints FAKE_STREAM_BASE_URL=http://127.0.0.1:PORT/v1, serves until killed
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import string
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from toolrelay.offline.wire import function_call_item, message_item, response_object, usage

FIRST_TURN = (("text", 99), ("call", 1), ("text", 49), ("call", 1), ("text", 150))
"""(what, tokens): 300 tokens; the calls' items close after tokens 100 and 150."""
ANSWER_TURN = (("text", 10),)
STAMP = "⟦{:.6f}⟧ "


class Turn:
    """One response being generated: its items as they close, and its events."""

    def __init__(self, ids: Callable[[str], str], tool: str | None, stamp: bool) -> None:
        self.ids, self.tool, self.stamp = ids, tool, stamp
        self.items: list[dict[str, Any]] = []
        self.numbers = itertools.count()

    def event(self, kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
        return kind, {"type": kind, "sequence_number": next(self.numbers), **fields}

    def token(self, index: int) -> str:
        return STAMP.format(time.time()) if self.stamp else f"tok{index} "

    def text(self, tokens: int, tick: Callable[[], None]) -> Iterator[tuple[str, dict[str, Any]]]:
        index, item_id = len(self.items), self.ids("msg")
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        yield self.event("response.output_item.added", output_index=index,
                         item={**message_item(item_id, ""), "status": "in_progress", "content": []})
        yield self.event("response.content_part.added", **where,
                         part={"type": "output_text", "text": "", "annotations": []})
        written = []
        for number in range(tokens):
            tick()
            written.append(self.token(number))
            yield self.event("response.output_text.delta", **where, delta=written[-1], logprobs=[],
                             obfuscation=_padding())
        item = message_item(item_id, "".join(written))
        yield self.event("response.output_text.done", **where, text=item["content"][0]["text"], logprobs=[])
        yield self.event("response.content_part.done", **where, part=item["content"][0])
        self.items.append(item)
        yield self.event("response.output_item.done", output_index=index, item=item)

    def call(self, tick: Callable[[], None]) -> Iterator[tuple[str, dict[str, Any]]]:
        index = len(self.items)
        item = function_call_item(self.ids("fc"), self.ids("call"), self.tool or "none",
                                  json.dumps({"what": f"thing {index}"}))
        yield self.event("response.output_item.added", output_index=index,
                         item={**item, "arguments": "", "status": "in_progress"})
        tick()
        where = {"item_id": item["id"], "output_index": index}
        yield self.event("response.function_call_arguments.delta", **where, delta=item["arguments"],
                         obfuscation=_padding())
        yield self.event("response.function_call_arguments.done", **where, arguments=item["arguments"])
        self.items.append(item)
        yield self.event("response.output_item.done", output_index=index, item=item)


class Endpoint:
    def __init__(self, rate: float, scale: float, stamp: bool) -> None:
        self.interval = scale / rate
        self.stamp = stamp
        self._ids = itertools.count(1)
        self._prefix = f"{os.getpid():x}"

    def ids(self, kind: str) -> str:
        return f"{kind}_{self._prefix}{next(self._ids):08d}"

    def events(self, body: dict[str, Any], tick: Callable[[], None]) -> Iterator[tuple[str, dict[str, Any]]]:
        items = body.get("input") if isinstance(body.get("input"), list) else []
        answered = any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in items)
        offered = body.get("tools") or []
        tools = [t["name"] for t in offered if isinstance(t, dict) and t.get("type") == "function"]
        turn = Turn(self.ids, tools[0] if tools else None, self.stamp)
        rid = self.ids("resp")
        shell = response_object(response_id=rid, created_at=int(time.time()), request=body, output=[],
                                status="in_progress", token_usage=None)
        yield turn.event("response.created", response=shell)
        yield turn.event("response.in_progress", response=shell)
        for what, tokens in ANSWER_TURN if answered or not tools else FIRST_TURN:
            yield from turn.text(tokens, tick) if what == "text" else turn.call(tick)
        final = response_object(response_id=rid, created_at=int(time.time()), request=body, output=turn.items,
                                token_usage=usage(50, 300))
        yield turn.event("response.completed", response=final)

    def clock(self) -> Callable[[], None]:
        """A tick per token: sleeps to the token's due time, so pauses do not add up."""
        start, ticks = time.perf_counter(), itertools.count(1)

        def tick() -> None:
            time.sleep(max(0.0, start + next(ticks) * self.interval - time.perf_counter()))

        return tick

    def whole(self, body: dict[str, Any]) -> dict[str, Any]:
        """The Response a request without ``stream`` gets, after the same generation time."""
        last: dict[str, Any] = {}
        for _, data in self.events(body, self.clock()):
            last = data
        return dict(last["response"])


def _padding() -> str:
    return "".join(random.choices(string.ascii_letters, k=random.randint(2, 12)))


def make_handler(endpoint: Endpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # each event leaves at once

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            if body.get("stream") is not True:
                payload = json.dumps(endpoint.whole(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for kind, data in endpoint.events(body, endpoint.clock()):
                self._chunk(f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode())
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rate", type=float, default=50.0, help="tokens per second")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies every time")
    parser.add_argument("--stamp", action="store_true", help="text tokens carry their send time")
    parser.add_argument("--max-seconds", type=float, default=3600.0, help="stop serving after this long")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(Endpoint(args.rate, args.scale, args.stamp)))
    server.daemon_threads = True
    print(f"FAKE_STREAM_BASE_URL=http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    threading.Timer(args.max_seconds, server.shutdown).start()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        os._exit(0)


if __name__ == "__main__":
    main()
