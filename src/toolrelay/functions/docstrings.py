"""A function's docstring as a tool's words: its description and each parameter's.

Google (``Args:``), NumPy (``Parameters`` underlined) and reST (``:param x:``) styles; the
description is the text before the first section, paragraphs kept.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Final

__all__ = ["Docstring", "parse_docstring"]

_GOOGLE_ARGS: Final = frozenset({"args", "arguments", "parameters", "params", "keyword args",
                                 "keyword arguments", "kwargs"})
_GOOGLE_SECTIONS: Final = _GOOGLE_ARGS | frozenset(
    {"returns", "return", "yields", "raises", "examples", "example", "note", "notes", "see also",
     "warning", "warnings", "attributes", "todo", "references"})
_REST_PARAM: Final = re.compile(r"^:param(?:\s+[^:]+?)?\s+(\*{0,2}\w+)\s*:\s*(.*)$")
_REST_FIELD: Final = re.compile(r"^:\w+")
_GOOGLE_ITEM: Final = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ITEM: Final = re.compile(r"^(\*{0,2}\w+)\s*(?::.*)?$")


@dataclass(frozen=True)
class Docstring:
    description: str = ""
    params: dict[str, str] = field(default_factory=dict)


def parse_docstring(text: str | None) -> Docstring:
    """The description and the parameters' descriptions of ``text`` (a raw ``__doc__``)."""
    if not text:
        return Docstring()
    lines = inspect.cleandoc(text).splitlines()
    start = _first_section(lines)
    description = "\n".join(lines[:start]).strip()
    params: dict[str, str] = {}
    index = start
    while index < len(lines):
        index = _read_section(lines, index, params)
    return Docstring(description, {name.lstrip("*"): words for name, words in params.items()})


def _first_section(lines: list[str]) -> int:
    for index, line in enumerate(lines):
        if _is_google_header(line) or _is_numpy_header(lines, index) or _REST_FIELD.match(line):
            return index
    return len(lines)


def _is_google_header(line: str) -> bool:
    return line.endswith(":") and line[:-1].strip().lower() in _GOOGLE_SECTIONS and not line[0].isspace()


def _is_numpy_header(lines: list[str], index: int) -> bool:
    below = lines[index + 1].strip() if index + 1 < len(lines) else ""
    return bool(lines[index].strip()) and len(below) >= 3 and set(below) == {"-"}


def _read_section(lines: list[str], index: int, params: dict[str, str]) -> int:
    """Read the section at ``index`` (its parameters into ``params``); the next one's index."""
    line = lines[index]
    if _REST_FIELD.match(line):
        return _read_rest_field(lines, index, params)
    if _is_numpy_header(lines, index):
        body_start, numpy = index + 2, True
    elif _is_google_header(line):
        body_start, numpy = index + 1, False
    else:
        return index + 1
    end = body_start
    while end < len(lines) and not (_is_google_header(lines[end]) or _is_numpy_header(lines, end)
                                    or _REST_FIELD.match(lines[end])):
        end += 1
    if line.strip().rstrip(":").lower() in _GOOGLE_ARGS:
        params.update(_numpy_items(lines[body_start:end]) if numpy else _google_items(lines[body_start:end]))
    return end


def _google_items(body: list[str]) -> dict[str, str]:
    items: dict[str, list[str]] = {}
    indent = min((len(b) - len(b.lstrip()) for b in body if b.strip()), default=0)
    current: list[str] | None = None
    for raw in body:
        if not raw.strip():
            continue
        own_indent = len(raw) - len(raw.lstrip())
        match = _GOOGLE_ITEM.match(raw.strip()) if own_indent == indent else None
        if match:
            current = items.setdefault(match.group(1), [])
            current.append(match.group(2).strip())
        elif current is not None:
            current.append(raw.strip())
    return {name: " ".join(w for w in words if w) for name, words in items.items()}


def _numpy_items(body: list[str]) -> dict[str, str]:
    items: dict[str, list[str]] = {}
    current: list[str] | None = None
    for raw in body:
        if not raw.strip():
            continue
        match = _NUMPY_ITEM.match(raw) if not raw[0].isspace() else None
        if match:
            current = items.setdefault(match.group(1), [])
        elif current is not None:
            current.append(raw.strip())
    return {name: " ".join(words) for name, words in items.items()}


def _read_rest_field(lines: list[str], index: int, params: dict[str, str]) -> int:
    match = _REST_PARAM.match(lines[index])
    words = [match.group(2).strip()] if match else []
    end = index + 1
    while end < len(lines) and lines[end].strip() and not _REST_FIELD.match(lines[end]):
        words.append(lines[end].strip())
        end += 1
    if match:
        params[match.group(1)] = " ".join(w for w in words if w)
    return end
