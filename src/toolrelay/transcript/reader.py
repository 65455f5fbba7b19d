"""Read a JSONL transcript back: the events in order, or a usage error naming the line.

A run killed while writing may leave a last line cut short; that line is dropped and
reported (``cut_tail``), because everything before it is a valid prefix. Any other
unreadable line makes the file unusable as evidence: a UsageError (exit 2) names it. A
line nested deeper than ``json_depth.RECORD_DEPTH`` is unreadable too (too deep to walk).

A model request recorded as changes (``body_delta``, see ``delta.py``) gets its whole
``body`` back here, so whatever reads a transcript sees every body as it was sent, whether
the file holds deltas or (as older transcripts do) whole bodies; the delta itself is
dropped from the event. A delta that cannot be applied is an unreadable line.

Likewise (``shared.py``, format 2) a JSON-RPC message recorded as changes to an earlier one
gets its whole ``message`` back, in its place, a request's referenced input items are the
items the lines named hold, and a line without ``run`` (every line after the first) gets
the run id of the line before it. A file of a newer format than this reader's is refused.

Each line is parsed by orjson, whose values are ``json.loads``'s (``json_fast``: a line
that may hold an integer beyond 64 bits is parsed by ``json.loads``'s scanner). A file
orjson cannot take line by line (a bad line, a CR, a blank or too deep line) is read as
text with the stdlib scanner, as it always was, which names the bad line. Each line is made
whole as it comes from orjson (one pass); when a line cannot be made whole, every line is
parsed first, so that a later unreadable line is still the one named. The usual file is read
a block of about a megabyte at a time (never whole: its lines, their events); any other is
then read whole, by the paths above.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain, repeat
from json.scanner import make_scanner
from pathlib import Path
from typing import Any, BinaryIO, Final, cast

import orjson

from ..errors import UsageError
from ..events import ModelRequestEvent
from ..gc_pause import paused_gc
from ..protocol.json_depth import RECORD_DEPTH, loads, nested_too_deep
from ..protocol.json_fast import integer_runs
from .changes import apply_in_place, changed_copy
from .delta import DELTA_FIELD, apply_delta
from .shared import COPIES_FIELD, FORMAT, FORMAT_FIELD, MESSAGE_DELTA_FIELD, MESSAGE_FIELD, resolve

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
    with paused_gc():
        try:
            read = _read_streamed(source)
            data = source.read_bytes() if read is None else b""
        except OSError as exc:
            raise UsageError(f"cannot read transcript {source}: {_reason(exc)}") from None
        if read is None:
            read = _read_fast(data, source)
        if read is None:
            events, cut_tail = _read_text(data, source)
            events, runs = _rebuild(zip(repeat(b""), events, strict=False), source)
        else:
            events, runs, cut_tail = read
    if not events:
        raise UsageError(f"{source} holds no transcript events")
    _same_run(runs, source)
    return Transcript(path=source, events=events, cut_tail=cut_tail)


class _NotFast(Exception):
    """A line the fast paths (``_read_streamed``, ``_read_fast``) do not read (``_read_text``
    reads the file instead)."""


def _read_streamed(source: Path) -> tuple[list[dict[str, Any]], set[Any], bool] | None:
    """``_read_fast``'s answer for the usual file (a line that may hold a long integer, a bad
    one or a CR is none: None), the file read ``_CHUNK`` bytes at a time: its lines are parsed
    and made whole one block after another, so no copy of the whole file is made (nor split),
    and a block's memory is reused by the next (a copy of a 50 MB file cost 12,000 fresh
    pages, a page fault each). None sends the file to ``_read_fast``, which reads it whole
    and says what is wrong with it."""
    tail: list[bytes] = []
    """What follows the last newline read: the start of a line (or, at the end, a cut tail)."""
    with source.open("rb") as file:
        try:
            events, runs = _rebuild(chain.from_iterable(_blocks(file, tail)), source)
        except (_NotFast, orjson.JSONDecodeError, UsageError):
            return None
    cut = b"".join(tail)
    if not events or not _is_utf8(cut):
        return None
    return events, runs, bool(cut)


def _blocks(file: BinaryIO, tail: list[bytes]) -> Iterator[Iterator[tuple[bytes, dict[str, Any]]]]:
    """The lines of each block of ``file`` that end in it, paired with their events (parsed
    by orjson as they are reached); ``tail`` keeps what follows the last newline."""
    read = file.read
    while block := read(_CHUNK):
        if b"\r" in block:  # read as text, a CR ends a line too (universal newlines)
            raise _NotFast
        end = block.rfind(b"\n") + 1
        if not end:  # a line longer than a block
            tail.append(block)
            continue
        if tail:
            tail.append(block)
            block = b"".join(tail)
            end += len(block) - len(tail[-1])
            tail.clear()
        if end < len(block):
            tail.append(block[end:])
        if _long_integer_lines(block, end):  # parsed with closer care by _read_fast
            raise _NotFast
        lines = _lines(block, end)
        yield zip(lines, map(orjson.loads, lines), strict=True)


def _read_fast(data: bytes, source: Path) -> tuple[list[dict[str, Any]], set[Any], bool] | None:
    """The events made whole, their run ids and ``cut_tail``, each line parsed by orjson
    (``json_fast``: its values are ``json.loads``'s) and made whole right after (while its
    objects are still in the cache: a second pass over a large transcript's events costs
    the cache misses of reaching each again); None when a line is anything but one event
    (blank, two values, not JSON, too deep, not UTF-8) or the file holds a CR:
    ``_read_text`` then reads it as ever, and names a bad line."""
    if b"\r" in data:  # read as text, a CR ends a line too (universal newlines)
        return None
    end = data.rfind(b"\n") + 1
    cut_tail = 0 < end < len(data)  # a complete file ends with a newline
    if not end or (cut_tail and not _is_utf8(data[end:])):
        return None
    lines = _lines(data, end)
    careful = _long_integer_lines(data, end)
    # orjson's values as they come, a long line's depth asked in _rebuild's loop; a file that
    # may hold a long integer: each line looked at closer (_parsed)
    if careful:
        read = zip(repeat(b""), _parsed(lines, careful), strict=False)
    else:
        read = zip(lines, map(orjson.loads, lines), strict=True)
    try:
        events, runs = _rebuild(read, source)
    except (_NotFast, orjson.JSONDecodeError):
        return None
    except UsageError:  # a line that cannot be made whole; but a later one may be no event,
        try:           # and then the file is read as text, which names that line first
            events = list(_parsed(lines, careful))
        except _NotFast:
            return None
        _rebuild(zip(repeat(b""), events, strict=False), source)
        raise
    return events, runs, cut_tail


def _lines(data: bytes, end: int) -> list[bytes]:
    """The lines of ``data[:end]`` (which ends with a newline), each without its newline."""
    lines = data[:end].split(b"\n") if end < len(data) else data.split(b"\n")
    lines.pop()  # what follows the last newline
    return lines


def _parsed(lines: list[bytes], careful: set[int]) -> Iterator[dict[str, Any]]:
    """Each line's event; ``_NotFast`` at the first line that is none. A line that may hold
    an integer beyond 64 bits (``careful``, which orjson reads as a float) is parsed again
    by ``json.loads``'s scanner."""
    parse = orjson.loads
    for index, line in enumerate(lines):
        try:
            event = parse(line)
        except orjson.JSONDecodeError:
            raise _NotFast from None
        if not _is_event(event):
            raise _NotFast
        if careful and index in careful:
            event = _scanned_line(line)
        if len(line) > _LONG and nested_too_deep(event, line, RECORD_DEPTH):  # a shorter one cannot be
            raise _NotFast
        yield event


