"""One task's transcript: written fresh, or appended to the one its stopped run left.

``TaskTranscript`` subscribes to a task's event stream. A fresh transcript starts with
the shared servers' start-up records (the ``preamble``, its lines encoded once for the
batch: ``SharedPreamble``), then the run. A resumed one is
appended to the old file (its earlier lines unchanged, seq going on from its last): the
servers of this process start-up records first, their connection numbers moved past the
old ones (the servers a resumed run talks to are new connections of the run), then
``run_resumed`` and the rest. ``UsageTally`` adds up a task's token usage.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from ..events import Event, EventStream, ModelResponseEvent, RunEndEvent
from ..redaction import remembered_secrets
from ..relay.loop import Relay
from ..relay.stages.dialects import known_reader
from ..relay.stages.usage import add_counts
from ..transcript.preamble import EncodedPreamble
from ..transcript.writer import TranscriptWriter
from .results import TRANSCRIPTS, TaskResult
from .resume import TaskState
from .tasks import TaskSpec

__all__ = ["UNCERTAIN", "SharedPreamble", "TaskTranscript", "UsageTally", "recorded_result",
           "uncertain_result"]

UNCERTAIN = "uncertain"
_SECRET_SETS: Final = 8
"""Encoded preambles kept, one per set of secrets (tasks with keys of their own redact theirs)."""


class TaskTranscript:
    """A task stream's subscriber writing its transcript (``state``: the stopped run's)."""

    def __init__(
        self, path: Path, run_id: str, *, state: TaskState | None, preamble: SharedPreamble,
        secrets: Iterable[str],
    ) -> None:
        if state is None:
            self._writer = TranscriptWriter(path, run_id, first_seq=1, grouped=True)
            self._shift = 0
        else:
            self._writer = TranscriptWriter(path, state.run_id, append=True, first_seq=state.next_seq,
                                            grouped=True)
            self._shift = state.connections
        self.run_id = self._writer.run_id
        self._writer.add_secrets(secrets)
        if state is not None or not preamble.begin(self._writer):  # a resumed one moves connections
            for record in preamble.records:
                self._write(dict(record))

    def __call__(self, event: Event) -> None:
        self._write(event.to_record())

    def _write(self, record: dict[str, Any]) -> None:
        if self._shift:
            _shift_connection(record, self._shift)
        self._writer.write_record(record)

    def close(self) -> None:
        self._writer.close()


class SharedPreamble:
    """The servers' start-up records every transcript of the batch starts with, and their
    lines encoded once for the fresh ones (``transcript/preamble.py``): again when records
    were added meanwhile, and once for each set of secrets the tasks redact."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.records = records
        """The router's preamble (it grows until the first task starts)."""
        self._encoded: dict[frozenset[str], EncodedPreamble] = {}

    def begin(self, writer: TranscriptWriter) -> bool:
        """Begin a fresh transcript's ``writer`` with the records' lines; False when it
        must write them itself (it has lines already, or they hold no run id to replace)."""
        if writer.lines or writer.next_seq != 1:
            return False
        key = writer.secrets | remembered_secrets()
        encoded = self._encoded.get(key)
        if encoded is None or not encoded.made_for(writer, len(self.records)):
            encoded = self._encoded[key] = EncodedPreamble.of(self.records, secrets=writer.secrets)
            while len(self._encoded) > _SECRET_SETS:
                del self._encoded[next(iter(self._encoded))]
        if not encoded.usable:
            return False
        encoded.start(writer)
        return True


def _shift_connection(record: dict[str, Any], by: int) -> None:
    if isinstance(record.get("connection"), int):
        record["connection"] += by
    outcome = record.get("outcome")
    if isinstance(outcome, dict) and isinstance(outcome.get("connection"), int):
        record["outcome"] = {**outcome, "connection": outcome["connection"] + by}


class UsageTally:
    """Token usage over a task's model responses (a subscriber of its stream)."""

    def __init__(self, earlier: dict[str, int]) -> None:
        self.totals = dict(earlier)

    def __call__(self, event: Event) -> None:
        if isinstance(event, ModelResponseEvent) and event.status == 200 and isinstance(event.body, dict):
            reader = known_reader(event.dialect)
            if reader is not None:
                self.totals = add_counts(self.totals, reader.usage(event.body))


def recorded_result(spec: TaskSpec, state: TaskState) -> TaskResult:
    """The result of a run that had ended, read from its transcript (its line was lost)."""
    end = state.ended or {}
    status = str(end.get("status"))
    turns = end.get("turns")
    return TaskResult(
        id=spec.id, status=status, answer=end.get("final_text"), turns=turns if isinstance(turns, int) else 0,
        calls=state.calls, failed_calls=state.failed_calls, usage=state.usage,
        error=None if status == "completed" else str(end.get("reason") or ""),
        transcript=f"{TRANSCRIPTS}/{spec.id}.jsonl",
    )


def uncertain_result(
    spec: TaskSpec, state: TaskState, stream: EventStream, relay: Relay, started: float
) -> TaskResult:
    """A stopped run with a call that may have run unrecorded: recorded as ``uncertain``
    (``run_resumed``, then ``run_end`` naming the calls), nothing sent again."""
    turn = max(state.turns, 1)
    reason = ("not continued, so that no call runs twice: " + "; ".join(state.uncertain)
              + "; it may or may not have run: check, then run the task again with --restart if it should")
    note = "a call's answer was never recorded"
    stream.emit(relay.start_event(state.run_id, state.task, turn=turn, note=note))
    stream.emit(RunEndEvent(status=UNCERTAIN, reason=reason, turns=turn, usage=dict(state.usage)))
    return TaskResult(
        id=spec.id, status=UNCERTAIN, turns=turn, calls=state.calls, failed_calls=state.failed_calls,
        usage=state.usage, duration=time.perf_counter() - started, error=reason,
        transcript=f"{TRANSCRIPTS}/{spec.id}.jsonl",
    )
