"""The side panel's texts as the page holds them: each shared with the one before it.

A long run's records repeat themselves: in replay mode every model request carries the
whole context so far, and a server's messages differ from each other in an id and an
argument. Embedded whole, 100 turns of 20 calls made a 75 MB page from a 6 MB transcript.
So each text is written as what changed against the previous text of its *key* (the
record's kind, and for a JSON-RPC message its server, direction and method): the
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
        else:
            page[seq] = [base_seq, _units(text[:head]), _units(text[len(text) - tail:]),
                         text[head:len(text) - tail]]
    return page


def shared_ends(before: str, after: str) -> tuple[int, int]:
    """How many characters ``after`` shares with ``before`` at its head, and then at its
    tail (the two never overlap in either text)."""
    head = _first_difference(before[: len(after)], after[: len(before)], "big")
    room = min(len(before), len(after)) - head
    if not room:
        return head, 0
    return head, _first_difference(before[len(before) - room:], after[len(after) - room:], "little")


def _first_difference(first: str, second: str, order: Literal["big", "little"]) -> int:
    """How many characters two texts of one length share from their start ("big") or from
    their end ("little"): the texts as integers, four bytes a character, XOR-ed, so the
    highest bit set names the character that differs; a few C-level passes, where a loop
    over the characters of a 600 KB request took 30 ms."""
    size = len(first)
    difference = int.from_bytes(_utf32(first), order) ^ int.from_bytes(_utf32(second), order)
    return size - 1 - (difference.bit_length() - 1) // 32 if difference else size


def _utf32(text: str) -> bytes:
    return text.encode("utf-32-be", "surrogatepass")  # a lone surrogate a JSON text can hold
def _units(text: str) -> int:
    """``text``'s length as JavaScript counts it: characters beyond the BMP take two units."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2
