"""Glob patterns as the reference server's ``search_files`` reads them (minimatch, dot: true).

A pattern matches a path relative to the searched directory, segment by segment: ``*``
and ``?`` stay inside one segment; ``**`` as a whole segment spans any number of them
(zero included, but ``a/**`` names what is below ``a``, not ``a``); ``[...]`` and
``[!...]`` are character classes; ``{a,b}`` and ``{1..3}`` are expanded first; a
backslash escapes the next character. Dot files match like any other name. Patterns
compile once and are cached.
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Final

__all__ = ["GlobError", "compile_glob"]

_MAX_ALTERNATIVES: Final = 256
_RANGE: Final = re.compile(r"(-?\d+)\.\.(-?\d+)")


class GlobError(ValueError):
    """A pattern that cannot be compiled (message for the caller)."""


@functools.lru_cache(maxsize=128)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """A regex whose ``fullmatch`` says whether a relative path matches ``pattern``."""
    alternatives = _expand_braces(pattern)
    try:
        return re.compile("|".join(f"(?:{_translate(alt)})" for alt in alternatives), re.DOTALL)
    except re.error as exc:
        raise GlobError(f"Invalid glob pattern {pattern!r}: {exc}") from None


def _expand_braces(pattern: str) -> list[str]:
    """``a{b,c}d`` → [abd, acd]; ``{1..3}`` → [1, 2, 3]; braces without either stay literal."""
    found = _first_brace(pattern)
    if found is None:
        return [pattern]
    start, end, options = found
    expanded: list[str] = []
    for option in options:
        expanded.extend(_expand_braces(pattern[:start] + option + pattern[end + 1 :]))
        if len(expanded) > _MAX_ALTERNATIVES:
            raise GlobError(f"Invalid glob pattern {pattern!r}: more than {_MAX_ALTERNATIVES} alternatives")
    return expanded


def _first_brace(pattern: str) -> tuple[int, int, list[str]] | None:
    """The first top-level ``{...}`` that expands: (start, end, options)."""
    depth, start, index = 0, 0, 0
    commas: list[int] = []
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            if depth == 0:
                start, commas = index, []
            depth += 1
        elif char == "," and depth == 1:
            commas.append(index)
        elif char == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                options = _brace_options(pattern, start, index, commas)
                if options is not None:
                    return start, index, options
        index += 1
    return None


def _brace_options(pattern: str, start: int, end: int, commas: list[int]) -> list[str] | None:
    if commas:
        bounds = [start, *commas, end]
        return [pattern[a + 1 : b] for a, b in itertools.pairwise(bounds)]
    numbers = _RANGE.fullmatch(pattern, start + 1, end)
    if numbers is None:
        return None
    first, last = int(numbers.group(1)), int(numbers.group(2))
    step = 1 if last >= first else -1
    if abs(last - first) >= _MAX_ALTERNATIVES:
        raise GlobError(f"Invalid glob pattern {pattern!r}: range too large")
    return [str(n) for n in range(first, last + step, step)]


def _translate(pattern: str) -> str:
    """One brace-free pattern → regex; a ``**`` segment absorbs its separators."""
    out: list[str] = []
    separator = False
    segments = pattern.split("/")
    for position, segment in enumerate(segments):
        last = position == len(segments) - 1
        if segment == "**":
            if last:
                out.append("/.*" if separator else ".*")  # a/** is below a, not a itself
            else:
                out.append(("/" if separator else "") + "(?:.*/)?")
                separator = False
            continue
        out.append(("/" if separator else "") + _segment(segment))
        separator = True
    return "".join(out)


def _segment(segment: str) -> str:
    """One path segment's wildcards → regex (never matching "/")."""
    out: list[str] = []
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "\\" and index + 1 < len(segment):
            out.append(re.escape(segment[index + 1]))
            index += 2
            continue
        if char == "[":
            found = _char_class(segment, index)
            if found is not None:
                regex, index = found
                out.append(regex)
                continue
        if char == "*":
            if not out or out[-1] != "[^/]*":  # ** inside a segment is just *
                out.append("[^/]*")
        else:
            out.append("[^/]" if char == "?" else re.escape(char))
        index += 1
    return "".join(out)


def _char_class(segment: str, start: int) -> tuple[str, int] | None:
    """``[...]`` at ``start`` → (regex class, index after it), or None if unclosed."""
    index = start + 1
    negate = index < len(segment) and segment[index] in "!^"
    if negate:
        index += 1
    body_start = index
    if index < len(segment) and segment[index] == "]":
        index += 1  # a leading "]" is a member
    close = segment.find("]", index)
    if close < 0:
        return None
    body = segment[body_start:close]
    members = []
    for at, char in enumerate(body):
        is_range = char == "-" and 0 < at < len(body) - 1 and "-" not in (body[at - 1], body[at + 1])
        members.append("-" if is_range else re.escape(char))
    return ("[^/" if negate else "(?!/)[") + "".join(members) + "]", close + 1
