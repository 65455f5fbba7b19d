"""Stage 1, declare (strict half): an MCP ``inputSchema`` → the OpenAI strict subset, and back.

In strict mode the API needs every object closed (``additionalProperties: false``) and
every property listed in ``required``. Blindly requiring every property (what the Agents
SDK does) turns optional parameters into mandatory ones: for ``read_text_file`` the model
would have to send ``head`` *and* ``tail``, which the server refuses. Here an optional
property becomes required *and nullable*, and ``optional_nulls.strip_optional_nulls``
removes those nulls again before the call, so the server receives what its own schema allows.

The conversion works on a copy of an untrusted schema, within budgets (nodes, depth, the
API's published limits). Anything the strict subset cannot express without changing what
the tool accepts (open objects, untyped values, tuple arrays, a root that is not a plain
object) makes the whole tool fall back to non-strict; keywords the subset lacks but whose
removal only loosens the schema (``minLength``, ``default``, unknown ``format`` ...) are
removed. Every change is recorded with its JSON pointer into the original schema.
Arguments are always validated against the original schema, so a loosened keyword is
still enforced, by toolrelay, before the call.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "MAX_DEPTH",
    "MAX_NODES",
    "OPENAI_LIMITS",
    "SUPPORTED_FORMATS",
    "SchemaChange",
    "StrictConversion",
    "accepts_null",
    "copy_json",
    "count_json_nodes",
    "json_pointer",
    "json_type_name",
    "resolve_local_ref",
    "to_strict",
]

MAX_NODES: Final = 50_000
"""Conversion budget: JSON values in one schema (a hostile server cannot make us spin). It
is above what the API's own limits allow (5000 properties of at least two values each)."""
MAX_DEPTH: Final = 32
"""Conversion budget: nested subschemas along one path."""
OPENAI_LIMITS: Final = {
    "properties": 5000,
    "nesting": 10,
    "enum_values": 1000,
    "name_chars": 120_000,
    "large_enum_values": 250,
    "large_enum_chars": 15_000,
}
"""The structured-outputs limits for one strict schema (see docs/declarations.md)."""
SUPPORTED_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_REMOVED_KEYWORDS: Final = frozenset(
    {
        "$schema", "default", "not", "if", "then", "else", "dependentRequired",
        "dependentSchemas", "dependencies", "minLength", "maxLength", "patternProperties",
        "unevaluatedProperties", "propertyNames", "minProperties", "maxProperties",
        "unevaluatedItems", "contains", "minContains", "maxContains", "uniqueItems",
        "prefixItems", "additionalItems",
    }
)
"""Keywords outside the strict subset whose removal only loosens the schema."""
_JSON_TYPES: Final = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
_TYPED_KEYS: Final = ("type", "$ref", "anyOf", "enum", "const")
_HOISTED_KEYS: Final = ("title", "description")
_MAX_REF_HOPS: Final = 32
_MISSING: Final = object()


@dataclass(slots=True, kw_only=True, frozen=True)
class SchemaChange:
    """One change made to a tool's parameters, at a JSON pointer into the original schema."""

    pointer: str
    """RFC 6901 pointer; ``""`` is the root (shown as ``/``)."""
    note: str

    def __str__(self) -> str:
        return f"{self.pointer or '/'}: {self.note}"


@dataclass(slots=True, kw_only=True, frozen=True)
class StrictConversion:
    """The strict parameters, or why the tool must stay non-strict."""

    parameters: dict[str, Any] | None
    """None when the conversion fell back."""
    changes: tuple[SchemaChange, ...]
    """Every change made (empty when it fell back: nothing of the conversion is used)."""
    fallback: SchemaChange | None = None
    """Where and why strict mode is impossible for this schema (the report line)."""
    fallback_reason: str | None = None
    """Just why, e.g. ``root uses anyOf``."""


