"""Server-sent events (text/event-stream) framing, sans-IO: bytes in, ``StreamEvent`` out.

A streamed Responses answer is a sequence of SSE messages, ``event: TYPE`` and
``data: JSON`` lines ended by a blank line. ``SseParser.feed(bytes)`` returns every event
completed by those bytes, however the bytes were split (a multi-byte character, a CRLF
or a line cut across two reads is joined first). The rules are the WHATWG event-stream
ones: lines end with LF, CRLF or CR; ``:`` starts a comment; a value loses one leading
space; several ``data`` lines join with ``\\n``; an event without data is not
dispatched; a leading byte-order mark is dropped. ``id`` and ``retry`` are read and
ignored (the Responses API resumes by ``sequence_number``, not by ``Last-Event-ID``).

Each event is bounded (``max_event_bytes``): one larger raises ``EventTooLarge`` before
it is buffered whole. The whole stream's bound is the reader's (it counts the bytes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from . import json_fast
from .json_depth import nested_too_deep

__all__ = ["DEFAULT_MAX_EVENT_BYTES", "EventTooLarge", "SseParser", "StreamEvent"]

DEFAULT_MAX_EVENT_BYTES: Final = 64 * 1024 * 1024
"""A ``response.completed`` event carries the whole response: as large as a whole answer."""
_BOM: Final = b"\xef\xbb\xbf"
_UNPARSED: Final[Any] = object()


class EventTooLarge(ValueError):
    """One server-sent event is larger than the cap (internal: the model client's
    ``ModelAnswerUnreadable``)."""

    def __init__(self, cap: int) -> None:
        super().__init__(f"a server-sent event is larger than {cap} bytes")
        self.cap = cap


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamEvent:
    """One server-sent event as received."""

    index: int
    """Its position in this attempt's stream, from 0."""
    event: str | None
    """The SSE ``event:`` field, if any."""
    data: str
    """The SSE ``data:`` text, exactly as received (several lines joined by ``\\n``)."""
    _parsed: Any = field(default=_UNPARSED, init=False, repr=False, compare=False)

    @property
    def payload(self) -> dict[str, Any] | None:
        """The data as a JSON object; None when it is not one (parsed once, on first use)."""
        parsed = self._parsed
        if parsed is _UNPARSED:
            parsed = _json_object(self.data)
            object.__setattr__(self, "_parsed", parsed)
        return parsed  # type: ignore[no-any-return]

    @property
    def type(self) -> str | None:
        """The data's ``type`` (what the Responses API dispatches on), else the ``event:`` field."""
        payload = self.payload
        kind = payload.get("type") if payload is not None else None
        return kind if isinstance(kind, str) else self.event


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json_fast.loads(text)  # json.loads's value, by orjson where it is the same
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python recurses
        return None
    if nested_too_deep(value, text):  # later walks (assembling, verify) must not recurse that deep
        return None
    return value if isinstance(value, dict) else None


class SseParser:
    """Turns the bytes of an event stream into ``StreamEvent`` values, in order."""

    def __init__(self, *, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self.max_event_bytes = max_event_bytes
        self._partial: list[bytes] = []
        """The bytes of a line not yet ended."""
        self._partial_size = 0
        self._pending_cr = False
        """The last byte seen was a CR: an LF first in the next bytes ends no second line."""
        self._started = False
        self._event: str | None = None
        self._data: list[str] = []
        self._event_size = 0
        self._count = 0

    @property
    def events(self) -> int:
        """Events dispatched so far."""
        return self._count

    def feed(self, data: bytes) -> list[StreamEvent]:
        """The events these bytes complete (raises ``EventTooLarge`` past the cap)."""
        if not self._started:
            data = self._skip_bom(data)
        if self._pending_cr and data[:1] == b"\n":
            data = data[1:]
        self._pending_cr = False
        if b"\r" in data:
            self._pending_cr = data.endswith(b"\r")
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if b"\n" not in data:
            self._keep_partial(data)
            return []
        if self._partial:
            data = b"".join(self._partial) + data
            self._partial.clear()
            self._partial_size = 0
        *lines, rest = data.split(b"\n")
        found: list[StreamEvent] = []
        self._lines(lines, found)
        self._keep_partial(rest)
        return found

    def end(self) -> list[StreamEvent]:
        """At the stream's clean end: the last event, when its final blank line is missing."""
        lines = [b"".join(self._partial)] if self._partial else []
        self._partial.clear()
        self._partial_size = 0
        found: list[StreamEvent] = []
        self._lines([*lines, b""], found)
        return found

    def _skip_bom(self, data: bytes) -> bytes:
        joined = b"".join(self._partial) + data
        if len(joined) < len(_BOM) and _BOM.startswith(joined):
            return data  # too few bytes to tell yet; they wait as a partial line
        self._started = True
        if joined.startswith(_BOM):
            self._partial.clear()
            self._partial_size = 0
            return joined[len(_BOM):]
        return data

    def _keep_partial(self, data: bytes) -> None:
        if not data:
            return
        self._partial.append(data)
        self._partial_size += len(data)
        if self._event_size + self._partial_size > self.max_event_bytes:
            raise EventTooLarge(self.max_event_bytes)

    def _lines(self, lines: list[bytes], found: list[StreamEvent]) -> None:
        """Read whole lines (the common fields first: this runs once per line of the stream)."""
        cap = self.max_event_bytes
        for line in lines:
            if not line:
                if self._data:
                    data = "\n".join(self._data)
                    found.append(StreamEvent(index=self._count, event=self._event, data=data))
                    self._count += 1
                self._event, self._data, self._event_size = None, [], 0
                continue
            self._event_size += len(line) + 1
            if self._event_size > cap:
                raise EventTooLarge(cap)
            if line.startswith(b"data:"):
                value = line[6:] if line[5:6] == b" " else line[5:]
                self._data.append(value.decode("utf-8", errors="replace"))
            elif line.startswith(b"event:"):
                value = line[7:] if line[6:7] == b" " else line[6:]
                self._event = value.decode("utf-8", errors="replace")
            elif line == b"data":  # a field without a colon: its value is empty
                self._data.append("")
            # anything else is a comment (":..."), or a field toolrelay ignores ("id", "retry")
