"""Helpers shared by the model client's tests (tests/model) and the offline stand-in's
(tests/offline): the seed's read tool declaration, event capture, ``run``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from toolrelay.events import Event, EventStream

T = TypeVar("T")

READ_PARAMETERS_STRICT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "head": {"type": ["number", "null"]},
        "tail": {"type": ["number", "null"]},
    },
    "required": ["path", "head", "tail"],
    "additionalProperties": False,
}
READ_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "head": {"type": "number"}, "tail": {"type": "number"}},
    "required": ["path"],
}


def read_tool(name: str = "fs__read_text_file", *, strict: bool = True) -> dict[str, Any]:
    """The seed's read_text_file declaration as toolrelay offers it."""
    return {
        "type": "function",
        "name": name,
        "description": "Read a text file (head/tail lines).",
        "parameters": READ_PARAMETERS_STRICT if strict else READ_PARAMETERS,
        "strict": strict,
    }


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@dataclass
class Recorder:
    """Every event of a stream, as transcript records."""

    events: list[Event] = field(default_factory=list)

    def attach(self, stream: EventStream) -> EventStream:
        stream.subscribe(self.events.append)
        return stream

    def records(self, kind: str | None = None) -> list[dict[str, Any]]:
        return [e.to_record() for e in self.events if kind is None or e.event_kind == kind]

    def dump(self) -> str:
        """All records serialised, as a transcript would hold them."""
        return "\n".join(json.dumps(r, ensure_ascii=False) for r in self.records())


def recorded_stream() -> tuple[EventStream, Recorder]:
    recorder = Recorder()
    return recorder.attach(EventStream()), recorder
