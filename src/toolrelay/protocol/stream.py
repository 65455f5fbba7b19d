"""STUB (replaced by S1's): the pure assembler of a streamed Responses answer.

Sans-IO: server-sent events in, updates out, and at the end the assembled Response. This
stub implements the shared interface (docs: _prompts/stream_interface.md §2) just well
enough for the loop, verify and their tests; S1's module replaces it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .responses import (
    FAILED,
    OUTPUT_ITEM_ADDED,
    OUTPUT_ITEM_DONE,
    OUTPUT_TEXT_DELTA,
    REASONING_SUMMARY_TEXT_DELTA,
    REASONING_TEXT_DELTA,
    REFUSAL_DELTA,
    RESPONSE_COMPLETED,
    RESPONSE_CREATED,
    RESPONSE_FAILED,
    RESPONSE_IN_PROGRESS,
    RESPONSE_INCOMPLETE,
    RETRY_SAFE_STREAM_EVENTS,
    STREAM_ERROR,
)

__all__ = [
    "Assembled",
    "ItemAdded",
    "ItemDone",
    "ReasoningDelta",
    "RefusalDelta",
    "StreamAssembler",
    "StreamEnded",
    "StreamEvent",
    "StreamFailed",
    "StreamProblem",
    "TextDelta",
    "Update",
    "assemble",
]

_TERMINAL = {RESPONSE_COMPLETED: "completed", RESPONSE_INCOMPLETE: "incomplete", RESPONSE_FAILED: "failed"}
_QUIRKS = ("encrypted_content", "obfuscation")


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamEvent:
    """One server-sent event as received."""

    index: int
    event: str | None
    data: str

    @property
    def payload(self) -> dict[str, Any] | None:
        try:
            value = json.loads(self.data)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    @property
    def type(self) -> str | None:
        payload = self.payload
        kind = payload.get("type") if payload is not None else None
        return kind if isinstance(kind, str) else self.event


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    output_index: int
    item_id: str | None
    content_index: int
    delta: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RefusalDelta:
    output_index: int
    item_id: str | None
    content_index: int
    delta: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningDelta:
    output_index: int
    item_id: str | None
    delta: str
    summary: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemAdded:
    output_index: int
    item: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemDone:
    output_index: int
    item: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamEnded:
    status: str
    response: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamFailed:
    code: str | None
    message: str
    param: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamProblem:
    index: int
    text: str


Update = (
    TextDelta | RefusalDelta | ReasoningDelta | ItemAdded | ItemDone
    | StreamEnded | StreamFailed | StreamProblem
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Assembled:
    response: dict[str, Any] | None
    built: dict[str, Any] | None
    terminal: str | None
    differences: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    retry_safe: bool = True


class StreamAssembler:
    """Feed events in order; ``finish()`` gives the assembled Response."""

    def __init__(self) -> None:
        self._shell: dict[str, Any] | None = None
        self._items: dict[int, dict[str, Any]] = {}
        self._terminal: str | None = None
        self._terminal_response: dict[str, Any] | None = None
        self._error: dict[str, Any] | None = None
        self._problems: list[str] = []
        self._last_seq: int | None = None
        self._retry_safe = True

    def feed(self, event: StreamEvent) -> list[Update]:
        payload = event.payload
        if payload is None:
            return [self._problem(event.index, f"event {event.index} is not a JSON object")]
        kind = event.type
        updates: list[Update] = []
        seq = payload.get("sequence_number")
        if isinstance(seq, int):
            if self._last_seq is not None and seq != self._last_seq + 1:
                updates.append(self._problem(event.index, f"sequence_number {seq} follows {self._last_seq}"))
            self._last_seq = seq
        if kind not in RETRY_SAFE_STREAM_EVENTS:
            self._retry_safe = False
        updates.extend(self._read(kind, payload))
        return updates

    def _problem(self, index: int, text: str) -> StreamProblem:
        self._problems.append(text)
        return StreamProblem(index=index, text=text)

    def _read(self, kind: str | None, payload: dict[str, Any]) -> list[Update]:
        where: dict[str, Any] = {
            "output_index": _int(payload.get("output_index")), "item_id": payload.get("item_id"),
        }
        delta = str(payload.get("delta", ""))
        if kind in (RESPONSE_CREATED, RESPONSE_IN_PROGRESS) and isinstance(payload.get("response"), dict):
            self._shell = dict(payload["response"])
        elif kind == OUTPUT_ITEM_ADDED and isinstance(payload.get("item"), dict):
            return [ItemAdded(output_index=where["output_index"], item=payload["item"])]
        elif kind == OUTPUT_ITEM_DONE and isinstance(payload.get("item"), dict):
            self._items[where["output_index"]] = payload["item"]
            return [ItemDone(output_index=where["output_index"], item=payload["item"])]
        elif kind == OUTPUT_TEXT_DELTA:
            return [TextDelta(**where, content_index=_int(payload.get("content_index")), delta=delta)]
        elif kind == REFUSAL_DELTA:
            return [RefusalDelta(**where, content_index=_int(payload.get("content_index")), delta=delta)]
        elif kind in (REASONING_SUMMARY_TEXT_DELTA, REASONING_TEXT_DELTA):
            return [ReasoningDelta(**where, delta=delta, summary=kind == REASONING_SUMMARY_TEXT_DELTA)]
        elif kind in _TERMINAL and isinstance(payload.get("response"), dict):
            self._terminal, self._terminal_response = _TERMINAL[kind], payload["response"]
            return [StreamEnded(status=_TERMINAL[kind], response=payload["response"])]
        elif kind == STREAM_ERROR:
            self._terminal = "error"
            self._error = {"code": payload.get("code"), "message": str(payload.get("message") or "")}
            return [StreamFailed(code=payload.get("code"), message=self._error["message"],
                                 param=payload.get("param"))]
        return []

    def finish(self) -> Assembled:
        built = self._built()
        response = built
        terminal_output = (self._terminal_response or {}).get("output")
        if self._terminal_response is not None and terminal_output:
            response = self._terminal_response
        differences = []
        if built is not None and terminal_output and _plain(terminal_output) != _plain(built["output"]):
            differences.append("the terminal event's output differs from the output_item.done items")
        return Assembled(
            response=response, built=built, terminal=self._terminal, differences=differences,
            problems=list(self._problems), retry_safe=self._retry_safe and self._terminal is None,
        )

    def _built(self) -> dict[str, Any] | None:
        base = self._terminal_response or self._shell
        if base is None and not self._items and self._error is None:
            return None
        built = dict(base or {"object": "response"})
        built["output"] = [self._items[index] for index in sorted(self._items)]
        if self._error is not None:
            built["status"], built["error"] = FAILED, self._error
        return built


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k not in _QUIRKS}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def assemble(events: Iterable[StreamEvent]) -> Assembled:
    assembler = StreamAssembler()
    for event in events:
        assembler.feed(event)
    return assembler.finish()
