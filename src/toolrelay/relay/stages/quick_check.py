"""Arguments that plainly satisfy a plain schema, told apart without jsonschema.

Most tools' input schemas are an object of a few typed properties, some required; the
jsonschema validator spends ~20-30 µs a call walking even those (a tenth of the relay's
own work per call, bench/README.md). ``quick_check(schema)`` compiles such a schema to a
predicate that says **True only when jsonschema would accept the value too**; anything
else (False, or a schema outside the subset: None) goes to jsonschema, which decides and
words the problems. So the outcome of a call never depends on this module, only its cost.

The subset: ``type`` (one name or a list of them), ``properties``, ``required``,
``additionalProperties: false|true``, ``items`` (one schema), ``enum`` of strings, nested,
and the annotations (``title``, ``description``, ``default``, ``examples``, ``$comment``,
``$schema`` at the top). Conservative where drafts differ: ``integer`` accepts Python ints
only (a float such as 1.0 goes to jsonschema), and booleans are never numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

__all__ = ["Check", "quick_check"]

Check = Callable[[Any], bool]

_ANNOTATIONS: Final = frozenset({"title", "description", "default", "examples", "$comment"})
_KEYWORDS: Final = _ANNOTATIONS | {"type", "properties", "required", "additionalProperties", "items", "enum"}
_MAX_DEPTH: Final = 8


def _is_string(value: Any) -> bool:
    return type(value) is str


def _is_integer(value: Any) -> bool:
    return type(value) is int


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


def _is_boolean(value: Any) -> bool:
    return type(value) is bool


def _is_null(value: Any) -> bool:
    return value is None


def _is_object(value: Any) -> bool:
    return type(value) is dict


def _is_array(value: Any) -> bool:
    return type(value) is list


_TYPES: Final[dict[str, Check]] = {
    "string": _is_string, "integer": _is_integer, "number": _is_number, "boolean": _is_boolean,
    "null": _is_null, "object": _is_object, "array": _is_array,
}


def quick_check(schema: Any) -> Check | None:
    """The predicate for ``schema`` (see the module docstring), or None outside the subset."""
    if not isinstance(schema, Mapping):
        return None
    return _compile({k: v for k, v in schema.items() if k != "$schema"}, 0)


def _compile(schema: Any, depth: int) -> Check | None:
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH or not _KEYWORDS.issuperset(schema):
        return None
    checks: list[Check] = []
    if "type" in schema:
        kind = _type_check(schema["type"])
        if kind is None:
            return None
        checks.append(kind)
    if "enum" in schema:
        allowed = schema["enum"]
        if not isinstance(allowed, list) or not allowed or not all(type(v) is str for v in allowed):
            return None
        options = frozenset(allowed)
        checks.append(lambda value: type(value) is str and value in options)
    if any(key in schema for key in ("properties", "required", "additionalProperties")):
        shape = _object_check(schema, depth)
        if shape is None:
            return None
        checks.append(shape)
    if "items" in schema:
        each = _compile(schema["items"], depth + 1)
        if each is None:
            return None
        checks.append(lambda value: type(value) is not list or all(each(item) for item in value))
    if len(checks) == 1:
        return checks[0]
    return lambda value: all(check(value) for check in checks)


def _type_check(declared: Any) -> Check | None:
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n in _TYPES for n in names):
        return None
    if len(names) == 1:
        return _TYPES[names[0]]
    kinds = [_TYPES[name] for name in names]
    return lambda value: any(kind(value) for kind in kinds)


def _object_check(schema: Mapping[str, Any], depth: int) -> Check | None:
    """``properties``, ``required`` and ``additionalProperties`` (they apply to objects only)."""
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, Mapping) or not isinstance(required, list) or type(extra) is not bool:
        return None
    if not all(isinstance(name, str) for name in required):
        return None
    compiled: dict[str, Check] = {}
    for name, sub in properties.items():
        check = _compile(sub, depth + 1)
        if check is None:
            return None
        compiled[name] = check
    needed = tuple(required)

    def shape(value: Any) -> bool:
        if type(value) is not dict:
            return True  # these keywords say nothing of a non-object (``type`` does)
        for name in needed:
            if name not in value:
                return False
        for name, item in value.items():
            check = compiled.get(name)
            if check is None:
                if not extra:
                    return False
            elif not check(item):
                return False
        return True

    return shape
