"""Load what verify checks: a transcript file, or a demo folder of the seed's attachments.

For a folder, the attachment files are themselves the evidence: each file's content is
put into the record in place of the event it projects, so the link checks run on the
files (a tampered ``request_2.json`` is caught even when ``transcript.jsonl`` is intact),
and every place where a file departs from the transcript is kept for the agreement check.
A streamed turn's ``response_N.sse`` is put in place of its stream events the same way
(``stream_files.py``). A demo folder's ``streamed/`` (the walk-through run again,
streamed: its transcript and stream files) is loaded with it as ``streamed_run``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..gc_pause import paused_gc
from ..protocol.json_depth import RECORD_DEPTH, loads
from ..transcript.reader import read_transcript
from . import attachments
from .jsonpath import first_difference
from .record import RunRecord, index_events
from .shape import check_envelopes
from .stream_files import place_stream_files

__all__ = ["load_run"]


def load_run(path: str | Path) -> RunRecord:
    """The run recorded at ``path`` (a transcript .jsonl or a demo folder).

    Raises UsageError (exit 2) when the input cannot be read as one."""
    source = Path(path)
    if source.is_dir():
        return _load_folder(source)
    if not source.exists():
        raise UsageError(f"{source}: no such transcript file or demo folder")
    transcript = read_transcript(source)
    with paused_gc():  # indexing makes many small objects over a large, acyclic record
        return index_events(transcript.events, source, cut_tail=transcript.cut_tail, checked=True)


def _load_folder(folder: Path, *, with_streamed: bool = True) -> RunRecord:
    transcript_path = folder / attachments.TRANSCRIPT
    if not transcript_path.is_file():
        raise UsageError(
            f"{folder} has no {attachments.TRANSCRIPT}: a demo folder holds the run's transcript "
            "next to its message files (toolrelay demo --out DIR writes both)"
        )
    transcript = read_transcript(transcript_path)
    check_envelopes(transcript.events, transcript_path)  # before the files are put in place
    run = index_events(transcript.events, folder, cut_tail=transcript.cut_tail)
    files = {p.name: _read_json(p) for p in sorted(folder.glob("*.json"))}
    differences: list[tuple[str, str, int | None]] = []
    for slot in list(attachments.slots(run)):
        if slot.name not in files:
            continue
        path = first_difference(slot.value, files[slot.name])
        if path is not None:
            differences.append((slot.name, path, slot.event.get("seq")))
            attachments.place(slot, files[slot.name])
    texts = run.stream_texts
    differences += place_stream_files(run, folder)
    if differences:  # the files changed what the record holds: index it again from them
        run = index_events(transcript.events, folder, cut_tail=transcript.cut_tail)
    run.files = files
    run.stream_texts = texts
    run.file_differences = differences
    _unknown_attachments(run, files)
    streamed = folder / attachments.STREAMED
    if with_streamed and (streamed / attachments.TRANSCRIPT).is_file():
        run.streamed_run = _load_folder(streamed, with_streamed=False)
    return run


def _unknown_attachments(run: RunRecord, files: dict[str, Any]) -> None:
    """An attachment file the run has no event for is a difference too (e.g. request_3.json)."""
    known = {slot.name for slot in attachments.slots(run)}
    for name in files:
        if attachments.is_attachment(name) and name not in known:
            run.file_differences.append((name, "(whole file: the transcript has no such event)", None))


def _read_json(path: Path) -> Any:
    try:
        return loads(path.read_text(encoding="utf-8"), max_depth=RECORD_DEPTH)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
