"""Helpers of the chat dialect's tests: a run against the offline stand-in in either
dialect, streamed or not, with every request body checked against the openai package's
types and read back in the loop's (Responses) vocabulary for shared assertions; and a
replay endpoint for recorded chat streams that can hold its stream at a chosen event.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testkit.dialect import Dialect
from testkit.recorded_streams import CHAT_STREAMS, recorded
from toolrelay.client.config import ServerConfig
from toolrelay.events import Event, EventStream
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.offline import OfflineModel, parse_script
from toolrelay.relay.loop import RunLimits, RunResult
from toolrelay.runner import RunOptions, run_async
from toolrelay.verify import load_run, verify

MODES = [("responses", True), ("responses", False), ("chat", True), ("chat", False)]
MODE_IDS = [f"{api}-{'stream' if stream else 'whole'}" for api, stream in MODES]
NOTES = "".join(f"line {i}\n" for i in range(1, 31))


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
    return recorded(name, rename=rename, folder=CHAT_STREAMS)
