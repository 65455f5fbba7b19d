"""Test helpers for the declare stage: schema/value generators and an independent checker
of the OpenAI strict rules (written from the guide, not from strict.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

# The node-level rules of the strict subset, restated here on purpose (not imported).
FORBIDDEN_IN_STRICT = {
    "allOf",
    "not",
    "dependentRequired",
    "dependentSchemas",
    "if",
    "then",
    "else",
    "default",
    "$schema",
    "oneOf",
    "minLength",
    "maxLength",
    "patternProperties",
    "unevaluatedProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
}
STRICT_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
READ_TEXT_FILE_SCHEMA: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "tail": {"description": "If provided, returns only the last N lines of the file", "type": "number"},
        "head": {"description": "If provided, returns only the first N lines of the file", "type": "number"},
    },
    "required": ["path"],
}
"""spec.md §B1: the inputSchema of the Node reference server's read_text_file (2026.8.31)."""
READ_TEXT_FILE_TOOL: dict[str, Any] = {
    "name": "read_text_file",
    "title": "Read Text File",
    "description": (
        "Read the complete contents of a file from the file system as text. Handles various text "
        "encodings and provides detailed error messages if the file cannot be read. Use this tool "
        "when you need to examine the contents of a single file. Use the 'head' parameter to read "
        "only the first N lines of a file, or the 'tail' parameter to read only the last N lines "
        "of a file. Operates on the file as text regardless of extension. Only works within "
        "allowed directories."
    ),
    "inputSchema": READ_TEXT_FILE_SCHEMA,
    "annotations": {"readOnlyHint": True, "openWorldHint": False},
    "execution": {"taskSupport": "forbidden"},
}


def types_of(node: dict[str, Any]) -> list[str]:
    kind = node.get("type", [])
    return [kind] if isinstance(kind, str) else list(kind)


def subschemas(node: dict[str, Any], pointer: str) -> Iterator[tuple[Any, str]]:
    for key, child in node.get("properties", {}).items():
        yield child, f"{pointer}/properties/{key}"
    for key, child in node.get("$defs", {}).items():
        yield child, f"{pointer}/$defs/{key}"
    if "items" in node:
        yield node["items"], f"{pointer}/items"
    for index, child in enumerate(node.get("anyOf", [])):
        yield child, f"{pointer}/anyOf/{index}"


def strict_violations(schema: dict[str, Any]) -> list[str]:
    """Every way ``schema`` breaks the strict-mode rules; empty when it keeps them."""
    problems: list[str] = []
    if types_of(schema) != ["object"] or "anyOf" in schema:
        problems.append("/: root must be an object without anyOf")
    stack: list[tuple[Any, str]] = [(schema, "")]
    while stack:
        node, pointer = stack.pop()
        if not isinstance(node, dict):
            problems.append(f"{pointer}: not a schema object")
            continue
        problems.extend(_node_violations(node, pointer))
        stack.extend(subschemas(node, pointer))
    return problems


def _node_violations(node: dict[str, Any], pointer: str) -> list[str]:
    problems = [f"{pointer}/{key}: forbidden" for key in node if key in FORBIDDEN_IN_STRICT]
    if "format" in node and node["format"] not in STRICT_FORMATS:
        problems.append(f"{pointer}/format: unsupported")
    if not any(key in node for key in ("type", "$ref", "anyOf", "enum", "const")):
        problems.append(f"{pointer}: untyped")
    if "$ref" in node and len(node) > 1:
        problems.append(f"{pointer}: $ref with siblings")
    if "object" in types_of(node):
        properties = node.get("properties")
        if node.get("additionalProperties") is not False:
            problems.append(f"{pointer}: additionalProperties is not false")
        if not isinstance(properties, dict) or sorted(node.get("required", [])) != sorted(properties):
            problems.append(f"{pointer}: required is not every property")
    if "array" in types_of(node) and not isinstance(node.get("items"), dict):
        problems.append(f"{pointer}: array items missing")
    return problems


# -- generated original schemas ------------------------------------------------------------------

NAMES = st.sampled_from(["a", "b", "c", "default", "format", "type", "x/y", "t~1", "é", "n"])
DEF_NAMES = ["Node", "Leaf"]


