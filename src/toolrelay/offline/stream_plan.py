"""The stand-in's streamed answer: the server-sent events of a Response, and when to write each.

``stream_events`` is the event sequence the Responses API sends for a response
(spec.md §C5 and the recorded gpt-5.5 streams): ``response.created``, ``.in_progress``,
then per item ``output_item.added``, its parts and deltas, ``output_item.done``, and the
terminal event, numbered by ``sequence_number``. As the live API does, deltas carry an
``obfuscation`` padding, ``function_call_arguments.done`` carries no ``name``, and a
reasoning item's ``encrypted_content`` in ``output_item.added`` is not the one that
verifies on replay (that is ``done``'s). Everything is deterministic, so two runs send
the same bytes.

``stream_plan`` applies a script entry's ``StreamSettings``: the rate (one delta per token
instead of one per text), the pauses between items, the fault, and the hold of the
terminal event; the result is a list of timed writes the HTTP side carries out.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from ..protocol.responses import (
    CONTENT_PART_ADDED,
    CONTENT_PART_DONE,
    FAILED,
    FUNCTION_CALL,
    FUNCTION_CALL_ARGUMENTS_DELTA,
    FUNCTION_CALL_ARGUMENTS_DONE,
    IN_PROGRESS,
    MESSAGE,
    OUTPUT_ITEM_ADDED,
    OUTPUT_ITEM_DONE,
    OUTPUT_TEXT_DELTA,
    OUTPUT_TEXT_DONE,
    REASONING,
    REASONING_SUMMARY_PART_ADDED,
    REASONING_SUMMARY_PART_DONE,
    REASONING_SUMMARY_TEXT_DELTA,
    REASONING_SUMMARY_TEXT_DONE,
    REFUSAL,
    REFUSAL_DELTA,
    REFUSAL_DONE,
    RESPONSE_COMPLETED,
    RESPONSE_CREATED,
    RESPONSE_FAILED,
    RESPONSE_IN_PROGRESS,
    RESPONSE_INCOMPLETE,
    STREAM_ERROR,
    SUMMARY_TEXT,
)
from .stream_script import StreamFault, StreamSettings
from .wire import compact_json

__all__ = ["Step", "StreamPlan", "sse_events", "stream_plan"]

_TOKENS: Final = re.compile(r"\s*\S{1,4}|\s+")
"""About one token: up to four characters, with the spaces before them."""
_PADDED_TO: Final = 16
"""Deltas are padded with ``obfuscation`` to this many characters (as the recordings show)."""
_ALPHABET: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_END_EVENTS: Final = {"incomplete": RESPONSE_INCOMPLETE, "failed": RESPONSE_FAILED}
SERVER_ERROR: Final = {"code": "server_error",
                       "message": "The server had an error while processing your request. Sorry about that!"}


@dataclass(frozen=True, slots=True)
class _Event:
    name: str
    fields: dict[str, Any]
    delta: bool = False
    """A delta: padded with obfuscation, and paced by the rate."""
    item_done: bool = False
    """An ``output_item.done``: a pause may follow it."""


@dataclass(frozen=True, slots=True)
class Step:
    """One write: ``data`` (whole events) at ``at`` seconds after the answer began."""

    at: float
    data: bytes
    hold: bool = False
    """Wait for the hold file first (the terminal event)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamPlan:
    """The writes of one streamed answer, and how it ends."""

    steps: tuple[Step, ...]
    cut: bool = False
    """Close the connection after the steps, without ending the answer."""
    hold_file: str | None = None
    hold_timeout: float = 0.0
    hold_failure: bytes = b""
    """The ``error`` event written instead of the terminal one when the file never appears."""
    simple: bool = field(default=False)
    """One write, no hold, no cut: it can be sent as a sized body."""