def _long_integer_lines(data: bytes, end: int) -> set[int]:
    """The lines of ``data[:end]`` that may hold an integer beyond 64 bits (by number from 0)."""
    found: set[int] = set()
    index, counted = 0, 0
    for offset in integer_runs(data, end):
        index += data.count(b"\n", counted, offset)
        counted = offset
        found.add(index)
    return found


def _scanned_line(line: bytes) -> dict[str, Any]:
    """The event ``json.loads``'s scanner reads in ``line``; ``_NotFast`` when it is not one."""
    text = line.decode("utf-8")
    try:
        value, stop = _SCAN(text, 0)
    except (StopIteration, ValueError, RecursionError):
        raise _NotFast from None
    if stop != len(text) or not _is_event(value):
        raise _NotFast
    return cast(dict[str, Any], value)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _read_text(data: bytes, source: Path) -> tuple[list[dict[str, Any]], bool]:
    """The events and ``cut_tail``, the file read as text (as ``Path.read_text`` reads it)."""
    try:
        text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read()
    except UnicodeDecodeError as exc:
        raise UsageError(f"cannot read transcript {source}: {_reason(exc)}") from None
    cut_tail = not text.endswith("\n") and bool(text.strip())  # a complete file ends with a newline
    if cut_tail:
        text = text[: text.rfind("\n") + 1]
    return _events(text, source), cut_tail


