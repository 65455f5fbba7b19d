"""The view's fast paths give exactly what the slow ones give: a row's one-line text
(``rows.clip``) and a record's JSON text (``rows.compact``, as ``json.dumps`` writes it)."""

from __future__ import annotations

import json
import random
import sys
from decimal import Decimal
from typing import Any

import pytest

from toolrelay.view.rows import clip, compact

_PIECES = ["a", "é", "😀", " ", "  ", "\t", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85",
           "\u2028", "\u2029", "\u00a0", "\u3000", "\x00", "\x7f", "\ud800", "\udfff", "…", "⏎", "\u200b"]
"""Characters the two paths treat differently if any does: line breaks of every kind,
whitespace that is not a space, control characters, lone surrogates, beyond the BMP."""


def _clip_slowly(text: str, limit: int) -> str:
    """``clip`` before its fast path: every text split into lines and joined."""
    head = text[: limit * 4]
    flat = " ⏎ ".join(part for part in head.strip().splitlines() if part.strip())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def test_a_printable_character_is_no_line_break_and_no_whitespace_but_the_space() -> None:
    """What the fast path stands on: a printable text splits into no lines and strips only spaces."""
    found = [hex(code) for code in range(sys.maxunicode + 1)
             if chr(code).isprintable() and (len(f"a{chr(code)}b".splitlines()) > 1
                                             or (chr(code).isspace() and chr(code) != " "))]
    assert found == []


@pytest.mark.parametrize("limit", [1, 2, 10, 120, 240])
def test_clip_gives_what_the_line_by_line_join_gives(limit: int) -> None:
    chance = random.Random(limit)
    lengths = [0, 1, limit - 1, limit, limit + 1, 4 * limit - 1, 4 * limit, 4 * limit + 1]
    for _ in range(3000):
        size = chance.choice([*lengths, chance.randint(0, 5 * limit)])
        plain = chance.random() < 0.5  # half printable: the fast path, at and past the limits
        pieces = ["a", "é", "😀", " ", "…"] if plain else _PIECES
        text = "".join(chance.choice(pieces) for _ in range(max(size, 0)))
        assert clip(text, limit) == _clip_slowly(text, limit), (text, limit)


@pytest.mark.parametrize(("text", "line"), [
    ("", ""), ("   ", ""), ("  two words  ", "two words"), ("a\nb", "a ⏎ b"), ("a\u2028b", "a ⏎ b"),
    ("a\u00a0", "a"), ("x" * 121, "x" * 119 + "…"), ("x" * 120, "x" * 120), ("é" * 121, "é" * 119 + "…"),
])
def test_clip_words_a_text_as_one_line_of_the_limit(text: str, line: str) -> None:
    assert clip(text, 120) == line == _clip_slowly(text, 120)


class _Shown:
    def __str__(self) -> str:
        return "shown <by> str"


@pytest.mark.parametrize("value", [
    None, True, 0, -1, 2**64, -(2**70), 1.0, -0.0, 1e16, 1e-7, 0.1, float("nan"), float("inf"), float("-inf"),
    "", "plain", "é😀", "\x00\x1f\x7f\n\t\"\\", "\ud800 lone", "\u2028<&>",
    [], {}, [1, [2, [3, {}]]], {"b": 1, "a": [None, "x"]},
    {1: "int key", 2.5: "float key", None: "n", False: "f"},
    {"decimal": Decimal("1.10"), "object": _Shown(), "tuple": (1, 2), "set": {3}},
])
def test_compact_writes_what_json_dumps_writes(value: Any) -> None:
    assert compact(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
