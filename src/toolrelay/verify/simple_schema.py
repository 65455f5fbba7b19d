"""A quick "surely valid" for the common output schemas, jsonschema for everything else.

``server_check`` and ``feedback`` classify each recorded answer again, which validates its
``structuredContent`` against the tool's ``outputSchema`` with jsonschema (about 30 µs a
call: most of a 10,000-call transcript's ``check_server``). Most outputSchemas are a few
typed properties. ``surely_keeps`` decides those in a few µs, and answers only *yes, the
value keeps the schema*: for any schema or value it is not sure of (a keyword beyond the
few below, a float where an integer is asked for, a value it would reject) it answers no,
and the caller asks jsonschema as before. So every verdict, and every message, is still
jsonschema's; this only skips asking it when the answer is known to be "valid".

Read as draft 2020-12 (what ``relay.stages.arguments.validator_class`` picks for a schema
naming no ``$schema``; a schema naming one is left to jsonschema). Each keyword is taken
only in the form the draft's meta-schema allows, so a schema jsonschema would refuse as
invalid is never said to be kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["SimpleSchemas"]

Check = Callable[[Any], bool]
"""True: the value surely keeps the schema; False: not sure (jsonschema decides)."""

_TYPES: Final[dict[str, Check]] = {
    "string": lambda value: type(value) is str,
    "integer": lambda value: type(value) is int,  # 1.0 is an integer too: jsonschema decides it
    "number": lambda value: type(value) is int or type(value) is float,
    "boolean": lambda value: type(value) is bool,
    "null": lambda value: value is None,
    "object": lambda value: type(value) is dict,
    "array": lambda value: type(value) is list,
}
_TEXTS: Final = ("title", "description", "$comment")
"""Annotations whose value the meta-schema wants a string."""
_KNOWN: Final = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "default", "examples", *_TEXTS})


def _anything(value: Any) -> bool:
    return True


def _nothing(value: Any) -> bool:
    return False


class SimpleSchemas:
    """``surely_keeps`` with each schema read once (by identity: a run's listed schemas are
    never changed while it is verified)."""

    def __init__(self) -> None:
        self._checks: dict[int, tuple[Any, Check | None]] = {}

    def surely_keeps(self, schema: Any, value: Any) -> bool:
        """True only when ``value`` keeps ``schema`` (an object, the whole outputSchema)."""
        found = self._checks.get(id(schema))
        if found is None or found[0] is not schema:
            check = None
            if type(schema) is dict:
                try:
                    check = _compiled(schema)
                except RecursionError:  # nested too deep to read here: jsonschema decides
                    check = None
            found = self._checks[id(schema)] = (schema, check)  # the schema is kept: its id stays its own
        check = found[1]
        if check is None:
            return False
        try:
            return check(value)
        except RecursionError:
            return False


def _compiled(schema: Any) -> Check | None:
    """The check for ``schema``, or None when it holds anything this module does not read."""
    if schema is True:
        return _anything
    if schema is False:
        return _nothing
    if type(schema) is not dict or not schema.keys() <= _KNOWN:
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
    if any(key in schema for key in ("properties", "required", "additionalProperties")):
        fields = _object_check(schema)
        if fields is None:
            return None
        checks.append(fields)
    if "items" in schema:
        each = _compiled(schema["items"])
        if each is None:
            return None
        checks.append(lambda value: type(value) is not list or all(each(item) for item in value))
    if len(checks) == 1:
        return checks[0]
    return lambda value: all(check(value) for check in checks)


def _type_check(declared: Any) -> Check | None:
    if type(declared) is str:
        return _TYPES.get(declared)
    if type(declared) is not list or not declared or len(set(map(repr, declared))) != len(declared):
        return None  # the meta-schema: a type name, or a non-empty array of distinct ones
    if not all(type(name) is str and name in _TYPES for name in declared):
        return None
    tests = tuple(_TYPES[name] for name in declared)
    return lambda value: any(test(value) for test in tests)


def _object_check(schema: dict[str, Any]) -> Check | None:
    """``properties``, ``required`` and ``additionalProperties``: they judge objects only."""
    declared = schema.get("properties", {})
    required = schema.get("required", [])
    if type(declared) is not dict or type(required) is not list:
        return None
    if not all(type(name) is str for name in required) or len(set(required)) != len(required):
        return None
    properties: dict[str, Check] = {}
    for name, subschema in declared.items():
        check = _compiled(subschema)
        if check is None:
            return None
        properties[name] = check
    extra = _compiled(schema.get("additionalProperties", True))
    if extra is None:
        return None
    others: Check | None = None if extra is _anything else extra
    names = tuple(required)

    def fields(value: Any) -> bool:
        if type(value) is not dict:
            return True
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