def _events(text: str, source: Path) -> list[dict[str, Any]]:
    """All lines in one pass of json's C scanner, or line by line to name a bad one.

    The nesting limit is checked line by line, and only on lines long enough to nest that
    deep (``nested_too_deep``): walking every event of a large transcript level by level
    cost more than a third of the parse."""
    events = _scanned(text)
    if events is None:
        lines = text.split("\n")
        return [_event(line, number, source) for number, line in enumerate(lines, 1) if line.strip()]
    return events


_REQUEST: Final = ModelRequestEvent.kind
_SCAN: Final[Callable[[str, int], tuple[Any, int]]] = cast(Any, make_scanner)(json.JSONDecoder())
"""The scanner ``json.loads`` runs (the C one), called on one line after another in place."""
_LONG: Final = 2 * RECORD_DEPTH
"""A line shorter than this cannot nest too deep (``nested_too_deep``)."""
_CHUNK: Final = 1 << 20
"""The bytes ``_read_streamed`` reads at a time (about a million: a block that stays in the cache)."""


def _scanned(text: str) -> list[dict[str, Any]] | None:
    """Each line's event, scanned where it lies in ``text`` (no joined copy of the file, no
    list of lines); None when a line is anything but one event followed by its newline
    (blank, padded, two values, not JSON, too deep): the line-by-line path then names it.

    Each value is what ``json.loads`` gives for its line (the same scanner); a line with
    spaces around its value, which ``json.loads`` accepts, takes the line-by-line path."""
    found: list[dict[str, Any]] = []
    scan, size, start = _SCAN, len(text), 0
    append = found.append
    try:
        while start < size:
            event, end = scan(text, start)
            if text[end] != "\n" or not _is_event(event):  # end < size: text ends with a newline
                return None
            if end - start > _LONG and nested_too_deep(event, text[start:end], RECORD_DEPTH):
                return None
            append(event)
            start = end + 1
    except (StopIteration, ValueError, RecursionError, IndexError):  # ValueError: JSONDecodeError, a huge int
        return None
    return found


def _rebuild(
    read: Iterable[tuple[bytes, dict[str, Any]]], source: Path,
) -> tuple[list[dict[str, Any]], set[Any]]:
    """Every line made whole again (in one pass, in order: a line refers only to earlier ones);
    the run ids the lines hold (``_same_run``). ``read`` pairs each event with its line, whose
    nesting is asked here when it is long (``nested_too_deep``; b"": asked already)."""
    events: list[dict[str, Any]] = []
    append = events.append
    bodies: dict[int, dict[str, Any]] = {}
    unreadable: set[int] = set()
    """Requests whose body is no object: verify's envelope check names the first."""
    by_seq: dict[int, dict[str, Any]] = {}
    run: Any = None
    runs: set[Any] = set()
    compact = False
    """A format 2 line was read: a line without run id has the one before it."""
    last = _LastReference()
    for line, event in read:
        if type(event) is not dict:  # a line orjson read (orjson makes no subclasses)
            raise _NotFast
        kind, seq = event.get("kind"), event.get("seq")
        if type(kind) is not str or (type(seq) is not int and not isinstance(seq, int)):
            raise _NotFast
        if len(line) > _LONG and nested_too_deep(event, line, RECORD_DEPTH):  # a shorter one cannot be
            raise _NotFast
        if FORMAT_FIELD in event:
            compact = _format(event.pop(FORMAT_FIELD), event, source) >= 2
        own: set[int] | None = None
        """The containers of a rebuilt message that are this line's own (None: all are)."""
        copies: Any = _ABSENT
        if MESSAGE_DELTA_FIELD in event:
            own, copies = _with_message(event, by_seq, source)
        if "run" in event:
            run = event["run"]
            if isinstance(run, str | None):  # any other run id is left to verify's envelope check
                runs.add(run)
        else:
            if compact:
                event["run"] = run
            if run is None or not compact:  # the run id it has (or that its line says by saying none)
                runs.add(None)
        if copies is not _ABSENT or COPIES_FIELD in event:
            copies = event.pop(COPIES_FIELD) if copies is _ABSENT else copies
            _with_copies(event, copies, own, by_seq, last, source)
            kind, seq = event["kind"], event["seq"]  # a copy may have replaced either
        if kind == _REQUEST:
            _rebuild_body(event, bodies, unreadable, by_seq, source)
        by_seq[seq] = event
        append(event)
    return events, runs


