"""Real recorded Responses streams (tests/data/streams), replayed over loopback HTTP.

``ReplayEndpoint`` answers the N-th POST with the N-th recorded body (the last repeats),
event by event over chunked ``text/event-stream``, on toolrelay's own HTTP server; it can
hold the first answer's last event (``response.completed``) until a file exists, which
the MCP test server creates when its ``tools/call`` arrives (``capital_server.py
--touch``). Every request body is kept (``bodies``).

``recorded(name, rename=...)`` reads a recording; ``rename`` gives a recorded function
name the alias toolrelay declares for the same tool (``get_capital`` →
``capitals__get_capital``): the recording answered a request whose tools had the bare
name, toolrelay's request names it ``<server>__<tool>``. ``without_final_output`` empties
the terminal event's ``output``, as some servers send it; ``with_final_output`` changes it
as a test says (an endpoint whose final response contradicts the items it streamed).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolrelay.httpserver import HttpRequest, HttpResponder, ServerThread

__all__ = [
    "CHAT_STREAMS", "STREAMS", "ReplayEndpoint", "events_of", "recorded", "with_final_output",
    "without_final_output",
]

STREAMS = Path(__file__).resolve().parent.parent / "data" / "streams"
CHAT_STREAMS = STREAMS.parent / "chat_streams"
"""Chat Completions streams recorded from public sources (their README names each one's)."""
HOLD_TIMEOUT = 30.0


def recorded(name: str, *, rename: dict[str, str] | None = None, folder: Path = STREAMS) -> bytes:
    """The recording ``name`` in ``folder``, its function names renamed (every ``"name":"OLD"``)."""
    raw = (folder / name).read_bytes()
    for old, new in (rename or {}).items():
        raw = raw.replace(f'"name":"{old}"'.encode(), f'"name":"{new}"'.encode())
    return raw


def events_of(raw: bytes) -> list[bytes]:
    """Each event block of a recording, with its blank line."""
    return [block + b"\n\n" for block in raw.split(b"\n\n") if block.strip()]


def without_final_output(raw: bytes) -> bytes:
    """The recording with ``output: []`` on its terminal event (the rest byte for byte)."""
    return with_final_output(raw, lambda output: [])


def with_final_output(raw: bytes, change: Callable[[list[Any]], list[Any]]) -> bytes:
    """The recording with its terminal event's ``output`` replaced by ``change(output)``
    (every other event byte for byte)."""
    *head, last = events_of(raw)
    event_line, data_line = last.rstrip(b"\n").split(b"\n")
    data = json.loads(data_line.removeprefix(b"data: "))
    data["response"]["output"] = change(data["response"]["output"])
    changed = json.dumps(data, separators=(",", ":")).encode()
    return b"".join(head) + event_line + b"\ndata: " + changed + b"\n\n"


class ReplayEndpoint:
    """Answers POST N (any path) with ``answers[N - 1]`` (the last repeats), event by event;
    ``with`` it. With ``hold_first_until``, the first answer waits before its event ``hold_at``
    (default: its last) until that file exists."""

    def __init__(
        self, *answers: bytes, hold_first_until: Path | None = None, hold_at: int | None = None
    ) -> None:
        self.answers = list(answers)
        self.hold_first_until = hold_first_until
        self.hold_at = hold_at
        self.bodies: list[dict[str, object]] = []
        self.paths: list[str] = []
        self.held = False
        """Whether the first answer's last event waited for the file, and it appeared."""
        self._server = ServerThread(self._handle, max_body_bytes=1 << 24, name="replay-endpoint")
        self.base_url = ""

    def __enter__(self) -> ReplayEndpoint:
        self.base_url = f"http://127.0.0.1:{self._server.start('127.0.0.1', 0)}/v1"
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    async def _handle(self, request: HttpRequest, http: HttpResponder) -> None:
        self.bodies.append(json.loads(request.body))
        self.paths.append(request.path)
        number = len(self.bodies)
        events = events_of(self.answers[min(number, len(self.answers)) - 1])
        await http.start(200, [("content-type", "text/event-stream; charset=utf-8")])
        hold_at = len(events) - 1 if self.hold_at is None else self.hold_at
        for position, event in enumerate(events):
            if number == 1 and position == hold_at and self.hold_first_until is not None:
                self.held = await _appears(self.hold_first_until)
            await http.write(event)
        await http.end()


async def _appears(path: Path) -> bool:
    deadline = asyncio.get_running_loop().time() + HOLD_TIMEOUT
    while not await asyncio.to_thread(os.path.exists, path):
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.005)
    return True
