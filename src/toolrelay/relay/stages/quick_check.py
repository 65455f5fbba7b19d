"""Values that plainly satisfy a plain schema, told apart without jsonschema.

Most tools' schemas are an object of a few typed properties, some required; the jsonschema
validator spends ~20-30 µs a value walking even those (a tenth of the relay's own work per
call, and most of ``verify``'s output checks: bench/README.md). ``quick_check(schema)``
compiles such a schema to a predicate that says **True only when jsonschema would accept
the value too**; anything else (False, or a schema outside the subset: None) goes to
jsonschema, which decides and words the problems. So no verdict depends on this module,
only its cost. The live argument check (``arguments.py``) and verify's output check
(``verify/simple_schema.py``) both use it.

The subset: ``type`` (one name or a non-empty list of distinct ones), ``properties``,
``required`` (distinct names), ``additionalProperties`` (a schema of the subset),
``items`` (one schema), ``enum`` of strings, ``true``/``false`` subschemas, nested, and the
annotations (``title``, ``description``, ``$comment`` as strings, ``default``,
``examples`` as a list). Each keyword is read only in the form the meta-schema allows, so
a schema jsonschema would refuse as invalid is never said to be kept. Conservative where
drafts differ: ``integer`` accepts Python ints only (1.0 goes to jsonschema), booleans are
never numbers, and a top-level ``$schema`` is read only when the caller allows it
(``named_draft``) — then a draft-04 schema's subschemas must be objects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["Check", "quick_check"]

Check = Callable[[Any], bool]
"""True: the value surely keeps the schema; False: not sure (jsonschema decides)."""

_TYPES: Final[dict[str, Check]] = {
    "string": lambda value: type(value) is str,
    "integer": lambda value: type(value) is int,  # 1.0 is an integer too in some drafts: jsonschema decides
    "number": lambda value: type(value) is int or type(value) is float,
    "boolean": lambda value: type(value) is bool,
    "null": lambda value: value is None,
    "object": lambda value: type(value) is dict,
    "array": lambda value: type(value) is list,
}
_TEXTS: Final = ("title", "description", "$comment")
"""Annotations whose value the meta-schema wants a string."""
_KNOWN: Final = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "default", "examples",
    *_TEXTS})
_MAX_DEPTH: Final = 8


def _anything(value: Any) -> bool:
    return True


def _nothing(value: Any) -> bool:
    return False


def quick_check(schema: Any, *, named_draft: bool = True) -> Check | None:
    """The predicate for ``schema`` (see the module docstring), or None outside the subset.
    ``named_draft``: a top-level ``$schema`` may be read (the caller picked its validator by it)."""
    if type(schema) is not dict:
        return None
    booleans = True
    if "$schema" in schema:
        declared = schema["$schema"]
        if not named_draft or type(declared) is not str or "draft-03" in declared:
            return None
        booleans = "draft-04" not in declared  # boolean subschemas came with draft 6
        schema = {key: value for key, value in schema.items() if key != "$schema"}
    try:
        return _Compiler(booleans).compile(schema, 0)
    except RecursionError:  # nested too deep to read here: jsonschema decides
        return None


class _Compiler:
    def __init__(self, booleans: bool) -> None:
        self.booleans = booleans

    def compile(self, schema: Any, depth: int) -> Check | None:
        if schema is True or schema is False:
            if not self.booleans or depth == 0:
                return None
            return _anything if schema else _nothing
        if type(schema) is not dict or depth > _MAX_DEPTH or not schema.keys() <= _KNOWN:
            return None
        if any(key in schema and type(schema[key]) is not str for key in _TEXTS):
            return None
        if "examples" in schema and type(schema["examples"]) is not list:
            return None
        checks: list[Check] = []
        if "type" in schema:
            typed = _type_check(schema["type"])
            if typed is None:
                return None
            checks.append(typed)
        if "enum" in schema:
            allowed = schema["enum"]
            if type(allowed) is not list or not allowed or not all(type(v) is str for v in allowed):
                return None
            options = frozenset(allowed)
            checks.append(lambda value: type(value) is str and value in options)
        if any(key in schema for key in ("properties", "required", "additionalProperties")):
            fields = self._object_check(schema, depth)
            if fields is None:
                return None
            checks.append(fields)
        if "items" in schema:
            each = self.compile(schema["items"], depth + 1)
            if each is None:
                return None
            checks.append(lambda value: type(value) is not list or all(each(item) for item in value))
        if not checks:
            return _anything
        if len(checks) == 1:
            return checks[0]
        return lambda value: all(check(value) for check in checks)

    def _object_check(self, schema: dict[str, Any], depth: int) -> Check | None:
        """``properties``, ``required`` and ``additionalProperties``: they judge objects only."""
        declared = schema.get("properties", {})
        required = schema.get("required", [])
        if type(declared) is not dict or type(required) is not list:
            return None
        if not all(type(name) is str for name in required) or len(set(required)) != len(required):
            return None
        properties: dict[str, Check] = {}
        for name, subschema in declared.items():
            check = self.compile(subschema, depth + 1)
            if check is None:
                return None
            properties[name] = check
        extra = schema.get("additionalProperties", True)
        others: Check | None
        if extra is True:
            others = None
        elif extra is False:
            others = _nothing
        else:
            others = self.compile(extra, depth + 1)
            if others is None:
                return None
        names = tuple(required)

        def fields(value: Any) -> bool:
            if type(value) is not dict:
                return True  # these keywords say nothing of a non-object (``type`` does)
            for name in names:
                if name not in value:
                    return False
            for key, item in value.items():
                check = properties.get(key)
                if check is not None:
                    if not check(item):
                        return False
                elif others is not None and not others(item):
                    return False
            return True

        return fields


def _type_check(declared: Any) -> Check | None:
    if type(declared) is str:
        return _TYPES.get(declared)
    if type(declared) is not list or not declared or len(set(map(repr, declared))) != len(declared):
        return None  # the meta-schema: a type name, or a non-empty array of distinct ones
    if not all(type(name) is str and name in _TYPES for name in declared):
        return None
    tests = tuple(_TYPES[name] for name in declared)
    return lambda value: any(test(value) for test in tests)
