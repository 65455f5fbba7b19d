"""Write the event stream as a JSONL transcript: one event per line, on disk as the run goes.

Each line is ``{"seq", "time", "kind", ...}``; the first also has ``run`` (the run id) and
``transcript_format`` (``FORMAT``), which the reader gives every line back. Message bodies (model requests and
responses, JSON-RPC messages) are recorded exactly. Credentials toolrelay handles (API
keys, Authorization headers, tokens, config env and header values) are never part of
those bodies; where they could appear — command lines, URLs, server stderr, notices —
they are replaced by ``[redacted]``.

Every event is flushed as it is written, except a streamed answer's server-sent events
(``model_stream``, hundreds a turn): those are flushed together, by the next other event
or ``FLUSH_INTERVAL`` after the first unflushed one, whichever comes first (outside an
event loop, at once). So a run killed midway leaves a valid prefix; a ``kill -9`` can
lose at most the stream events of its last ``FLUSH_INTERVAL`` (never another event), and
a line cut short at the end is read as such (``reader.py``). A writer made with
``grouped=True`` (a batch task's) holds every line that leads to nothing outside the
process by itself (``HELD``: what came in, and what was worked out from it) the same way,
until the next line that must be on disk at once — whatever goes out (a model request, a
message to a server) is recorded before it is sent, so its line and every line before it
are on disk before anything they led to leaves — or ``FLUSH_INTERVAL``: a ``kill -9`` can
then lose only lines nothing was sent after, the prefix a kill a moment earlier leaves.
Lines go to the file with ``os.write`` (no text or buffer layer: one system call a flush). A run's first model
request is recorded whole, each later one as what changed since the previous request
(``delta.py``: the new input items, and any other field that changed), with the SHA-256
of the exact bytes sent; A JSON-RPC message of a shape recorded before is recorded as what changed against
it, and a request's new input items that a ``model_response`` or ``feedback`` line already
holds as references to them (``shared.py``). ``request_bodies="full"`` records every line
whole, with its run id, as transcripts were written before (the reader reads both). A value
nested too deep to encode (never one toolrelay decoded: those are held to
``json_depth.MAX_DEPTH``) is recorded with its deepest part replaced by a note, so every
line written can be read back.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from ..errors import UsageError, os_reason
from ..events import (
    MCP_NOTIFICATION,
    MCP_RESPONSE,
    MCP_ROLES,
    MCP_UNPAIRED,
    CallOutcomeEvent,
    CallParsed,
    CallRouted,
    Event,
    FeedbackEvent,
    ModelRequestEvent,
    ModelResponseEvent,
    ModelStreamEvent,
    RunStartEvent,
)
from ..protocol.json_depth import MAX_DEPTH, clip_depth
from ..protocol.json_text import text_encoder
from ..redaction import redact, remembered_secrets, worth_redacting
from .delta import DELTA_FIELD, DIGEST_FIELD, body_delta, wire_bytes, wire_digest
from .shared import FORMAT, FORMAT_FIELD, ItemSources, MessageBases, Shape, TextSources, message_shape

__all__ = ["FLUSH_INTERVAL", "HELD", "RequestBodies", "TranscriptWriter", "WriterState"]

RequestBodies = Literal["delta", "full"]

FLUSH_INTERVAL: Final = 0.05
"""Seconds a stream event may wait in the buffer for others to be flushed with it."""
# Fields that hold free text which could carry a credential (never message bodies).
_FREE_TEXT_FIELDS: Final = ("target", "url", "stderr_tail", "text", "preview", "reason", "detail")
_FREE_TEXT: Final = frozenset(_FREE_TEXT_FIELDS)
_BATCHED: Final = frozenset({ModelStreamEvent.kind})
HELD: Final = frozenset({ModelStreamEvent.kind, ModelResponseEvent.kind, RunStartEvent.kind, CallParsed.kind,
                         CallRouted.kind, CallOutcomeEvent.kind, FeedbackEvent.kind})
"""What a ``grouped`` writer holds (with ``_HELD_IN`` lines that came in): lines that lead
to nothing outside the process until a line not held (a request going out, the run's end)."""
_HELD_IN: Final = frozenset({MCP_RESPONSE, MCP_NOTIFICATION, MCP_UNPAIRED})
_WRITE_AT: Final = 64 * 1024
"""Bytes of held lines written without waiting for a flush (a long stream's lines)."""
_REQUEST: Final = ModelRequestEvent.kind
_FEEDBACK: Final = FeedbackEvent.kind
_HOLD_ITEMS: Final = frozenset({ModelResponseEvent.kind, _FEEDBACK})
"""The kinds of line a later request's input items may refer to (``ItemSources.offer``)."""
# One encoder for every line: json.dumps builds a new one per call when given options.
_ENCODER: Final = text_encoder(json.JSONEncoder(ensure_ascii=False, default=str))
_MEMORY: Final = Path("<memory>")
"""The path of an ``in_memory`` writer."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WriterState:
    """What a writer's lines leave for its next ones (``TranscriptWriter.state``)."""

    lines: int
    next_seq: int | None
    bases: MessageBases
    """The message shapes seen, each with the line that holds its base."""
    items: ItemSources
    texts: TextSources
    last_request: tuple[int, dict[str, Any]] | None
    """The previous model request's seq and body (never changed: shared)."""


class _LineFile:
    """A transcript file: lines encoded as they are written (so a line that cannot be is
    refused there, as a text file refuses it), put on disk by ``flush`` in one ``os.write``."""

    __slots__ = ("_fd", "_size", "_waiting")

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._waiting: list[bytes] = []
        self._size = 0

    def write(self, text: str) -> None:
        data = text.encode()
        self._waiting.append(data)
        self._size += len(data)
        if self._size >= _WRITE_AT:
            self.flush()

    def flush(self) -> None:
        if not self._waiting:
            return
        data = self._waiting[0] if len(self._waiting) == 1 else b"".join(self._waiting)
        self._waiting.clear()
        self._size = 0
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]

    def close(self) -> None:
        try:
            self.flush()
        finally:
            os.close(self._fd)


