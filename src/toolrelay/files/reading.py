"""Text from an open regular file: head, tail or whole; bounded, strict UTF-8 (no MCP here).

The lines are those of coreutils: ``read_head(n)`` returns exactly what ``head -n N``
prints (the first N lines with their newlines, or the whole file when it has fewer) and
``read_tail(n)`` exactly what ``tail -n N`` prints (a last line without a newline counts
as a line). Bytes are kept as they are: CRLF stays CRLF.

Cost: head reads forward and tail reads backwards from the end, in blocks that start small
and double, so a call reads the lines it returns plus at most one block, whatever the size
of the file. Memory is bounded by the byte cap plus one block: a line longer than the cap
(a 1 GB file without a newline) stops at the cap, cut on a UTF-8 character boundary, and
the excerpt says it was truncated. Invalid UTF-8 raises ``InvalidText`` with the offset
of the first bad byte in the file; nothing is replaced silently.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Final

__all__ = [
    "FIRST_BLOCK",
    "MAX_BLOCK",
    "Excerpt",
    "FileChanged",
    "InvalidText",
    "TooLarge",
    "read_head",
    "read_tail",
    "read_whole",
]

FIRST_BLOCK: Final = 8 * 1024
MAX_BLOCK: Final = 1024 * 1024
_SCAN_LIMIT: Final = 64  # up to this many lines, find() one by one; beyond, bisect with count()
_NL: Final = b"\n"


class InvalidText(Exception):
    """The bytes to return are not valid UTF-8."""

    def __init__(self, offset: int, byte: int) -> None:
        super().__init__(f"invalid UTF-8 byte 0x{byte:02x} at byte offset {offset}")
        self.offset = offset
        self.byte = byte


class TooLarge(Exception):
    """A whole-file read above the byte cap (``size`` is at least cap + 1)."""

    def __init__(self, size: int) -> None:
        super().__init__(f"{size} bytes")
        self.size = size


class FileChanged(Exception):
    """The file shrank while it was being read."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Excerpt:
    """Text read from a file; ``truncated`` when the byte cap cut the lines asked for."""

    text: str
    truncated: bool = False


def read_head(
    fd: int, lines: int, *, cap: int, block: int = FIRST_BLOCK, max_block: int = MAX_BLOCK
) -> Excerpt:
    """``head -n lines`` of the file open at ``fd`` (read from its current offset)."""
    if lines <= 0:
        return Excerpt(text="")
    pieces: list[bytes] = []
    held = 0
    needed = lines
    while held <= cap:
        data = os.read(fd, block)
        if not data:
            break
        cut, found = _after_nth_newline(data, needed)
        if cut >= 0:
            data = data[:cut]
            pieces.append(data)
            held += len(data)
            break
        needed -= found
        pieces.append(data)
        held += len(data)
        block = min(block * 2, max_block)
    data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
    if len(data) > cap:
        end = _boundary_at_or_before(data, cap)
        return Excerpt(text=_decode(data[:end], 0), truncated=True)
    return Excerpt(text=_decode(data, 0))


def read_tail(
    fd: int, size: int, lines: int, *, cap: int, block: int = FIRST_BLOCK, max_block: int = MAX_BLOCK
) -> Excerpt:
    """``tail -n lines`` of the file open at ``fd``, whose size is ``size``."""
    if lines <= 0 or size <= 0:
        return Excerpt(text="")
    pieces: list[bytes] = []  # from the end backwards
    position = size
    needed = lines
    while position > 0:
        length = min(block, position)
        position -= length
        data = os.pread(fd, length, position)
        if len(data) != length:
            raise FileChanged()
        end = length
        if position + length == size and data.endswith(_NL):
            end -= 1  # the file's last newline ends the last line; it does not start one
        at, found = _nth_newline_from_end(data, needed, end)
        if at >= 0:
            pieces.append(data[at + 1 :])
            break
        needed -= found
        pieces.append(data)
        if size - position > cap:
            break
        block = min(block * 2, max_block)
    pieces.reverse()
    data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
    if len(data) > cap:
        begin = _boundary_at_or_after(data, len(data) - cap)
        return Excerpt(text=_decode(data[begin:], size - len(data) + begin), truncated=True)
    return Excerpt(text=_decode(data, size - len(data)))


def read_whole(fd: int, size: int, *, cap: int) -> Excerpt:
    """The whole file, or TooLarge when it holds more than ``cap`` bytes."""
    if size > cap:
        raise TooLarge(size)
    pieces: list[bytes] = []
    held = 0
    while held <= cap:
        # st_size is a hint (the file may grow; /proc files say 0): read one byte past it.
        data = os.read(fd, min(cap + 1 - held, max(size - held, 0) + 4096))
        if not data:
            break
        pieces.append(data)
        held += len(data)
    if held > cap:
        raise TooLarge(held)
    return Excerpt(text=_decode(pieces[0] if len(pieces) == 1 else b"".join(pieces), 0))


def _after_nth_newline(data: bytes, n: int) -> tuple[int, int]:
    """(index just past the n-th newline, n) — or (-1, newlines in ``data``) when it has fewer."""
    if n <= _SCAN_LIMIT:  # a few find() calls beat counting the whole block
        pos = -1
        for found in range(n):
            pos = data.find(_NL, pos + 1)
            if pos < 0:
                return -1, found
        return pos + 1, n
    total = data.count(_NL)
    if total < n:
        return -1, total
    lo, hi, before = 0, len(data), 0  # count(0, lo) == before < n <= count(0, hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        found = data.count(_NL, lo, mid)
        if before + found >= n:
            hi = mid
        else:
            before += found
            lo = mid
    return hi, n


def _nth_newline_from_end(data: bytes, n: int, end: int) -> tuple[int, int]:
    """(index of the n-th newline counted back from ``end``, n) — or (-1, newlines in
    ``data[:end]``) when it has fewer."""
    if n <= _SCAN_LIMIT:
        pos = end
        for found in range(n):
            pos = data.rfind(_NL, 0, pos)
            if pos < 0:
                return -1, found
        return pos, n
    total = data.count(_NL, 0, end)
    if total < n:
        return -1, total
    lo, hi, after = 0, end, 0  # count(lo, end) >= n > count(hi, end) == after
    while hi - lo > 1:
        mid = (lo + hi) // 2
        found = data.count(_NL, mid, hi)
        if after + found >= n:
            lo = mid
        else:
            after += found
            hi = mid
    return lo, n


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _boundary_at_or_before(data: bytes, end: int) -> int:
    """Move a cut at ``end`` back to the start of the character it splits (at most 3 bytes)."""
    stop = max(end - 3, 0)
    while end > stop and _is_continuation(data[end]):
        end -= 1
    return end


def _boundary_at_or_after(data: bytes, begin: int) -> int:
    """Move a cut at ``begin`` forward past the continuation bytes it lands on (at most 3)."""
    stop = min(begin + 3, len(data))
    while begin < stop and _is_continuation(data[begin]):
        begin += 1
    return begin


def _decode(data: bytes, offset: int) -> str:
    """Strict UTF-8; ``offset`` is where ``data`` starts in the file (for the error)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidText(offset + exc.start, data[exc.start]) from None
