"""verify's quick "surely valid" for outputSchemas never says yes where jsonschema says no.

``simple_schema.SimpleSchemas.surely_keeps`` lets ``server_check`` skip jsonschema for a
result that keeps a simple outputSchema; the oracle here is the live path's own output
check (``relay.stages.output_check.output_problem``), on every pair of a set of schemas
(the common shapes, and schemas at each edge of what the quick path reads) and values.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from toolrelay.relay.stages.output_check import output_problem
from toolrelay.verify.simple_schema import SimpleSchemas

READ_TEXT_FILE = {  # the built-in file server's read_text_file outputSchema
    "type": "object",
    "properties": {
        "content": {"type": "string"},
        "truncated": {"type": "boolean", "description": "Present (true) when the byte limit cut the text"},
    },
    "required": ["content"], "additionalProperties": False,
}

READ: list[Any] = [
    READ_TEXT_FILE,
    {"type": "object", "required": []},
    {"type": "object"},
    {"type": "object", "properties": {}},
    {"type": "object", "properties": {"n": {"type": "integer"}, "x": {"type": "number"}},
     "required": ["n"]},
    {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}},
    {"type": "object", "properties": {"v": {"type": ["string", "null"]}},
     "additionalProperties": {"type": "integer"}},
    {"type": "object", "properties": {"any": True, "none": False}},
    {"type": "object", "additionalProperties": False, "title": "T", "$comment": "c", "default": {},
     "examples": [{}]},
    {"properties": {"a": {"type": "string"}}},  # no type: the properties judge objects only
    {"required": ["a", "b"]},
    {"type": "array",
     "items": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}},
]
LEFT: list[Any] = [  # beyond what the quick path reads, or invalid schemas: jsonschema must decide
    {"type": "object", "properties": {"s": {"type": "string", "minLength": 3}}},
    {"type": "object", "properties": {"e": {"enum": [1, 2]}}},
    {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
     "properties": {"n": {"type": "integer"}}},
    {"type": "object", "required": ["a", "a"]},
    {"type": []},
    {"type": ["string", "string"]},
    {"type": "strin"},
    {"type": "object", "properties": {"a": {"type": "string"}},
     "patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False},
    {"type": "object", "title": 3},
    {"type": "object", "examples": {}},
    {"type": "array", "items": [{"type": "string"}]},
    {"type": "object", "properties": {"p": {"$ref": "#/$defs/x"}},
     "$defs": {"x": {"type": "string"}}},
]
SCHEMAS = READ + LEFT

VALUES: list[Any] = [
    {}, {"content": "line 1\n"}, {"content": "x", "truncated": True}, {"content": "x", "truncated": "yes"},
    {"content": 3}, {"content": "x", "other": 1}, {"truncated": True}, {"n": 1}, {"n": 1.0}, {"n": True},
    {"n": 1, "x": 2.5}, {"n": 1, "x": True}, {"n": "1"}, {"tags": []}, {"tags": ["a", "b"]},
    {"tags": ["a", 1]}, {"v": None}, {"v": "s"}, {"v": 1}, {"v": "s", "w": 2}, {"v": "s", "w": 2.5},
    {"any": [1]}, {"none": 1}, {"a": "s"}, {"a": 1}, {"a": "s", "b": 1}, {"s": "ab"}, {"s": "abc"}, {"e": 1},
    {"e": 3}, {"x1": 2}, {"x1": "s"}, {"p": "s"}, {"p": 1}, [], [{"id": 1}], [{"id": 1}, {"id": "2"}], [{}],
    ["a"], "text", 1, None,
]


def judged_valid(schema: Any, value: Any) -> bool:
    return output_problem({"content": [], "structuredContent": value}, schema, key="test/tool") is None


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_a_sure_yes_is_jsonschema_s_yes(schema: Any) -> None:
    simple = SimpleSchemas()
    for value in VALUES:
        if simple.surely_keeps(schema, value):
            assert judged_valid(schema, value), (schema, value)


def test_random_schemas_and_values_agree() -> None:
    """Schemas and values built at random from the pieces the quick path reads."""
    chooser = random.Random(29)
    simple = SimpleSchemas()
    said_yes = 0
    for _ in range(1000):
        schema = {"type": "object", **_random_object(chooser, 2)}
        for _ in range(5):
            value = _random_value(chooser, 2)
            if simple.surely_keeps(schema, value):
                said_yes += 1
                assert judged_valid(schema, value), (schema, value)
    assert said_yes > 100  # the random pairs did reach the quick path's yes


def _random_schema(chooser: random.Random, depth: int) -> Any:
    kinds = ["string", "integer", "number", "boolean", "null", "object", "array", "list", "bool"]
    kind = chooser.choice(kinds)
    if kind == "bool":
        return chooser.random() < 0.8
    if kind == "list":
        return {"type": chooser.sample(["string", "integer", "null", "number"], chooser.randint(1, 2))}
    if kind == "object" and depth > 0:
        return {"type": "object", **_random_object(chooser, depth - 1)}
    if kind == "array" and depth > 0:
        return {"type": "array", "items": _random_schema(chooser, depth - 1)}
    return {"type": kind if kind not in ("object", "array") else "string"}


def _random_object(chooser: random.Random, depth: int) -> dict[str, Any]:
    names = chooser.sample("abcd", chooser.randint(0, 3))
    schema: dict[str, Any] = {"properties": {name: _random_schema(chooser, depth) for name in names}}
    if names and chooser.random() < 0.5:
        schema["required"] = chooser.sample(names, chooser.randint(1, len(names)))
    extra = chooser.choice([None, False, True, {"type": "integer"}])
    if extra is not None:
        schema["additionalProperties"] = extra
    return schema


def _random_value(chooser: random.Random, depth: int) -> Any:
    kind = chooser.choice(["str", "int", "float", "whole float", "bool", "null", "object", "array"])
    if kind == "object" and depth > 0:
        names = chooser.sample("abcde", chooser.randint(0, 4))
        return {name: _random_value(chooser, depth - 1) for name in names}
    if kind == "array" and depth > 0:
        return [_random_value(chooser, depth - 1) for _ in range(chooser.randint(0, 3))]
    return {"str": "s", "int": 2, "float": 2.5, "whole float": 2.0, "bool": False, "null": None,
            "object": {}, "array": []}[kind]


def test_the_common_schema_takes_the_quick_path() -> None:
    """What the speed rests on: read_text_file's results are judged without jsonschema."""
    simple = SimpleSchemas()
    assert simple.surely_keeps(READ_TEXT_FILE, {"content": "line 1\n"})
    assert simple.surely_keeps(READ_TEXT_FILE, {"content": "", "truncated": True})
    assert not simple.surely_keeps(READ_TEXT_FILE, {"content": "x", "more": 1})  # jsonschema says why


def test_schemas_it_does_not_read_are_left_to_jsonschema() -> None:
    simple = SimpleSchemas()
    for schema in LEFT:
        assert not any(simple.surely_keeps(schema, value) for value in VALUES), schema


def test_too_deep_a_schema_is_left_to_jsonschema() -> None:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(2000):
        schema = {"type": "object", "properties": {"a": schema}}
    value: Any = {}
    for _ in range(100):
        value = {"a": value}
    assert not SimpleSchemas().surely_keeps(schema, value)


def test_each_schema_is_read_once() -> None:
    simple = SimpleSchemas()
    schemas = [dict(READ_TEXT_FILE) for _ in range(3)]
    for schema, value in itertools.product(schemas, [{"content": "a"}, {"content": "b"}]):
        assert simple.surely_keeps(schema, value)
    assert len(simple._checks) == 3
