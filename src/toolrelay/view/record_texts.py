"""The side panel's texts as the page holds them: each shared with the one before it.

A long run's records repeat themselves: in replay mode every model request carries the
whole context so far, and a server's messages differ from each other in an id and an
argument. Embedded whole, 100 turns of 20 calls made a 75 MB page from a 6 MB transcript.
So each text is written as what changed against the previous text of its *key* (the
record's kind, and more for some: ``build._record_key``): the
characters they share at the head and at the tail, and the middle between; the page
joins them back, character for character, when the panel opens (``trace.js``
``recordText``). Lengths are counted in UTF-16 code units, as JavaScript counts them.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Final, Literal

__all__ = ["SHARED_AT_LEAST", "page_records", "shared_ends"]

SHARED_AT_LEAST: Final = 64
"""A text sharing fewer characters than this with the one before it is written whole."""

_BLOCK: Final = 4096
"""Bytes compared at once before the XOR (a multiple of four: whole characters)."""

PageRecord = str | list[int | str]
"""A text whole, or ``[base seq, head units, tail units, middle]``."""


def page_records(records: Mapping[int, str], keys: Mapping[int, Hashable]) -> dict[int, PageRecord]:
    """``records`` (seq → the exact text) as the page embeds them, in the same order; a
    seq whose key is missing is its own key (written whole)."""
    page: dict[int, PageRecord] = {}
    last: dict[Hashable, tuple[int, str]] = {}
    for seq, text in records.items():
        key = keys.get(seq, ("seq", seq))
        before = last.get(key)
        last[key] = (seq, text)
        if before is None:
            page[seq] = text
            continue
        base_seq, base = before
        head, tail = shared_ends(base, text)
        if head + tail < SHARED_AT_LEAST:
            page[seq] = text
        elif text.isascii():  # a character a unit
            page[seq] = [base_seq, head, tail, text[head:len(text) - tail]]
        else:
            page[seq] = [base_seq, _units(text[:head]), _units(text[len(text) - tail:]),
                         text[head:len(text) - tail]]
    return page


def shared_ends(before: str, after: str) -> tuple[int, int]:
    """How many characters ``after`` shares with ``before`` at its head, and then at its
    tail (the two never overlap in either text).

    The texts are compared as integers, XOR-ed: the highest bit set names the character
    that differs (from the start: big-endian; from the end: little-endian). A few C-level
    passes, where a loop over the characters of a 600 KB request took 30 ms."""
    if before.isascii() and after.isascii():
        first, second, width = before.encode("ascii"), after.encode("ascii"), 8
    else:  # four bytes a character; a lone surrogate is a character a JSON text can hold
        first, second, width = _utf32(before), _utf32(after), 32
    size = min(len(first), len(second))
    head = _shared(first[:size], second[:size], "big", width)
    room = size - head * width // 8
    if not room:
        return head, 0
    return head, _shared(first[len(first) - room:], second[len(second) - room:], "little", width)


def _shared(first: bytes, second: bytes, order: Literal["big", "little"], width: int) -> int:
    """How many characters of ``width`` bits two byte strings of one length share, from
    their start (``big``) or from their end (``little``): whole blocks skipped while they
    match (a slice compare each), then the first block that differs XOR-ed."""
    size, skipped = len(first), 0
    if size > _BLOCK:  # most records are shorter: one block, already whole
        while size - skipped > _BLOCK and _block(first, skipped, order) == _block(second, skipped, order):
            skipped += _BLOCK
        first, second = _block(first, skipped, order), _block(second, skipped, order)
    difference = int.from_bytes(first, order) ^ int.from_bytes(second, order)
    characters = (skipped + len(first)) * 8 // width
    return characters - 1 - (difference.bit_length() - 1) // width if difference else characters


def _block(data: bytes, skipped: int, order: Literal["big", "little"]) -> bytes:
    """The (at most) ``_BLOCK`` bytes after the ``skipped`` ones, from the start or the end."""
    if order == "big":
        return data[skipped:skipped + _BLOCK]
    return data[max(0, len(data) - skipped - _BLOCK):len(data) - skipped]


def _utf32(text: str) -> bytes:
    return text.encode("utf-32-be", "surrogatepass")


def _units(text: str) -> int:
    """``text``'s length as JavaScript counts it: characters beyond the BMP take two units."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2
