"""A conversation's transcript: one file for the whole conversation, whichever process.

The first process writes it fresh; a conversation loaded in a later process
(``Conversation.load``) appends to it, its lines numbered on from the last ``seq`` and
its servers' connection numbers moved past the recorded ones (the servers it talks to
are new connections of the same run), so that ``verify`` reads the file as one run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..assembly.single_run import TranscriptOpener, new_transcript
from ..events import Event, RunEndEvent, Subscriber
from ..transcript.reader import read_transcript
from ..transcript.writer import TranscriptWriter

__all__ = ["RecordedEnd", "TranscriptTail", "conversation_transcript", "recorded_tail"]


@dataclass(frozen=True, slots=True)
class RecordedEnd:
    """How the recorded conversation's last user turn ended (its ``run_end``)."""

    turns: int
    """The model turns the record counts (``run_end.turns``)."""


@dataclass(frozen=True, slots=True)
class TranscriptTail:
    """Where an existing transcript goes on."""

    run_id: str | None
    next_seq: int
    connections: int
    """The highest connection number recorded."""
    end: RecordedEnd | None
    """The last ``run_end``; None when the last user turn never ended."""


def recorded_tail(path: Path) -> TranscriptTail:
    """What ``path`` records, as far as appending to it needs (UsageError: unreadable)."""
    events = read_transcript(path).events
    run_id = next((e["run"] for e in events if isinstance(e.get("run"), str)), None)
    connections = [e["connection"] for e in events if isinstance(e.get("connection"), int)]
    ends = [e for e in events if e["kind"] == RunEndEvent.kind]
    turns = ends[-1].get("turns") if ends else None
    end = RecordedEnd(turns=turns) if isinstance(turns, int) else None
    return TranscriptTail(run_id=run_id, next_seq=events[-1]["seq"] + 1,
                          connections=max(connections, default=0), end=end)


class _Appending:
    """Writes each event after an existing transcript's lines (connections moved on)."""

    def __init__(self, writer: TranscriptWriter, shift: int) -> None:
        self.writer = writer
        self._shift = shift

    def __call__(self, event: Event) -> None:
        record: dict[str, Any] = event.to_record()
        if isinstance(record.get("connection"), int):
            record["connection"] += self._shift
        outcome = record.get("outcome")
        if isinstance(outcome, dict) and isinstance(outcome.get("connection"), int):
            record["outcome"] = {**outcome, "connection": outcome["connection"] + self._shift}
        self.writer.write_record(record)


def conversation_transcript(tail: TranscriptTail | None) -> TranscriptOpener:
    """How the conversation's transcript is opened: a new file, or (``tail``) appended to
    the recorded one, its lines and connections numbered on from there."""
    if tail is None:
        return new_transcript

    def appended(path: Path, run_id: str, secrets: Sequence[str]) -> tuple[TranscriptWriter, Subscriber]:
        writer = TranscriptWriter(path, run_id, secrets, append=True, first_seq=tail.next_seq)
        return writer, _Appending(writer, tail.connections)

    return appended
