"""stdio framing: one UTF-8 JSON message per line, with a size cap (sans-IO).

Feed raw bytes as they arrive; get back complete lines. A line longer than the cap is
never buffered whole: its bytes are dropped as they come and an ``Oversized`` marker
(size, plus the first and last bytes, enough to find the message's id) takes its place,
so a hostile or runaway peer cannot grow our memory.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Final

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "LineFramer", "Oversized", "find_id"]

DEFAULT_MAX_MESSAGE_BYTES: Final = 4 * 1024 * 1024
_EDGE: Final = 512  # bytes kept from each end of an oversized line


@dataclass(slots=True)
class Oversized:
    """Stands for a line that exceeded the cap; its content was discarded."""

    size: int
    head: bytes
    tail: bytes


class LineFramer:
    """Split a byte stream into lines of at most ``max_bytes`` (newline excluded)."""

    __slots__ = ("_buffer", "_max", "_skip_head", "_skip_size", "_skip_tail", "_skipping")

    def __init__(self, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self._max = max_bytes
        self._buffer = bytearray()
        self._skipping = False
        self._skip_size = 0
        self._skip_head = b""
        self._skip_tail = b""

    @property
    def max_bytes(self) -> int:
        return self._max

    def feed(self, data: bytes) -> list[bytes | Oversized]:
        """Consume ``data``; return every line it completed (without the newline)."""
        out: list[bytes | Oversized] = []
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                if start < len(data):
                    self._absorb(data[start:])
                return out
            if nl - start <= self._max and not self._buffer and not self._skipping:
                line = data[start:nl]  # a whole line in this chunk: no copy through the buffer
                out.append(line[:-1] if line.endswith(b"\r") else line)
            else:
                self._absorb(data[start:nl])
                out.append(self._finish_line())
            start = nl + 1

    def _absorb(self, chunk: bytes) -> None:
        if not chunk:
            return
        if self._skipping:
            self._skip_size += len(chunk)
            self._skip_tail = (self._skip_tail + chunk)[-_EDGE:]
            return
        self._buffer += chunk
        if len(self._buffer) > self._max:
            self._skipping = True
            self._skip_size = len(self._buffer)
            self._skip_head = bytes(self._buffer[:_EDGE])
            self._skip_tail = bytes(self._buffer[-_EDGE:])
            self._buffer = bytearray()

    def _finish_line(self) -> bytes | Oversized:
        if self._skipping:
            marker = Oversized(self._skip_size, self._skip_head, self._skip_tail)
            self._skipping = False
            self._skip_size = 0
            self._skip_head = self._skip_tail = b""
            return marker
        line = bytes(self._buffer)
        self._buffer.clear()
        if line.endswith(b"\r"):  # tolerate CRLF framing from peers on other platforms
            line = line[:-1]
        return line

    def pending_bytes(self) -> int:
        """Bytes of an unfinished line held in memory (bounded by the cap)."""
        return len(self._buffer)


_ID_VALUE = rb'(-?\d+|"(?:[^"\\]|\\.)*")'
# Top-level ids only: first member(s) at the start, or last member at the very end.
# The value must end there: "id":1.5 is no integer id 1.
_HEAD_ID: Final = re.compile(
    rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*' + _ID_VALUE + rb"(?=\s*[,}])"
)
_TAIL_ID: Final = re.compile(rb'"id"\s*:\s*' + _ID_VALUE + rb'\s*\}\s*$')


def find_id(marker: Oversized) -> int | str | None:
    """Best-effort id of an oversized message, so only its own request fails.

    Encoders put ``id`` near the start (Python SDK, ours) or last (Node SDK); only those
    top-level positions are trusted, never an "id" nested inside the result.
    """
    for pattern, edge in ((_HEAD_ID, marker.head), (_TAIL_ID, marker.tail)):
        found = pattern.search(edge)
        if found is None:
            continue
        try:
            value = json.loads(found.group(1))
        except ValueError:
            continue
        if isinstance(value, (int, str)) and not isinstance(value, bool):
            return value
    return None
