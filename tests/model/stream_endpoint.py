"""A streaming test endpoint on toolrelay's own HTTP server (``toolrelay.httpserver``).

``StreamEndpoint`` answers each POST with the next ``Streamed`` answer, written piece by
piece (chunked): recorded SSE bodies replayed over real loopback HTTP, split as a test
likes, paused, or cut. It records every request body it received.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field

from toolrelay.httpserver import HttpRequest, HttpResponder, ServerThread

SSE = "text/event-stream; charset=utf-8"


@dataclass
class Streamed:
    """One answer: ``pieces`` written one after another (``pause`` seconds apart)."""

    pieces: list[bytes]
    status: int = 200
    content_type: str = SSE
    pause: float = 0.0
    cut: bool = False
    """Close the connection after the pieces, without ending the answer."""
    before_last: threading.Event | None = None
    """Wait for this (set by the test) before writing the last piece."""
    headers: list[tuple[str, str]] = field(default_factory=list)


def split(body: bytes, size: int) -> list[bytes]:
    """``body`` in pieces of ``size`` bytes."""
    return [body[start:start + size] for start in range(0, len(body), size)] or [b""]


class StreamEndpoint:
    """Answers POSTs with the answers in order (the last one repeats); ``with`` it."""

    def __init__(self, *answers: Streamed) -> None:
        self.answers = list(answers)
        self.bodies: list[bytes] = []
        self._server = ServerThread(self._handle, max_body_bytes=1 << 20, name="stream-endpoint")
        self.base_url = ""

    def __enter__(self) -> StreamEndpoint:
        port = self._server.start("127.0.0.1", 0)
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    async def _handle(self, request: HttpRequest, http: HttpResponder) -> None:
        self.bodies.append(request.body)
        answer = self.answers[min(len(self.bodies), len(self.answers)) - 1]
        await http.start(answer.status, [("content-type", answer.content_type), *answer.headers])
        for number, piece in enumerate(answer.pieces):
            if number and answer.pause:
                await asyncio.sleep(answer.pause)
            if number == len(answer.pieces) - 1 and answer.before_last is not None:
                await asyncio.to_thread(answer.before_last.wait, 10)
            await http.write(piece)
        if not answer.cut:
            await http.end()
