"""The arguments fast path (relay/stages/quick_check.py): it may only ever say "valid" when
jsonschema says so too, under every draft it is used with; and it is used for plain schemas.

Checked by hypothesis against jsonschema itself over generated JSON values, for plain
schemas like real tools' and schemas at the subset's edges (integers vs floats, booleans vs
numbers, ``additionalProperties: false``, enums, nested arrays and objects).
"""

from __future__ import annotations

import json
import subprocess
import sys
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


NAMES = st.sampled_from(["a", "b", "text"])
TYPE_NAMES = st.sampled_from(["string", "integer", "number", "boolean", "null", "object", "array", "any"])
SCHEMA_PARTS: st.SearchStrategy[Any] = st.deferred(lambda: st.booleans() | st.fixed_dictionaries(
    {}, optional={
    "type": TYPE_NAMES | st.lists(TYPE_NAMES, max_size=3),
    "properties": st.dictionaries(NAMES, SCHEMA_PARTS, max_size=2),
    "required": st.lists(NAMES, max_size=3),
    "additionalProperties": SCHEMA_PARTS,
    "items": SCHEMA_PARTS,
    "enum": st.lists(NAMES | st.integers(0, 1), max_size=2),
    "title": NAMES | st.integers(0, 1), "description": NAMES, "$comment": NAMES,
    "default": st.none() | NAMES, "examples": st.lists(NAMES, max_size=1) | NAMES}))
"""Schemas in and at the edges of the fast path's subset (a type name of draft 3, lists with
duplicates, empty lists, wrong value types)."""


@settings(max_examples=400, deadline=None)
@given(schema=SCHEMA_PARTS)
def test_a_schema_the_fast_path_reads_is_valid_when_it_names_no_draft(schema: Any) -> None:
    """What lets the checker build no jsonschema validator (nor import jsonschema) until a
    value the fast path cannot vouch for comes: a schema it reads is one 2020-12 accepts."""
    if quick_check(schema) is not None:
        jsonschema.Draft202012Validator.check_schema(schema)


def test_plain_schemas_need_no_jsonschema_until_a_value_fails_the_fast_path() -> None:
    script = (
        "import sys, json\n"
        "from toolrelay.relay.stages.arguments import ArgumentChecker\n"
        f"schema = {ECHO!r}\n"
        "checker = ArgumentChecker()\n"
        "ok = checker.validate('echo', schema, {'text': 'hi'})\n"
        "before = 'jsonschema' in sys.modules\n"
        "problem = checker.validate('echo', schema, {'text': 3})\n"
        "print(json.dumps([ok, before, problem.message, 'jsonschema' in sys.modules]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        None, False, "arguments do not match the tool's input schema: text: expected string, got 3 (integer)",
        True]
