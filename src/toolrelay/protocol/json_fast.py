"""``json.loads``'s values, parsed by orjson wherever it is sure to give the very same.

orjson is a dependency for this alone (reading; nothing is written with it, so transcripts
and request bodies stay byte for byte what ``json.dumps`` makes): on a 50 MB transcript it
parses the lines in ~0.3 s of CPU against the stdlib scanner's ~0.9 s, and the stream
events' JSON-in-JSON data in a third of the time (bench/README.md, "fastjson").

Where orjson departs from ``json.loads`` it mostly refuses: NaN and Infinity, numbers past
the float range (``1e400``), lone surrogate escapes, a byte-order mark, text that is not
UTF-8, nesting past 1,024 levels. Then ``UNSURE`` is the answer and the caller asks
``json.loads``, whose value or error is the one it always gave. One departure is silent:
an integer beyond 64 bits becomes a float. Such an integer is 19 digits or more right after
one of ``:`` ``,`` ``[`` ``-`` or JSON whitespace (a float's long digits follow a ``.`` or
an ``e``), which one ``translate`` and ``find`` spot in C at ~1 ns a byte; a text that may
hold one is left to ``json.loads`` too (a digit string inside a JSON string may look like
one: that costs only speed). Duplicate keys (the last wins), ``-0.0``, ``1.0`` against
``1``, floats to the last bit and key order are the same in both; tests/protocol/
test_json_fast.py compares them case by case and on random numbers and texts.
"""

from __future__ import annotations

import json
from typing import Any, Final

import orjson

__all__ = ["UNSURE", "integer_runs", "loads", "orjson_value"]

UNSURE: Final[Any] = object()
"""``orjson_value``'s answer when only ``json.loads`` can say (a value or an error)."""

_BEFORE_NUMBER: Final = b':,[- \t\n\r'
"""What may stand right before a number's first digit in JSON (or nothing: it opens the text)."""
_SHAPES: Final = bytes(
    ord("0") if ord("0") <= byte <= ord("9") else ord("1") if byte in _BEFORE_NUMBER else ord(" ")
    for byte in range(256)
)
"""Each byte as its part in a number: a digit, a byte that may precede one, anything else."""
_DIGITS: Final = 19
"""An integer below -2**63 or above 2**64 - 1 has at least so many digits."""
_LONG_INTEGER: Final = b"1" + b"0" * _DIGITS
"""A run of so many digits where a number may begin, as ``_SHAPES`` shows it."""
_OPENING_INTEGER: Final = b"0" * _DIGITS
"""The same run opening the text (nothing before it)."""
_CHUNK: Final = 1 << 20
"""Bytes translated at a time (a copy that stays in the cache, not one as large as the file)."""


def loads(data: str | bytes | bytearray) -> Any:
    """``json.loads(data)``: the same value, or the same error."""
    value = orjson_value(data)
    return json.loads(data) if value is UNSURE else value


def orjson_value(data: str | bytes | bytearray) -> Any:
    """``json.loads(data)``'s value parsed by orjson, or ``UNSURE`` (only ``json.loads`` can say)."""
    if isinstance(data, str):
        try:
            data = data.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate, which orjson refuses anyway
            return UNSURE
    shapes = data.translate(_SHAPES)
    if _LONG_INTEGER in shapes or shapes.startswith(_OPENING_INTEGER):
        return UNSURE
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return UNSURE


def integer_runs(data: bytes, end: int) -> list[int]:
    """Where ``data[:end]`` may hold an integer orjson reads as a float: the offset of each
    such run's first digit (in order; a run of 40 digits is named once)."""
    found: list[int] = []
    width = len(_LONG_INTEGER)
    for start in range(0, end, _CHUNK):
        shapes = data[start:min(start + _CHUNK + width - 1, end)].translate(_SHAPES)
        if not start and shapes.startswith(_OPENING_INTEGER):
            found.append(0)
        at = shapes.find(_LONG_INTEGER)
        while 0 <= at < _CHUNK:
            found.append(start + at + 1)
            at = shapes.find(_LONG_INTEGER, at + width)
    return found

