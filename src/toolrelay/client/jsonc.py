"""JSON with comments and trailing commas (VS Code's JSONC), read with the stdlib parser.

Hand-edited MCP config files carry ``//`` and ``/* */`` comments and trailing commas.
``strip_jsonc`` blanks them out with spaces -- newlines are kept -- so ``json.loads``
reports errors at the same line and column as in the user's file.
"""

from __future__ import annotations

import json
from typing import Any

from ..protocol import json_depth

__all__ = ["JsoncError", "loads", "strip_jsonc"]


class JsoncError(ValueError):
    """Malformed JSONC: ``line`` and ``column`` are 1-based positions in the text."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.line = line
        self.column = column


def loads(text: str) -> Any:
    """Parse JSONC text; JsoncError with the position on failure."""
    if text.startswith("\ufeff"):
        text = " " + text[1:]
    stripped = strip_jsonc(text)
    try:
        return json_depth.loads(stripped)
    except json.JSONDecodeError as exc:
        raise JsoncError(exc.msg, exc.lineno, exc.colno) from None


def strip_jsonc(text: str) -> str:
    """``text`` with comments and trailing commas replaced by spaces (same positions)."""
    out = list(text)
    i, n = 0, len(text)
    last_comma: int | None = None  # a comma not yet followed by a value
    while i < n:
        char = text[i]
        if char == '"':
            i = _skip_string(text, i)
            last_comma = None
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            _blank(out, i, end)
            i = end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            _blank(out, i, end)
            i = end
            continue
        if char in "}]" and last_comma is not None:
            out[last_comma] = " "
        if char == ",":
            last_comma = i
        elif not char.isspace():
            last_comma = None
        i += 1
    return "".join(out)


def _skip_string(text: str, start: int) -> int:
    """Index just after the string literal opening at ``start``."""
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i + 1
        if text[i] == "\n":  # unterminated: let json.loads report it
            return i
        i += 1
    return i


def _blank(out: list[str], start: int, end: int) -> None:
    for j in range(start, end):
        if out[j] != "\n":
            out[j] = " "
