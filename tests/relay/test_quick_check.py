"""The arguments fast path (relay/stages/quick_check.py): it may only ever say "valid" when
jsonschema says so too, under every draft it is used with; and it is used for plain schemas.

Checked by hypothesis against jsonschema itself over generated JSON values, for plain
schemas like real tools' and schemas at the subset's edges (integers vs floats, booleans vs
numbers, ``additionalProperties: false``, enums, nested arrays and objects).
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolrelay.relay.stages.arguments import ArgumentChecker
from toolrelay.relay.stages.quick_check import quick_check

DRAFTS = [jsonschema.Draft202012Validator, jsonschema.Draft201909Validator, jsonschema.Draft7Validator,
          jsonschema.Draft6Validator, jsonschema.Draft4Validator]

ECHO = {"type": "object", "properties": {"text": {"type": "string", "description": "what to echo"}},
        "required": ["text"]}
SCHEMAS: list[dict[str, Any]] = [
    ECHO,
    {"type": "object", "additionalProperties": False, "required": ["n", "flag"],
     "properties": {"n": {"type": "integer"}, "x": {"type": "number"}, "flag": {"type": "boolean"},
                    "maybe": {"type": ["string", "null"]}}},
    {"type": "object", "properties": {
        "mode": {"enum": ["fast", "slow"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "where": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}}},
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "title": "t", "default": {},
     "properties": {"rows": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}}},
    {"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": True},
]
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1.0, 0.0, -2.0]) | st.sampled_from(["fast", "slow", "x", "", "path"]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["text", "n", "x", "flag", "maybe", "mode", "tags", "where", "path",
                                       "rows", "other"]), inner, max_size=4),
    max_leaves=8,
)


@pytest.mark.parametrize("schema", SCHEMAS, ids=["echo", "typed", "nested", "draft7-rows", "open"])
def test_plain_schemas_take_the_fast_path(schema: dict[str, Any]) -> None:
    assert quick_check(schema) is not None


@settings(max_examples=300, deadline=None)
@given(value=VALUES, index=st.integers(0, len(SCHEMAS) - 1), draft=st.sampled_from(DRAFTS))
def test_the_fast_path_never_accepts_what_jsonschema_refuses(value: Any, index: int, draft: Any) -> None:
    schema = SCHEMAS[index]
    check = quick_check(schema)
    assert check is not None
    if check(value):
        assert draft(schema).is_valid(value), (schema, value)


@pytest.mark.parametrize(
    ("schema", "value", "verdict"),
    [(ECHO, {"text": "hi"}, True),
     (ECHO, {"text": 1}, False), (ECHO, {}, False), (ECHO, ["text"], False),
     ({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": True}, False),  # a bool is no int
     ({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": 1.0}, False),  # left to jsonschema
     ({"type": "object", "properties": {"x": {"type": "number"}}}, {"x": 2}, True),
     ({"type": "object", "properties": {}, "additionalProperties": False}, {"extra": 1}, False)],
    ids=["valid", "wrong-type", "missing", "not-object", "bool-int", "float-int", "int-number", "extra-key"],
)
def test_what_the_fast_path_says(schema: dict[str, Any], value: Any, verdict: bool) -> None:
    check = quick_check(schema)
    assert check is not None and check(value) is verdict


@pytest.mark.parametrize(
    "schema",
    [{"type": "object", "properties": {"s": {"type": "string", "minLength": 2}}},
     {"type": "object", "properties": {"s": {"$ref": "#/$defs/s"}}, "$defs": {"s": {"type": "string"}}},
     {"anyOf": [{"type": "string"}]}, {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
     {"type": "object", "properties": {"e": {"enum": [1, 2]}}}, {"type": "any"}, {"type": []}],
    ids=["minLength", "ref", "anyOf", "pattern-properties", "number-enum", "draft3-any", "no-type"],
)
def test_schemas_outside_the_subset_go_to_jsonschema(schema: dict[str, Any]) -> None:
    assert quick_check(schema) is None


def test_the_checker_words_a_problem_the_fast_path_passed_on() -> None:
    checker = ArgumentChecker()
    assert checker.validate("echo", ECHO, {"text": "hi"}) is None
    problem = checker.validate("echo", ECHO, {"text": 3})
    assert problem is not None and problem.message == (
        "arguments do not match the tool's input schema: text: expected string, got 3 (integer)"
    )
