"""Helpers of the chat dialect's tests: a run against the offline stand-in in either
dialect, streamed or not, with every request body checked against the openai package's
types and read back in the loop's (Responses) vocabulary for shared assertions; and a
replay endpoint for recorded chat streams that can hold its stream at a chosen event.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testkit.dialect import Dialect
from toolrelay.client.config import ServerConfig
from toolrelay.events import Event, EventStream
from toolrelay.httpserver import HttpRequest, HttpResponder, ServerThread
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.offline import OfflineModel, parse_script
from toolrelay.relay.loop import RunLimits, RunResult
from toolrelay.runner import RunOptions, run_async
from toolrelay.verify import load_run, verify

MODES = [("responses", True), ("responses", False), ("chat", True), ("chat", False)]
MODE_IDS = [f"{api}-{'stream' if stream else 'whole'}" for api, stream in MODES]
NOTES = "".join(f"line {i}\n" for i in range(1, 31))
CHAT_STREAMS = Path(__file__).resolve().parent.parent / "data" / "chat_streams"


def make_workspace(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.txt").write_text(NOTES, encoding="utf-8")
    (root / "todo.md").write_text("- write tests\n- ship\n", encoding="utf-8")
    return root


@dataclass
class DialectRun:
    """A finished run: its result, the bodies as sent (``wire``) and as the loop's
    vocabulary says them (``requests``), its events and its transcript."""

    api: str
    result: RunResult
    wire: list[dict[str, Any]]
    requests: list[dict[str, Any]]
    transcript: Path
    events: list[Event] = field(default_factory=list)

    def records(self, kind: str) -> list[dict[str, Any]]:
        return [e.to_record() for e in self.events if e.event_kind == kind]

    def outputs(self, request: int) -> list[dict[str, Any]]:
        return [i for i in self.requests[request]["input"] if i.get("type") == "function_call_output"]

    def calls(self, request: int) -> list[dict[str, Any]]:
        return [i for i in self.requests[request]["input"] if i.get("type") == "function_call"]


def check_wire(api: str, body: dict[str, Any]) -> None:
    """The body validates against the openai package's types of its dialect."""
    Dialect(api).check(body)


def run_dialect(
    folder: Path, script: dict[str, Any] | None, *, api: str, stream: bool,
    task: str = "Read the first 20 lines of notes.txt", servers: list[ServerConfig] | None = None,
    limits: RunLimits | None = None, **options: Any,
) -> DialectRun:
    """Run ``task`` against the stand-in in ``api``; every body sent is type-checked."""
    workspace = make_workspace(folder / "workspace")
    events = EventStream()
    seen: list[Event] = []
    events.subscribe(seen.append)
    transcript = folder / "run.jsonl"
    with OfflineModel(parse_script(script) if script is not None else None) as model:
        opts = RunOptions(model="gpt-4.1", base_url=model.base_url, api=api,  # type: ignore[arg-type]
                          stream=stream,
                          config=servers or [in_process_file_server(workspace)], events=events,
                          limits=limits or RunLimits(), environ={}, transcript=transcript, **options)
        result = asyncio.run(run_async(task, opts))
        wire = list(model.requests)
    for body in wire:
        check_wire(api, body)
    requests = [Dialect(api).request(body) for body in wire]
    return DialectRun(api=api, result=result, wire=wire, requests=requests, transcript=transcript,
                      events=seen)


def verified(path: Path) -> str:
    """'' when the transcript verifies, else its first broken link and message."""
    verdict = verify(load_run(path))
    return "" if verdict.ok else f"{verdict.broken.link}: {verdict.broken.message}" if verdict.broken else "?"


def chat_stream(name: str, rename: dict[str, str] | None = None) -> bytes:
    raw = (CHAT_STREAMS / name).read_bytes()
    for old, new in (rename or {}).items():
        raw = raw.replace(f'"name":"{old}"'.encode(), f'"name":"{new}"'.encode())
    return raw


def sse_blocks(raw: bytes) -> list[bytes]:
    return [block + b"\n\n" for block in raw.split(b"\n\n") if block.strip()]


class ChatReplay:
    """Answers POST N (any path) with ``answers[N - 1]`` (the last repeats), event by event;
    the first answer waits before its event ``hold_at`` until ``hold_file`` exists."""

    def __init__(self, *answers: bytes, hold_at: int | None = None, hold_file: Path | None = None) -> None:
        self.answers = list(answers)
        self.hold_at, self.hold_file = hold_at, hold_file
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.held = False
        self._server = ServerThread(self._handle, max_body_bytes=1 << 24, name="chat-replay")
        self.base_url = ""

    def __enter__(self) -> ChatReplay:
        self.base_url = f"http://127.0.0.1:{self._server.start('127.0.0.1', 0)}/v1"
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    async def _handle(self, request: HttpRequest, http: HttpResponder) -> None:
        self.bodies.append(json.loads(request.body))
        self.paths.append(request.path)
        number = len(self.bodies)
        events = sse_blocks(self.answers[min(number, len(self.answers)) - 1])
        await http.start(200, [("content-type", "text/event-stream")])
        for position, event in enumerate(events):
            if number == 1 and position == self.hold_at and self.hold_file is not None:
                self.held = await _appears(self.hold_file)
            await http.write(event)
        await http.end()


async def _appears(path: Path, timeout: float = 20.0) -> bool:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await asyncio.to_thread(os.path.exists, path):
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.005)
    return True
