"""Tool parameters mirrored into HTTP headers (MCP 2026-07-28, SEP-2243), sans-IO.

A tool's ``inputSchema`` may mark a property ``"x-mcp-header": "Region"``; over Streamable
HTTP a ``tools/call`` then repeats that argument as ``Mcp-Param-Region`` so that proxies can
route on it without reading the body (the server checks the two agree). The revision's
rules for the mark, each checked here: it sits on a property reached from the root through
``properties`` alone (never under ``items``, a composition, a conditional or a ``$ref``
target), on a ``string``, ``integer`` or ``boolean`` one; its value is a non-empty HTTP
token (RFC 9110 ``tchar``), unique in the schema ignoring case. A tool whose marks break
a rule is invalid as a whole: the client leaves it out. The value goes as text (``true`` /
``false`` for booleans), wrapped ``=?base64?…?=`` when it is not plain printable ASCII;
an argument that is absent or null has no header.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from .request_envelope import encode_header_value

__all__ = [
    "HEADER_KEY",
    "PARAM_HEADER_PREFIX",
    "Annotations",
    "annotation_problem",
    "header_marks",
    "marks_of",
    "mirrored",
]

HEADER_KEY: Final = "x-mcp-header"
PARAM_HEADER_PREFIX: Final = "mcp-param-"
Annotations = Mapping[tuple[str, ...], str]
"""Property path (``properties`` keys from the root) → the header's name after the prefix."""

_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TYPES: Final = frozenset({"string", "integer", "boolean"})
_ONE_SCHEMA: Final = frozenset({
    "items", "contains", "additionalProperties", "propertyNames", "unevaluatedItems",
    "unevaluatedProperties", "not", "if", "then", "else", "contentSchema",
})
_SCHEMA_LISTS: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_MAPS: Final = frozenset({"patternProperties", "dependentSchemas", "$defs", "definitions"})


def annotation_problem(schema: Any) -> str | None:
    """Why the marks in ``schema`` break the revision's rules (None: they keep them)."""
    seen: dict[str, str] = {}
    for path, node in _positions(schema):
        if HEADER_KEY not in node:
            continue
        if not path:
            return f"{HEADER_KEY} is allowed only on a property reached through properties"
        where, name = ".".join(path), node[HEADER_KEY]
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            return f"property {where!r}: {HEADER_KEY} must be a non-empty HTTP token, not {_shown(name)}"
        if node.get("type") not in _TYPES:
            return f"property {where!r}: {HEADER_KEY} is allowed only on string, integer or boolean ones"
        if (first := seen.get(name.lower())) is not None:
            return f"property {where!r}: {HEADER_KEY} {name!r} is already used by property {first!r}"
        seen[name.lower()] = where
    return None


def marks_of(schema: Any) -> dict[tuple[str, ...], str]:
    """The marked properties of a schema that ``annotation_problem`` accepts."""
    return {path: node[HEADER_KEY] for path, node in _positions(schema)
            if path and isinstance(node.get(HEADER_KEY), str)}


def mirrored(marked: Annotations, arguments: Any) -> dict[str, str]:
    """The ``Mcp-Param-*`` headers of one call's ``arguments`` (lowercase names)."""
    headers: dict[str, str] = {}
    for path, name in marked.items():
        value = _value_at(arguments, path)
        text = _text(value)
        if text is not None:
            headers[PARAM_HEADER_PREFIX + name.lower()] = encode_header_value(text)
    return headers


def header_marks(tools: list[dict[str, Any]]) -> dict[str, Annotations]:
    """The marks of each listed tool that has valid ones (a tool whose marks break a rule
    is not offered: the offer chain withholds it, naming the rule)."""
    marked: dict[str, Annotations] = {}
    for tool in tools:
        schema = tool.get("inputSchema")
        if annotation_problem(schema) is None and (found := marks_of(schema)):
            marked[str(tool.get("name"))] = found
    return marked


def _positions(root: Any) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Every subschema with its ``properties`` path (None once another keyword was crossed)."""
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), root)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield path, node
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                stack.extend((None if path is None else (*path, name), sub) for name, sub in value.items())
            elif key in _ONE_SCHEMA:
                stack.append((None, value))
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                stack.extend((None, sub) for sub in value)
            elif key in _SCHEMA_MAPS and isinstance(value, dict):
                stack.extend((None, sub) for sub in value.values())


def _value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(arguments, dict):
            return None
        arguments = arguments.get(key)
    return arguments


def _text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int)):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # an integer property's 42.0 is 42
    return None  # absent, null, or not a value the mark allows: no header


def _shown(name: Any) -> str:
    return repr(name) if isinstance(name, str) else f"a {type(name).__name__}"
