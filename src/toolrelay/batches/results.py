"""``results.jsonl``: one line per finished task, appended and flushed as each task ends.

A line is ``TaskResult.to_record()``: ``id``, ``status`` (the run's status as
``RunResult`` names it, ``completed`` for success; ``error`` when the endpoint failed;
``uncertain`` when a resumed task met a call that was sent but never answered), the
answer, turns, calls, failed calls, token usage, duration in seconds, the error (why it
did not complete) and the transcript's path relative to the batch folder.

A batch killed while writing leaves at most one cut last line: ``ResultsFile`` drops it
when it opens the file again, so the file ends with exactly one whole line per finished
task id. Reading it back streams the lines (``read_results``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

from ..errors import UsageError, os_reason
from ..protocol import json_fast
from ..protocol.json_text import text_encoder

__all__ = [
    "RESULTS_FILE", "TRANSCRIPTS", "ResultsFile", "TaskResult", "cut_back_to_whole_lines", "read_results",
]

_LINE: Final = text_encoder(json.JSONEncoder(ensure_ascii=False))
"""A result's line (``json.dumps(record, ensure_ascii=False)``, its encoder made once)."""
RESULTS_FILE = "results.jsonl"
TRANSCRIPTS = "transcripts"
"""The folder of the task transcripts, in the batch folder."""


@dataclass(slots=True, kw_only=True)
class TaskResult:
    """How one task of a batch ended."""

    id: str
    status: str
    answer: str | None = None
    turns: int = 0
    calls: int = 0
    failed_calls: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    """``input_tokens``, ``output_tokens``, ``total_tokens`` over the task's model responses."""
    cost: float | None = None
    """The dollars the task's tokens cost by the batch's price table (``--prices``), or None."""
    duration: float = 0.0
    """Seconds this task ran in the batch that finished it."""
    error: str | None = None
    """Why it did not complete (None when it did)."""
    transcript: str | None = None
    """The transcript, relative to the batch folder."""

    @property
    def completed(self) -> bool:
        return self.status == "completed"

    def to_record(self) -> dict[str, Any]:
        return {
            "id": self.id, "status": self.status, "answer": self.answer, "turns": self.turns,
            "calls": self.calls, "failed_calls": self.failed_calls, "usage": dict(self.usage),
            "duration": round(self.duration, 6), "error": self.error, "transcript": self.transcript,
            **({"cost": self.cost} if self.cost is not None else {}),
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> TaskResult:
        usage = record.get("usage")
        return cls(
            id=str(record["id"]), status=str(record.get("status")), answer=record.get("answer"),
            turns=_int(record.get("turns")), calls=_int(record.get("calls")),
            failed_calls=_int(record.get("failed_calls")),
            usage={k: v for k, v in usage.items() if isinstance(v, int)} if isinstance(usage, dict) else {},
            duration=float(record.get("duration") or 0.0), error=record.get("error"),
            transcript=record.get("transcript"), cost=_cost(record.get("cost")),
        )


def _cost(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def read_results(path: Path) -> Iterator[TaskResult]:
    """Every whole line of ``path`` (a cut last line is left out), streamed."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as lines:
        for text in lines:
            if not text.endswith("\n"):
                return  # cut by a kill: the task is not finished
            try:
                record = json_fast.loads(text)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                yield TaskResult.from_record(record)


class ResultsFile:
    """The batch's ``results.jsonl``, opened for appending; ``finished`` holds the ids in it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        cut_back_to_whole_lines(path)
        self.finished: set[str] = {result.id for result in read_results(path)}
        try:
            self._file: IO[str] | None = path.open("a", encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {os_reason(exc)}") from None

    def append(self, result: TaskResult) -> bool:
        """Write ``result``'s line now (flushed); False when its id already has one."""
        if self._file is None or result.id in self.finished:
            return False
        self._file.write(_LINE(result.to_record()) + "\n")
        self._file.flush()
        self.finished.add(result.id)
        return True

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def cut_back_to_whole_lines(path: Path) -> None:
    """Cut a JSON-lines file back to its last whole line (a kill may have cut the last one)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        return
    with path.open("rb+") as data:
        data.seek(-1, os.SEEK_END)
        if data.read(1) == b"\n":
            return
        data.seek(0)
        content = data.read()
        data.truncate(content.rfind(b"\n") + 1)
