"""Read a JSONL transcript back: the events in order, or a usage error naming the line.

A run killed while writing may leave a last line cut short; that line is dropped and
reported (``cut_tail``), because everything before it is a valid prefix. Any other
unreadable line makes the file unusable as evidence: a UsageError (exit 2) names it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError

__all__ = ["Transcript", "read_transcript"]


@dataclass(slots=True, kw_only=True)
class Transcript:
    """The events of one transcript file, each the dict written on its line."""

    path: Path
    events: list[dict[str, Any]]
    cut_tail: bool = False
    """True when the last line was incomplete (the writer was killed mid-line)."""

    @property
    def run_id(self) -> str | None:
        return self.events[0].get("run") if self.events else None


def read_transcript(path: str | Path) -> Transcript:
    """The events of ``path``; raises UsageError when it is not a readable transcript."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read transcript {source}: {_reason(exc)}") from None
    lines = text.split("\n")
    cut_tail = bool(lines[-1].strip())  # a complete file ends with a newline
    if cut_tail:
        lines.pop()
    events = [_event(line, number, source) for number, line in enumerate(lines, 1) if line.strip()]
    if not events:
        raise UsageError(f"{source} holds no transcript events")
    _same_run(events, source)
    return Transcript(path=source, events=events, cut_tail=cut_tail)


def _event(line: str, number: int, source: Path) -> dict[str, Any]:
    try:
        event = json.loads(line)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{source}:{number} is not a JSON line: {exc.msg} (column {exc.colno})") from None
    if not isinstance(event, dict) or not isinstance(event.get("kind"), str):
        raise UsageError(f'{source}:{number} is not a transcript event (an object with a "kind")')
    if not isinstance(event.get("seq"), int):
        raise UsageError(f'{source}:{number} has no "seq" number')
    return event


def _same_run(events: list[dict[str, Any]], source: Path) -> None:
    runs = {event.get("run") for event in events}
    if len(runs) > 1:
        shown = ", ".join(sorted(str(run) for run in runs))
        raise UsageError(f"{source} holds events of more than one run ({shown}); verify one run at a time")


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return "not UTF-8 text"