class _CannotBeStrict(Exception):
    """A schema strict mode cannot express; ``to_strict`` turns it into a fallback."""

    def __init__(self, pointer: str, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.change = SchemaChange(pointer=pointer, note=f"fell back to non-strict: {reason}")


# -- JSON helpers --------------------------------------------------------------------------


def json_pointer(base: str, *parts: str | int) -> str:
    """``base`` extended by ``parts``, escaped as RFC 6901 requires."""
    escaped = (str(part).replace("~", "~0").replace("/", "~1") for part in parts)
    return base + "".join("/" + part for part in escaped)


def count_json_nodes(value: Any, limit: int) -> int:
    """JSON values inside ``value`` (itself included), counting stops just above ``limit``."""
    count = 0
    stack = [value]
    while stack and count <= limit:
        node = stack.pop()
        count += 1
        if isinstance(node, Mapping):
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
    return count


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value without recursion (no depth limit, no shared parts)."""
    if not isinstance(value, Mapping | list | tuple):
        return value
    root: Any = {} if isinstance(value, Mapping) else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        entries = source.items() if isinstance(source, Mapping) else enumerate(source)
        for key, item in entries:
            copied = item
            if isinstance(item, Mapping | list | tuple):
                copied = {} if isinstance(item, Mapping) else []
                stack.append((item, copied))
            if isinstance(target, dict):
                target[key] = copied
            else:
                target.append(copied)
    return root


def resolve_local_ref(root: Any, ref: str) -> Any:
    """The schema ``ref`` points to inside ``root`` (``#`` or ``#/...``), or None."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node = root
    for raw in ref[2:].split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


def _types(node: Mapping[str, Any]) -> list[str]:
    kind = node.get("type")
    if isinstance(kind, str):
        return [kind]
    return [t for t in kind if isinstance(t, str)] if isinstance(kind, list) else []


# -- the conversion --------------------------------------------------------------------------


def to_strict(schema: Mapping[str, Any]) -> StrictConversion:
    """Convert a copy of ``schema`` (already normalised, see declare.py) to strict mode."""
    try:
        _check_budget(schema)
        converted = copy_json(schema)
        walker = _StrictWalker(converted)
        walker.root_schema(converted)
        _check_openai_limits(converted)
    except _CannotBeStrict as failure:
        return StrictConversion(
            parameters=None, changes=(), fallback=failure.change, fallback_reason=failure.reason
        )
    return StrictConversion(parameters=converted, changes=tuple(walker.changes))


def _check_budget(schema: Mapping[str, Any]) -> None:
    if count_json_nodes(schema, MAX_NODES) > MAX_NODES:
        raise _CannotBeStrict("", f"schema has more than {MAX_NODES} nodes (conversion budget)")


class _StrictWalker:
    """Rewrites one copied schema in place, recording each change."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.changes: list[SchemaChange] = []

    def note(self, pointer: str, text: str) -> None:
        self.changes.append(SchemaChange(pointer=pointer, note=text))

    def root_schema(self, root: Any) -> None:
        if not isinstance(root, dict) or _types(root) != ["object"]:
            raise _CannotBeStrict("", 'root is not an object schema ({"type": "object"})')
        for keyword in ("anyOf", "oneOf", "allOf", "$ref"):
            if keyword in root:
                raise _CannotBeStrict("", f"root uses {keyword}")
        self.schema(root, "", depth=1, nesting=0)

    def schema(self, node: Any, pointer: str, *, depth: int, nesting: int) -> None:
        """Convert one subschema in place (the caller has put it where it belongs)."""
        if depth > MAX_DEPTH:
            raise _CannotBeStrict(pointer, f"schema nested deeper than {MAX_DEPTH} levels")
        if not isinstance(node, dict):
            raise _CannotBeStrict(pointer, f"a {json_type_name(node)} is not a schema strict mode accepts")
        self._drop_unsupported(node, pointer)
        branch_source = self._rewrite_unions(node, pointer)
        self._ensure_typed(node, pointer)
        if "$ref" in node:
            self._check_ref(node["$ref"], pointer)
        for index, branch in enumerate(node.get("anyOf", [])):
            branch_pointer = pointer if branch_source is None else json_pointer(pointer, branch_source, index)
            self.schema(branch, branch_pointer, depth=depth + 1, nesting=nesting)
        if "object" in _types(node):
            self._object(node, pointer, depth=depth, nesting=nesting + 1)
        if "array" in _types(node):
            self._array(node, pointer, depth=depth, nesting=nesting)
        self._definitions(node, pointer, depth=depth)

    def _drop_unsupported(self, node: dict[str, Any], pointer: str) -> None:
        for keyword in [key for key in node if key in _REMOVED_KEYWORDS]:
            del node[keyword]
            self.note(json_pointer(pointer, keyword), "removed (not supported in strict mode)")
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt not in SUPPORTED_FORMATS:
            del node["format"]
            self.note(json_pointer(pointer, "format"), f'removed (unsupported format "{fmt}")')

    def _rewrite_unions(self, node: dict[str, Any], pointer: str) -> str | None:
        """oneOf / one-entry allOf → anyOf, $ref with siblings → anyOf. Returns the keyword the
        anyOf branches had in the original (for their pointers); None: the branch is the node."""
        source = "anyOf"
        if "oneOf" in node:
            source = self._take_as_any_of(node, "oneOf", pointer)
            self.note(json_pointer(pointer, "oneOf"), "rewritten as anyOf (strict mode has no oneOf)")
        if "allOf" in node:
            all_of = node["allOf"]
            if isinstance(all_of, list) and len(all_of) == 1:
                source = self._take_as_any_of(node, "allOf", pointer)
                self.note(json_pointer(pointer, "allOf"), "rewritten as anyOf (one entry: same meaning)")
            else:
                del node["allOf"]
                self.note(json_pointer(pointer, "allOf"), "removed (not supported in strict mode)")
        if "$ref" in node and len(node) > 1:
            self._take_as_any_of(node, "$ref", pointer)
            node["anyOf"] = [{"$ref": node["anyOf"]}]
            self.note(json_pointer(pointer, "$ref"), "moved into anyOf (nothing may stand beside $ref)")
            return None
        return source

    @staticmethod
    def _take_as_any_of(node: dict[str, Any], keyword: str, pointer: str) -> str:
        if "anyOf" in node:
            raise _CannotBeStrict(pointer, f"uses both anyOf and {keyword}")
        node["anyOf"] = node.pop(keyword)
        return keyword

    def _ensure_typed(self, node: dict[str, Any], pointer: str) -> None:
        if not any(key in node for key in _TYPED_KEYS):
            implied = "object" if "properties" in node else "array" if "items" in node else None
            if implied is None:
                raise _CannotBeStrict(pointer, "schema without a type (strict mode needs one)")
            node["type"] = implied
            self.note(json_pointer(pointer, "type"), f'set to "{implied}" (implied by its keywords)')
        if "type" in node:
            kinds = [node["type"]] if isinstance(node["type"], str) else node["type"]
            if not isinstance(kinds, list) or not kinds or not all(kind in _JSON_TYPES for kind in kinds):
                raise _CannotBeStrict(json_pointer(pointer, "type"), f"unknown type {kinds!r}")
        for keyword in ("anyOf", "enum"):
            if keyword in node and not (isinstance(node[keyword], list) and node[keyword]):
                raise _CannotBeStrict(json_pointer(pointer, keyword), f"{keyword} is not a non-empty list")

    def _check_ref(self, ref: Any, pointer: str) -> None:
        here = json_pointer(pointer, "$ref")
        if not isinstance(ref, str) or not (ref == "#" or ref.startswith(("#/$defs/", "#/definitions/"))):
            raise _CannotBeStrict(here, f"$ref {ref!r} is not local (# or #/$defs/...)")
        if not isinstance(resolve_local_ref(self.root, ref), dict):
            raise _CannotBeStrict(here, f"$ref {ref!r} does not resolve to a schema")

    def _object(self, node: dict[str, Any], pointer: str, *, depth: int, nesting: int) -> None:
        if nesting > OPENAI_LIMITS["nesting"]:
            raise _CannotBeStrict(pointer, f"objects nested deeper than {OPENAI_LIMITS['nesting']} levels")
        self._close(node, pointer)
        properties = node["properties"]
        required = _required_names(node, pointer)
        for name in list(properties):
            here = json_pointer(pointer, "properties", name)
            self.schema(properties[name], here, depth=depth + 1, nesting=nesting)
            if name not in required:
                properties[name] = self._nullable(properties[name], here)
        if required != set(properties) or "required" not in node:
            node["required"] = list(properties)
            if properties:
                self.note(json_pointer(pointer, "required"), "lists every property (strict mode)")

    def _close(self, node: dict[str, Any], pointer: str) -> None:
        extra = node.get("additionalProperties", _MISSING)
        here = json_pointer(pointer, "additionalProperties")
        if extra is _MISSING:
            if "properties" not in node and pointer:
                raise _CannotBeStrict(pointer, "free-form object (no properties) cannot be strict")
            node["additionalProperties"] = False
            self.note(here, "set to false (strict mode)")
        elif extra is not False:
            raise _CannotBeStrict(here, "open object (additionalProperties is not false) cannot be strict")
        if "properties" not in node:
            node["properties"] = {}
            self.note(json_pointer(pointer, "properties"), "added {} (object without properties)")
        if not isinstance(node["properties"], dict):
            raise _CannotBeStrict(json_pointer(pointer, "properties"), "properties is not an object")

    def _nullable(self, node: dict[str, Any], pointer: str) -> dict[str, Any]:
        """The optional property's schema, made to accept null."""
        if accepts_null(node):
            self.note(pointer, "now required; already accepts null (optional)")
            return node
        self.note(pointer, "made nullable (optional)")
        if "const" in node or "$ref" in node:
            outer: dict[str, Any] = {key: node.pop(key) for key in _HOISTED_KEYS if key in node}
            return {"anyOf": [node, {"type": "null"}], **outer}
        if "type" in node and "null" not in _types(node):
            node["type"] = [*_types(node), "null"]
        if "anyOf" in node and not any(accepts_null(branch) for branch in node["anyOf"]):
            node["anyOf"].append({"type": "null"})
        if "enum" in node and None not in node["enum"]:
            node["enum"].append(None)
        return node

    def _array(self, node: dict[str, Any], pointer: str, *, depth: int, nesting: int) -> None:
        items = node.get("items", _MISSING)
        if items is _MISSING:
            raise _CannotBeStrict(pointer, "array without items (strict mode needs an item schema)")
        if isinstance(items, list):
            raise _CannotBeStrict(json_pointer(pointer, "items"), "tuple-form items cannot be strict")
        self.schema(items, json_pointer(pointer, "items"), depth=depth + 1, nesting=nesting)

    def _definitions(self, node: dict[str, Any], pointer: str, *, depth: int) -> None:
        for keyword in ("$defs", "definitions"):
            definitions = node.get(keyword, {})
            if not isinstance(definitions, dict):
                raise _CannotBeStrict(json_pointer(pointer, keyword), f"{keyword} is not an object")
            for name, definition in definitions.items():
                here = json_pointer(pointer, keyword, name)
                self.schema(definition, here, depth=depth + 1, nesting=0)


def _required_names(node: Mapping[str, Any], pointer: str) -> set[str]:
    required = node.get("required", [])
    here = json_pointer(pointer, "required")
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        raise _CannotBeStrict(here, "required is not a list of names")
    for name in required:
        if name not in node["properties"]:
            raise _CannotBeStrict(here, f'required property "{name}" is not declared in properties')
    return set(required)


def accepts_null(node: Any) -> bool:
    """Whether the schema certainly accepts null (False when it cannot tell, e.g. a $ref)."""
    if not isinstance(node, Mapping):
        return False
    if "const" in node or "$ref" in node:
        return "const" in node and node["const"] is None
    if "type" in node and "null" not in _types(node):
        return False
    if "enum" in node and None not in node["enum"]:
        return False
    if "anyOf" in node:
        return any(accepts_null(branch) for branch in node["anyOf"])
    return "type" in node or "enum" in node


def json_type_name(value: Any) -> str:
    """The JSON type of a Python value decoded from JSON (``integer`` for ints)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list | tuple) else "object"


# -- the API's size limits -------------------------------------------------------------------


def _subschemas(node: Mapping[str, Any]) -> Iterator[Any]:
    """The direct subschemas of a converted (strict) schema node."""
    for keyword in ("properties", "$defs", "definitions"):
        children = node.get(keyword)
        if isinstance(children, Mapping):
            yield from children.values()
    if "items" in node:
        yield node["items"]
    yield from node.get("anyOf", [])


def _check_openai_limits(root: Mapping[str, Any]) -> None:
    totals = {"properties": 0, "enum_values": 0, "name_chars": 0}
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        stack.extend(_subschemas(node))
        for keyword in ("properties", "$defs", "definitions"):
            names = node.get(keyword, {})
            totals["name_chars"] += sum(len(name) for name in names)
        totals["properties"] += len(node.get("properties", {}))
        _count_values(node, totals)
    for key, what in (("properties", "properties"), ("enum_values", "enum values"),
                      ("name_chars", "characters of names and enum/const values")):
        if totals[key] > OPENAI_LIMITS[key]:
            raise _CannotBeStrict("", f"more than {OPENAI_LIMITS[key]} {what} in total (OpenAI limit)")


def _count_values(node: Mapping[str, Any], totals: dict[str, int]) -> None:
    if isinstance(node.get("const"), str):
        totals["name_chars"] += len(node["const"])
    enum = node.get("enum")
    if not isinstance(enum, list):
        return
    chars = sum(len(value) for value in enum if isinstance(value, str))
    totals["enum_values"] += len(enum)
    totals["name_chars"] += chars
    if len(enum) > OPENAI_LIMITS["large_enum_values"] and chars > OPENAI_LIMITS["large_enum_chars"]:
        raise _CannotBeStrict(
            "", f"an enum of {len(enum)} values has {chars} characters (OpenAI limit: "
            f"{OPENAI_LIMITS['large_enum_chars']} above {OPENAI_LIMITS['large_enum_values']} values)"
        )