_Sink = _LineFile | io.StringIO
_OPEN_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC


def _opened(path: Path, append: bool) -> _LineFile:
    flags = _OPEN_FLAGS | (os.O_APPEND if append else os.O_TRUNC)
    try:
        try:
            return _LineFile(os.open(path, flags, 0o666))  # most folders exist: a batch's holds every task's
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            return _LineFile(os.open(path, flags, 0o666))
    except OSError as exc:  # before the run starts: nothing is lost
        raise UsageError(f"cannot write the transcript {path}: {os_reason(exc)}") from None


class TranscriptWriter:
    """An EventStream subscriber that appends each event to a JSONL file."""

    def __init__(
        self, path: str | Path, run_id: str, secrets: Iterable[str] = (), *,
        append: bool = False, first_seq: int | None = None, request_bodies: RequestBodies = "delta",
        grouped: bool = False,
    ) -> None:
        """``append`` adds to an existing transcript (a resumed run); ``first_seq`` numbers
        the lines from there on, whatever the events' own numbers (a batch task's transcript
        starts with the shared servers' records, and a resumed one goes on from its last).
        ``request_bodies="full"`` records every request body whole (no digests): the
        format transcripts had before deltas. ``grouped``: the lines ``HELD`` wait to be
        flushed with the next line that must be on disk at once (see the module's text)."""
        self.path = Path(path)
        self._start(_opened(self.path, append), run_id, secrets, first_seq, request_bodies)
        self._grouped = grouped

    def _start(self, file: _Sink, run_id: str, secrets: Iterable[str], first_seq: int | None,
               request_bodies: RequestBodies) -> None:
        self._file: _Sink | None = file
        self._grouped = False
        self.run_id = run_id
        self._secrets = frozenset(s for s in secrets if worth_redacting(s))
        self.lines = 0
        self._next_seq = first_seq
        self._pending: asyncio.TimerHandle | None = None
        """The scheduled flush of stream events written since the last flush."""
        self._deltas = request_bodies == "delta"
        self._bases = MessageBases()
        self._items = ItemSources()
        self._texts = TextSources()
        self._last_request: tuple[int, dict[str, Any]] | None = None
        """The previous model request's seq and body (its lists copied: the live ones grow)."""

    @classmethod
    def in_memory(cls, run_id: str, secrets: Iterable[str] = (), *, first_seq: int | None = None,
                  request_bodies: RequestBodies = "delta") -> TranscriptWriter:
        """A writer whose lines stay in memory (``text``): lines encoded once for many files."""
        writer = cls.__new__(cls)
        writer.path = _MEMORY
        writer._start(io.StringIO(), run_id, secrets, first_seq, request_bodies)
        return writer

    @property
    def secrets(self) -> frozenset[str]:
        """The secrets redacted from free text (besides ``redaction.remembered_secrets``)."""
        return self._secrets

    @property
    def next_seq(self) -> int | None:
        """The seq of the next line when the writer numbers them (``first_seq``), else None."""
        return self._next_seq

    @property
    def request_bodies(self) -> RequestBodies:
        return "delta" if self._deltas else "full"

    def add_secrets(self, secrets: Iterable[str]) -> None:
        self._secrets |= {s for s in secrets if worth_redacting(s)}

    def text(self) -> str:
        """The lines written so far, of an ``in_memory`` writer."""
        assert isinstance(self._file, io.StringIO), "only an in-memory writer keeps its text"
        return self._file.getvalue()

    def state(self) -> WriterState:
        """What the lines written so far left for the next ones (copied: this writer goes on)."""
        return WriterState(lines=self.lines, next_seq=self._next_seq, bases=self._bases.copy(),
                           items=self._items.copy(), texts=self._texts.copy(),
                           last_request=self._last_request)

    def start_from(self, text: str, state: WriterState) -> None:
        """Write ``text``, lines another writer made, as this one's first, and go on from the
        ``state`` they left there (its parts copied: it may start other writers too)."""
        if self._file is None:
            return
        assert not self.lines, "a writer starts from other lines before it writes its own"
        self._file.write(text)
        if not (self._grouped and self._flush_soon()):  # the servers' records: held like what came in
            self.flush()
        self.lines, self._next_seq = state.lines, state.next_seq
        self._bases, self._items, self._texts = state.bases.copy(), state.items.copy(), state.texts.copy()
        self._last_request = state.last_request

    def __call__(self, event: Event) -> None:
        if self._file is not None:
            self.write_record(event.to_record())

    def write_record(self, record: dict[str, Any]) -> None:
        """Write one event's record (``Event.to_record()``) as the next line."""
        if self._file is None:
            return
        seq = record.pop("seq")
        if self._next_seq is not None:
            seq, self._next_seq = self._next_seq, self._next_seq + 1
        line: dict[str, Any] = {"seq": seq, "time": record.pop("time")}
        if not self.lines or not self._deltas:
            line["run"] = self.run_id
            if self._deltas:
                line[FORMAT_FIELD] = FORMAT
        line.update(record)
        kind = line["kind"]
        if kind == _REQUEST:
            self._request_body(line)
        elif self._deltas and kind in _HOLD_ITEMS:
            self._items.offer(line)
        if (self._secrets or remembered_secrets()) and not _FREE_TEXT.isdisjoint(line):
            self._redact(line)  # remembered: OAuth tokens received meanwhile
        self._file.write(self._encoded(line, kind) + "\n")
        self.lines += 1
        if not (self._may_wait(kind, line) and self._flush_soon()):
            self.flush()

    def _may_wait(self, kind: str, line: dict[str, Any]) -> bool:
        """Whether the line may wait for the next flush (``HELD``; always a stream event)."""
        if not self._grouped:
            return kind in _BATCHED
        return kind in HELD or (kind in _HELD_IN and line.get("direction") == "in")

    def _redact(self, line: dict[str, Any]) -> None:
        for name in _FREE_TEXT_FIELDS:
            value = line.get(name)
            if isinstance(value, str):
                line[name] = redact(value, self._secrets)

    def _encoded(self, line: dict[str, Any], kind: str) -> str:
        """The line's text: its message as a delta when its shape was seen (then whole again
        when too deep to encode; such a message is no base)."""
        shape = message_shape(line) if self._deltas and kind in MCP_ROLES else None
        try:
            shrunk = self._shrunk(line, kind, shape) if self._deltas else None
            text = _ENCODER(line if shrunk is None else shrunk)
        except RecursionError:
            return _ENCODER(clip_depth(line, MAX_DEPTH))
        if shrunk is None and shape is not None:
            self._bases.remember(line, shape, text)
        return text

    def _shrunk(self, line: dict[str, Any], kind: str, shape: Shape | None) -> dict[str, Any] | None:
        """The line with what earlier lines hold left out (``shared.py``); None: write it whole."""
        if kind == _FEEDBACK:
            return self._texts.fold_feedback(line)
        shrunk = self._bases.shrink(line, shape) if shape is not None else None
        if shrunk is not None:
            self._texts.fold_message(shrunk)
        return shrunk

    def _request_body(self, line: dict[str, Any]) -> None:
        """A model request's body as a delta against the previous one, and its digest."""
        body = line.get("body")
        if not self._deltas:
            line.pop(DIGEST_FIELD, None)
            return
        if not isinstance(body, dict):
            return
        if line.get(DIGEST_FIELD) is None:  # a client that gave no digest of its bytes
            line[DIGEST_FIELD] = wire_digest(wire_bytes(body))
        if self._last_request is not None:
            seq, previous = self._last_request
            del line["body"]
            delta = body_delta(previous, body)
            self._refer(delta)
            line[DELTA_FIELD] = {"of": seq, **delta}
        self._items.clear()  # a later request refers to what came after this one
        self._last_request = line["seq"], {k: list(v) if isinstance(v, list) else v for k, v in body.items()}

    def _refer(self, delta: dict[str, Any]) -> None:
        """The delta's appended items and lists set whole that earlier lines hold, as
        references (``extend``, ``set_items``)."""
        for field, referred in (("append", "extend"), ("set", "set_items")):
            values: dict[str, Any] = delta.get(field) or {}
            for key, items in list(values.items()):
                entries = self._items.entries(items) if isinstance(items, list) else None
                if entries is not None:
                    del values[key]
                    delta.setdefault(referred, {})[key] = entries
            if field in delta and not values:
                del delta[field]

    def flush(self) -> None:
        """Put every line written so far on disk."""
        if self._file is not None:
            self._file.flush()

    def _flush_soon(self) -> bool:
        """Flush within ``FLUSH_INTERVAL``; False outside an event loop. One timer at a time,
        never cancelled by a flush meanwhile: a line held later waits less, not more, and a
        task's many flushes cost no timer each."""
        if self._pending is not None:
            return True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
        self._pending = loop.call_later(FLUSH_INTERVAL, self._timed_flush)
        return True

    def _timed_flush(self) -> None:
        self._pending = None
        self.flush()

    def close(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        if self._file is not None:
            try:
                self._file.flush()
            finally:
                self._file.close()
                self._file = None