_ABSENT: Final[Any] = object()
"""No ``copies`` taken out of the line yet."""


def _format(value: Any, event: dict[str, Any], source: Path) -> int:
    if type(value) is not int or value < 1:
        raise UsageError(f"{source}: event seq {event['seq']} names no transcript format it could be in "
                         f"({value!r})")
    if value > FORMAT:
        raise UsageError(f"{source} is written in transcript format {value}, newer than this toolrelay "
                         f"reads ({FORMAT}): read it with the toolrelay that wrote it, or a later one")
    return value


def _with_message(
    event: dict[str, Any], by_seq: dict[int, dict[str, Any]], source: Path,
) -> tuple[set[int] | None, Any]:
    """The event's message rebuilt (in the event itself) from the message it is recorded
    against; the ids of the containers made for it (the line's own: every other part is the
    base's; None when the line has no ``copies``, which alone asks), and the line's ``copies``
    when they followed the delta (taken out of the line; else ``_ABSENT``)."""
    delta = event[MESSAGE_DELTA_FIELD]
    of = delta.get("of") if type(delta) is dict else None
    base = by_seq.get(of) if isinstance(of, int) else None
    message = base.get(MESSAGE_FIELD) if base is not None else None
    if type(message) is not dict:
        raise UsageError(f"{_said(event, source)} to a message the transcript does not hold before it")
    changed = delta.get("set")
    if type(changed) is not list:
        raise UsageError(f"{_said(event, source)} that cannot be applied: its changes are not an array")
    own: set[int] | None = None
    if changed:
        try:
            message, own = changed_copy(message, changed)
        except ValueError as exc:
            raise UsageError(f"{_said(event, source)} that cannot be applied: {exc}") from None
    copies = _put_message(event, message)
    if copies is _ABSENT and COPIES_FIELD not in event:
        return None, _ABSENT
    own = {id(message)} if own is None else own
    own.add(id(event))
    if not changed:
        own.discard(id(message))  # the base's own message, shared: a copy changes a copy of it
    return own, copies


def _put_message(event: dict[str, Any], message: dict[str, Any]) -> Any:
    """``message`` in the place of the event's delta (the line's fields keep their order: the
    ones after it are taken off the end and put back); the line's ``copies`` when they were
    among those (not put back: they are applied and dropped), else ``_ABSENT``."""
    after: list[tuple[str, Any]] = []
    copies: Any = _ABSENT
    holds_message = False
    key, value = event.popitem()
    while key != MESSAGE_DELTA_FIELD:
        if key == COPIES_FIELD:
            copies = value
        else:
            holds_message = holds_message or key == MESSAGE_FIELD
            after.append((key, value))
        key, value = event.popitem()
    if not holds_message:
        event[MESSAGE_FIELD] = message  # at the end (or in its place, if the line holds one before)
    for key, value in reversed(after):
        event[key] = message if key == MESSAGE_FIELD else value
    return copies


def _said(event: dict[str, Any], source: Path) -> str:
    return f"{source}: event seq {event['seq']} ({event['kind']}) records its message as changes"


