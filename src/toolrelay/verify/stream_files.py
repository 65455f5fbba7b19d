"""A streamed turn's events as a file of its own, ``response_N.sse``, and back.

``response_N.sse`` is turn N's answered stream written as the ``text/event-stream`` text
it arrived as: each recorded ``model_stream`` event as ``event:`` and ``data:`` lines and
a blank line (a person reads it with ``cat``; any SSE parser reads it back). Like the
JSON attachments it is a projection of the transcript: ``toolrelay demo`` writes it from
the record, and ``verify`` parses it (``protocol.sse``, the live path's parser) and puts
its events into the record in place of the recorded ones, so the stream checks run on
the file — a changed delta in the file breaks the stream link even when the transcript
is intact — and where the file departs from the transcript is reported.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

from ..errors import UsageError
from ..protocol.sse import EventTooLarge, SseParser, StreamEvent
from .record import RunRecord

__all__ = ["STREAM_FILE", "place_stream_files", "sse_text", "stream_files"]

STREAM_FILE: Final = re.compile(r"^response_(\d+)\.sse$")

Event = dict[str, Any]


def stream_files(run: RunRecord) -> dict[str, list[Event]]:
    """``response_N.sse`` → turn N's recorded stream events (the answered attempt's)."""
    return {f"response_{current.turn}.sse": current.stream for current in run.rounds if current.stream}


def sse_text(events: list[Event]) -> str:
    """The recorded events as event-stream text: what the endpoint sent, event by event."""
    blocks = []
    for event in events:
        name = event.get("event")
        lines = [f"event: {name}"] if isinstance(name, str) else []
        lines += [f"data: {line}" for line in str(event.get("data", "")).split("\n")]
        blocks.append("\n".join(lines) + "\n\n")
    return "".join(blocks)


def place_stream_files(run: RunRecord, folder: Path) -> list[tuple[str, str, int | None]]:
    """Read each ``response_N.sse`` of ``folder`` into the record in place of turn N's
    events; where a file departs from the transcript, as (file, where, seq)."""
    recorded = stream_files(run)
    differences: list[tuple[str, str, int | None]] = []
    for path in sorted(folder.glob("response_*.sse")):
        if STREAM_FILE.match(path.name) is None:
            continue
        run.stream_texts[path.name] = text = _read(path)
        events = recorded.get(path.name)
        if events is None:
            differences.append((path.name, "(whole file: the transcript has no such stream)", None))
            continue
        found = _difference(events, _parse(text, path))
        if found is not None:
            differences.append((path.name, *found))
    return differences


def _difference(events: list[Event], read: list[StreamEvent]) -> tuple[str, int | None] | None:
    """Where the file's events depart from the recorded ones; the file's content is put in
    the record when it has the same number of events (the stream checks then judge it)."""
    if len(read) != len(events):
        last = events[-1].get("seq") if events else None
        return f"(it holds {len(read)} events, the transcript {len(events)})", last
    found: tuple[str, int | None] | None = None
    for event, from_file in zip(events, read, strict=True):
        if (event.get("event"), event.get("data")) != (from_file.event, from_file.data):
            found = found or (f"event {event.get('index')}", event.get("seq"))
            event["event"], event["data"] = from_file.event, from_file.data
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None


def _parse(text: str, path: Path) -> list[StreamEvent]:
    parser = SseParser()
    try:
        return [*parser.feed(text.encode()), *parser.feed(b"\n\n")]  # a last event without its blank line
    except EventTooLarge as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