def _leaf(*, refs: bool) -> st.SearchStrategy[dict[str, Any]]:
    scalar = st.sampled_from(["string", "number", "integer", "boolean"])
    extras = st.fixed_dictionaries(
        {}, optional={"description": st.sampled_from(["d", "a note"]), "title": st.just("T")}
    )
    typed = st.builds(lambda kind, more: {"type": kind, **more}, scalar, extras)
    return st.one_of(
        typed,
        st.builds(
            lambda fmt: {"type": "string", "format": fmt}, st.sampled_from(["uri", "date-time", "email"])
        ),
        st.builds(lambda d: {"type": "integer", "default": d}, st.integers(-3, 3)),
        st.builds(
            lambda v: {"type": "string", "enum": v},
            st.lists(st.text("xyz", max_size=2), min_size=1, max_size=3, unique=True),
        ),
        st.builds(
            lambda v: {"enum": v},
            st.lists(
                st.one_of(st.integers(0, 3), st.sampled_from(["p", "q"]), st.none()),
                min_size=1,
                max_size=3,
                unique=True,
            ),
        ),
        st.builds(lambda v: {"const": v}, st.sampled_from(["k", 1, True])),
        st.just({"type": ["string", "null"]}),
        st.just({"type": "object", "properties": {}, "additionalProperties": False}),
        *([st.builds(lambda name: {"$ref": f"#/$defs/{name}"}, st.sampled_from(DEF_NAMES))] if refs else []),
    )


def _object(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        properties = draw(st.dictionaries(NAMES, children, max_size=4))
        required = [name for name in properties if draw(_BOOLEANS)]
        node: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            node["required"] = required
        if draw(_BOOLEANS):
            node["additionalProperties"] = False
        return node

    return build()


def _composite(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        _object(children),
        st.builds(lambda items: {"type": "array", "items": items}, children),
        st.builds(lambda items: {"type": "array", "items": items, "minItems": 1}, children),
        st.builds(lambda branches: {"anyOf": branches}, st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda only: {"allOf": [only]}, children),
    )


_BOOLEANS = st.booleans()
LEAVES = _leaf(refs=True)
SCHEMA_NODES = st.recursive(LEAVES, _composite, max_leaves=8)
_ROOTS = _object(SCHEMA_NODES)
_LEAF_DEFS = _object(_leaf(refs=False))


@st.composite
def original_schemas(draw: st.DrawFn) -> dict[str, Any]:
    """A random MCP-style inputSchema: an object root, $defs that may refer to each other."""
    root = draw(_ROOTS)
    # Refs inside $defs recurse; optional ones keep every value finite (they can be null).
    root["$defs"] = {
        "Node": {
            "type": "object",
            "properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/Node"}},
            "required": ["v"],
        },
        "Leaf": draw(_LEAF_DEFS),
    }
    if draw(_BOOLEANS):
        root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return root


# -- values from a strict schema --------------------------------------------------------------------


class Exhausted(Exception):
    """The value generator ran out of budget (a recursive schema chose to go deep)."""


def resolve(root: dict[str, Any], ref: str) -> dict[str, Any]:
    node: Any = root
    for part in ref.removeprefix("#").split("/")[1:]:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    assert isinstance(node, dict)
    return node


def strict_value(draw: st.DrawFn, schema: dict[str, Any], root: dict[str, Any], budget: int = 30) -> Any:
    """A value valid under ``schema`` (a strict schema), drawn at random."""
    if budget <= 0:
        raise Exhausted
    if "$ref" in schema:
        return strict_value(draw, resolve(root, schema["$ref"]), root, budget - 1)
    if "anyOf" in schema:
        return strict_value(draw, draw(st.sampled_from(schema["anyOf"])), root, budget - 1)
    if "const" in schema:
        return schema["const"]
    kinds = types_of(schema)
    if "enum" in schema:
        allowed = [v for v in schema["enum"] if not kinds or _json_kind(v) in kinds]
        return draw(st.sampled_from(allowed))
    kind = draw(st.sampled_from(kinds))
    if kind == "object":
        return {k: strict_value(draw, v, root, budget - 1) for k, v in schema["properties"].items()}
    if kind == "array":
        size = draw(st.integers(schema.get("minItems", 0), 2))
        return [strict_value(draw, schema["items"], root, budget - 1) for _ in range(size)]
    return draw(_scalar(kind))


def _scalar(kind: str) -> st.SearchStrategy[Any]:
    return {
        "string": st.text(max_size=3),
        "number": st.floats(allow_nan=False, allow_infinity=False, width=32),
        "integer": st.integers(-5, 5),
        "boolean": st.booleans(),
        "null": st.none(),
    }[kind]


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}[type(value)]