def _with_copies(
    event: dict[str, Any], copies: Any, own: set[int] | None, by_seq: dict[int, dict[str, Any]],
    last: _LastReference, source: Path,
) -> None:
    """The strings ``copies`` (the event's) name put in their places (in the event itself: a
    container on the way that is not the line's own, ``own``, is copied first)."""
    try:
        if type(copies) is not list:
            raise ValueError("they are not [path, reference] pairs")
        for pair in copies:
            if type(pair) is not list or len(pair) != 2:
                raise ValueError("they are not [path, reference] pairs")
        found: list[Any] = []
        strings = True
        for path, ref in copies:
            value = last.value if last.names(ref, by_seq, event) else last.resolve(ref, by_seq, event)
            strings = strings and type(value) is str
            found.append([path, value])
        if not strings:
            raise ValueError("a reference names no string")
        apply_in_place(event, found, own)
    except ValueError as exc:
        raise UsageError(f"{source}: event seq {event['seq']} ({event['kind']}) copies strings it cannot "
                         f"find: {exc}") from None


class _LastReference:
    """The copy reference resolved last, and what it named: most copies name the string the
    one before named (a file read again), found again by comparing the references (in C)."""

    __slots__ = ("line", "ref", "steps", "value")

    def __init__(self) -> None:
        self.ref: Any = None
        self.steps: list[type] = []
        """The type of each of its steps: ``==`` takes 0 for False and 1 for 1.0, a step does not."""
        self.line: dict[str, Any] | None = None
        self.value: Any = None

    def names(self, ref: Any, by_seq: dict[int, dict[str, Any]], current: dict[str, Any]) -> bool:
        """Whether ``ref`` names what the last one did: the same steps (of the same types) in the
        same earlier line (a later line of the same seq is another; the current one may change)."""
        return (ref == self.ref and list(map(type, ref)) == self.steps and ref[0] != current["seq"]
                and by_seq.get(ref[0]) is self.line)

    def resolve(self, ref: Any, by_seq: dict[int, dict[str, Any]], current: dict[str, Any]) -> Any:
        """What ``ref`` names (``shared.resolve``), kept as the last when it is in an earlier line."""
        value = resolve(by_seq, ref, current)
        if ref[0] != current["seq"]:  # a line already read is never changed again
            self.ref, self.steps, self.line, self.value = ref, list(map(type, ref)), by_seq.get(ref[0]), value
        return value


def _rebuild_body(
    event: dict[str, Any], bodies: dict[int, dict[str, Any]], unreadable: set[int],
    by_seq: dict[int, dict[str, Any]], source: Path,
) -> None:
    """A delta-recorded request body made whole again, against the request it names."""
    if DELTA_FIELD in event:
        delta = event.pop(DELTA_FIELD)
        of = delta.get("of") if isinstance(delta, dict) else None
        base = bodies.get(of) if isinstance(of, int) else None
        if base is None and of in unreadable:
            unreadable.add(event["seq"])
            return
        if base is None:
            raise UsageError(f"{source}: event seq {event['seq']} (model_request) records its body as "
                             "changes to a request the transcript does not hold before it")
        try:
            event["body"] = apply_delta(base, delta, lambda path: resolve(by_seq, path))
        except ValueError as exc:
            raise UsageError(f"{source}: event seq {event['seq']} (model_request) records its body as "
                             f"changes that cannot be applied: {exc}") from None
    body = event.get("body")
    if isinstance(body, dict):
        bodies[event["seq"]] = body
    else:
        unreadable.add(event["seq"])


def _is_event(event: Any) -> bool:
    return (
        isinstance(event, dict) and isinstance(event.get("kind"), str) and isinstance(event.get("seq"), int)
    )


def _event(line: str, number: int, source: Path) -> dict[str, Any]:
    try:
        event = loads(line, max_depth=RECORD_DEPTH)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{source}:{number} is not a JSON line: {exc.msg} (column {exc.colno})") from None
    if not isinstance(event, dict) or not isinstance(event.get("kind"), str):
        raise UsageError(f'{source}:{number} is not a transcript event (an object with a "kind")')
    if not isinstance(event.get("seq"), int):
        raise UsageError(f'{source}:{number} has no integer "seq"')
    return event


def _same_run(runs: set[Any], source: Path) -> None:
    if len(runs) > 1:
        shown = ", ".join(sorted(str(run) for run in runs))
        raise UsageError(f"{source} holds events of more than one run ({shown}); verify one run at a time")


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return "not UTF-8 text"