def sse_events(response: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The (event name, data) sequence that streams ``response``, with sequence numbers."""
    for number, event in enumerate(_response_events(response, tokenized=False)):
        yield event.name, _data(event, number)


def stream_plan(response: dict[str, Any], settings: StreamSettings) -> StreamPlan:
    """The timed writes that stream ``response`` as ``settings`` say."""
    events = list(_response_events(response, tokenized=settings.tokens_per_second is not None))
    events, cut = _with_fault(events, response, settings.fault)
    terminal = len(events) - 1 if events and events[-1].name in _TERMINALS else None
    hold = settings.hold_file is not None and terminal is not None
    steps: list[Step] = []
    clock, spacing = 0.0, 1 / settings.tokens_per_second if settings.tokens_per_second else 0.0
    for number, event in enumerate(events):
        if event.delta:
            clock += spacing
        data = _frame(event.name, _data(event, number))
        held = hold and number == terminal
        if steps and steps[-1].at == clock and not held and not steps[-1].hold:
            steps[-1] = Step(clock, steps[-1].data + data)
        else:
            steps.append(Step(clock, data, hold=held))
        if event.item_done and number + 1 < len(events) and events[number + 1].name == OUTPUT_ITEM_ADDED:
            clock += settings.pause
    failure = b""
    if hold:
        message = (f"the stand-in held the terminal event until {settings.hold_file} existed; it did not "
                   f"appear within {settings.hold_timeout:g} s")
        error = {"type": STREAM_ERROR, "sequence_number": terminal, "code": "hold_timeout",
                 "message": message, "param": None}
        failure = _frame(STREAM_ERROR, error)
    return StreamPlan(steps=tuple(steps), cut=cut, hold_file=settings.hold_file,
                      hold_timeout=settings.hold_timeout, hold_failure=failure,
                      simple=len(steps) <= 1 and not cut and not hold)


_TERMINALS: Final = frozenset({RESPONSE_COMPLETED, RESPONSE_INCOMPLETE, RESPONSE_FAILED})


def _with_fault(
    events: list[_Event], response: dict[str, Any], fault: StreamFault | None
) -> tuple[list[_Event], bool]:
    """The events as the fault leaves them, and whether the connection is cut after them."""
    if fault is None:
        return events, False
    if fault.cut_after is not None:
        return events[:fault.cut_after], True
    if fault.error_after is not None:
        kept = events[:min(fault.error_after, len(events) - 1)]  # an error after the end would be no fault
        return [*kept, _Event(STREAM_ERROR, {**SERVER_ERROR, "param": None})], False
    if fault.no_completed:
        return events[:-1], False
    calls = (n for n, e in enumerate(events) if e.item_done and e.fields["item"].get("type") == FUNCTION_CALL)
    after = next(calls, len(events) - 2)
    failed = {**response, "status": FAILED, "error": dict(SERVER_ERROR), "output": [], "usage": None,
              "completed_at": None}
    return [*events[:after + 1], _Event(RESPONSE_FAILED, {"response": failed})], False


def _response_events(response: dict[str, Any], *, tokenized: bool) -> Iterator[_Event]:
    shell = {**response, "status": IN_PROGRESS, "output": [], "usage": None, "completed_at": None}
    yield _Event(RESPONSE_CREATED, {"response": shell})
    yield _Event(RESPONSE_IN_PROGRESS, {"response": shell})
    for index, item in enumerate(response["output"]):
        yield from _item_events(index, item, tokenized)
    yield _Event(_END_EVENTS.get(response["status"], RESPONSE_COMPLETED), {"response": response})


def _item_events(index: int, item: dict[str, Any], tokenized: bool) -> Iterator[_Event]:
    kind = item["type"]
    where = {"item_id": item.get("id"), "output_index": index}
    if kind == FUNCTION_CALL:
        started = {**item, "arguments": "", "status": IN_PROGRESS}
        yield _Event(OUTPUT_ITEM_ADDED, {"output_index": index, "item": started})
        for piece in _pieces(item["arguments"], tokenized):
            yield _Event(FUNCTION_CALL_ARGUMENTS_DELTA, {**where, "delta": piece}, delta=True)
        # no "name" here: the live API sends none (the name is the item's)
        yield _Event(FUNCTION_CALL_ARGUMENTS_DONE, {**where, "arguments": item["arguments"]})
    elif kind == MESSAGE:
        started = {**item, "content": [], "status": IN_PROGRESS}
        yield _Event(OUTPUT_ITEM_ADDED, {"output_index": index, "item": started})
        for part_index, part in enumerate(item["content"]):
            yield from _part_events({**where, "content_index": part_index}, part, tokenized)
    elif kind != REASONING:  # tool_search_call / _output and other kinds: added as they are
        yield _Event(OUTPUT_ITEM_ADDED, {"output_index": index, "item": item})
    else:
        yield _Event(OUTPUT_ITEM_ADDED, {"output_index": index, "item": _added_reasoning(item)})
        if kind == REASONING:
            for summary_index, part in enumerate(item.get("summary") or []):
                yield from _summary_events({**where, "summary_index": summary_index}, part, tokenized)
    yield _Event(OUTPUT_ITEM_DONE, {"output_index": index, "item": item}, item_done=True)


def _added_reasoning(item: dict[str, Any]) -> dict[str, Any]:
    """The reasoning item as added: no summary yet, and encrypted content that is not final
    (the API's differs too; only the done item's verifies when replayed)."""
    added = {**item, "summary": []}
    content = item.get("encrypted_content")
    if isinstance(content, str) and content:
        tail = "A" * min(6, len(content))
        other = "B" * len(tail) if content.endswith(tail) else tail
        added["encrypted_content"] = content[:-len(tail)] + other
    return added


def _part_events(where: dict[str, Any], part: dict[str, Any], tokenized: bool) -> Iterator[_Event]:
    if part["type"] == REFUSAL:
        yield _Event(CONTENT_PART_ADDED, {**where, "part": {**part, "refusal": ""}})
        for piece in _pieces(part["refusal"], tokenized):
            yield _Event(REFUSAL_DELTA, {**where, "delta": piece}, delta=True)
        yield _Event(REFUSAL_DONE, {**where, "refusal": part["refusal"]})
    else:
        yield _Event(CONTENT_PART_ADDED, {**where, "part": {**part, "text": ""}})
        for piece in _pieces(part["text"], tokenized):
            yield _Event(OUTPUT_TEXT_DELTA, {**where, "delta": piece, "logprobs": []}, delta=True)
        yield _Event(OUTPUT_TEXT_DONE, {**where, "text": part["text"], "logprobs": []})
    yield _Event(CONTENT_PART_DONE, {**where, "part": part})


def _summary_events(where: dict[str, Any], part: dict[str, Any], tokenized: bool) -> Iterator[_Event]:
    text = str(part.get("text", ""))
    yield _Event(REASONING_SUMMARY_PART_ADDED, {**where, "part": {"type": SUMMARY_TEXT, "text": ""}})
    for piece in _pieces(text, tokenized):
        yield _Event(REASONING_SUMMARY_TEXT_DELTA, {**where, "delta": piece}, delta=True)
    yield _Event(REASONING_SUMMARY_TEXT_DONE, {**where, "text": text})
    yield _Event(REASONING_SUMMARY_PART_DONE, {**where, "part": part})


def _pieces(text: str, tokenized: bool) -> list[str]:
    return _TOKENS.findall(text) if tokenized else [text]


def _data(event: _Event, number: int) -> dict[str, Any]:
    data = {"type": event.name, "sequence_number": number, **event.fields}
    if event.delta:
        data["obfuscation"] = _padding(f"{event.fields.get('item_id')}:{number}", len(event.fields["delta"]))
    return data


def _padding(seed: str, used: int) -> str:
    """Deterministic filler bringing a delta to ``_PADDED_TO`` characters (at least one)."""
    digest = hashlib.blake2s(seed.encode()).digest()
    return "".join(_ALPHABET[byte % len(_ALPHABET)] for byte in digest[:max(_PADDED_TO - used, 1)])


def _frame(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {compact_json(data)}\n\n".encode()
