"""The lines many transcripts start with, encoded once.

The tasks of a batch share its servers, so every fresh task transcript starts with the
same records: the servers starting, their handshakes and tool lists, the declarations
(``batches/routing.py``'s preamble). Encoding them again for each task was most of a
one-call task's transcript cost. ``EncodedPreamble`` writes them once, to memory, with a
stand-in run id (twice, with two: what differs is where the run id goes); a task's writer
then starts with that text, its own run id put where the stand-in's is, and with the state
those lines left (message bases, text sources), so its file is byte for byte the one
writing the records would have made.

Only a writer that would have written the same bytes starts from it: one that has
written nothing, numbers its lines from the same seq, records bodies the same way and
redacts the same secrets (``made_for``); any other writes the records itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..redaction import remembered_secrets
from .writer import RequestBodies, TranscriptWriter, WriterState

__all__ = ["EncodedPreamble"]

_STAND_INS: Final = ("toolrelay-preamble-run-a", "toolrelay-preamble-run-b")
"""The run ids the preamble is written with (twice: the places that differ are the run
id's), replaced by each writer's own."""
_RUN_ID: Final = json.JSONEncoder(ensure_ascii=False)
"""How the writer encodes a run id (a string: its other options change nothing)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EncodedPreamble:
    """``records`` written once (``of``); ``start`` begins a writer's file with them."""

    count: int
    """How many records the text holds."""
    first_seq: int | None
    request_bodies: RequestBodies
    secrets: frozenset[str]
    """What the stand-in writer redacted: the writer's own secrets and the remembered ones."""
    parts: tuple[str, ...] | None
    """The text cut where the run id is written; None when the stand-ins are not the only
    difference between the two texts (a record quotes one: no writer starts from them)."""
    state: WriterState

    @classmethod
    def of(cls, records: Sequence[Mapping[str, Any]], *, secrets: Iterable[str] = (),
           first_seq: int | None = 1, request_bodies: RequestBodies = "delta") -> EncodedPreamble:
        secrets = frozenset(secrets)
        written = [_written(records, run_id, secrets, first_seq, request_bodies) for run_id in _STAND_INS]
        (parts, writer), (other_parts, _) = written
        return cls(count=len(records), first_seq=first_seq, request_bodies=request_bodies,
                   secrets=writer.secrets | remembered_secrets(), state=writer.state(),
                   parts=parts if parts == other_parts else None)

    def made_for(self, writer: TranscriptWriter, count: int) -> bool:
        """Whether these lines are what ``writer``, given these ``count`` records, would write
        (``usable`` says whether it can start from them)."""
        return (count == self.count and not writer.lines and writer.next_seq == self.first_seq
                and writer.request_bodies == self.request_bodies
                and writer.secrets | remembered_secrets() == self.secrets)

    @property
    def usable(self) -> bool:
        return self.parts is not None

    def start(self, writer: TranscriptWriter) -> None:
        """Begin ``writer``'s file with these lines (``made_for`` it and ``usable``)."""
        assert self.parts is not None
        writer.start_from(_RUN_ID.encode(writer.run_id).join(self.parts), self.state)


def _written(records: Sequence[Mapping[str, Any]], run_id: str, secrets: Iterable[str], first_seq: int | None,
             request_bodies: RequestBodies) -> tuple[tuple[str, ...], TranscriptWriter]:
    """The records' text written as run ``run_id``, cut where that id is, and the writer."""
    writer = TranscriptWriter.in_memory(run_id, secrets, first_seq=first_seq, request_bodies=request_bodies)
    for record in records:
        writer.write_record(dict(record))
    text = writer.text()
    writer.close()
    return tuple(text.split(_RUN_ID.encode(run_id))), writer
