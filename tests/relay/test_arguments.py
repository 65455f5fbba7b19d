"""Arguments: the model's JSON text → a value checked against the tool's original schema.
Every failure is a message the model can act on; these tests pin the exact text."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator
from relay_helpers import READ_TEXT_FILE_SCHEMA

from testkit.fake_http import FakeHttpServer, HttpRequest, HttpResponder, send_json
from toolrelay.relay.stages.arguments import ArgumentChecker, ArgumentError, parse_arguments, validator_class

HEAD = "arguments do not match the tool's input schema"


def parse_error(text: str) -> ArgumentError:
    result = parse_arguments(text)
    assert isinstance(result, ArgumentError), result
    return result


def invalid(rule: dict[str, Any], value: Any, checker: ArgumentChecker | None = None) -> ArgumentError:
    problem = (checker or ArgumentChecker()).validate("srv__tool", rule, value)
    assert problem is not None
    return problem


# -- parsing -------------------------------------------------------------------------------------


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused(constant: str) -> None:
    error = parse_error('{"head": ' + constant + "}")
    assert error.kind == "json"
    assert error.message == (
        f"arguments are not valid JSON: {constant} is not a JSON value (JSON has no NaN or Infinity; "
        "send a number or null)"
    )


def test_duplicate_keys_are_refused_at_any_depth() -> None:
    assert parse_error('{"head": 1, "head": 2}').message == (
        'arguments are not valid JSON: the key "head" appears twice in one object'
    )
    assert parse_error('{"a": [{"x": 1, "x": 1}]}').message == (
        'arguments are not valid JSON: the key "x" appears twice in one object'
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", "arguments must be a JSON object, got array: [1, 2]"),
        ('"read it"', 'arguments must be a JSON object, got string: "read it"'),
        ("42", "arguments must be a JSON object, got integer: 42"),
        ("null", "arguments must be a JSON object, got null: null"),
        ("true", "arguments must be a JSON object, got boolean: true"),
    ],
)
def test_a_top_level_value_that_is_not_an_object_is_refused(text: str, message: str) -> None:
    error = parse_error(text)
    assert (error.kind, error.message) == ("not_object", message)


def test_trailing_garbage_is_refused_with_its_position_and_an_excerpt() -> None:
    assert parse_error('{"path": "a.txt"} extra').message == (
        'arguments are not valid JSON: Extra data: line 1 column 19 (character 18), near {"path": "a.txt"} '
        "<here>extra"
    )


def test_broken_json_names_the_line_column_and_shows_the_text_around_it() -> None:
    text = '{\n  "path": "/tmp/some/long/path/name.txt"\n  "head": 2\n}'
    assert parse_error(text).message == (
        "arguments are not valid JSON: Expecting ',' delimiter: line 3 column 3 (character 45), near "
        '…e/long/path/name.txt"\\n  <here>"head": 2\\n}'
    )


def test_truncated_json_is_refused() -> None:
    assert parse_error('{"path": "a').message == (
        "arguments are not valid JSON: Unterminated string starting at: line 1 column 10 (character 9), "
        'near {"path": <here>"a'
    )


@pytest.mark.parametrize("text", ["", "   \n\t"])
def test_empty_arguments_are_refused(text: str) -> None:
    error = parse_error(text)
    assert (error.kind, error.message) == ("empty", "arguments are empty: send a JSON object, for example {}")


def test_numbers_that_overflow_are_refused_and_big_integers_kept() -> None:
    assert parse_error('{"head": 1e400}').message == (
        "arguments are not valid JSON: the number 1e400 is too large (it would become infinite)"
    )
    assert parse_error('{"head": ' + "9" * 5000 + "}").message == (
        "arguments are not valid JSON: an integer with 5000 digits is too long"
    )
    assert parse_arguments('{"head": 100000000000000000000000000000}') == {"head": 10**29}
    assert parse_arguments('{"head": 1e300, "tail": -0.0}') == {"head": 1e300, "tail": -0.0}


def test_an_unpaired_surrogate_is_refused_because_it_cannot_be_sent_as_utf8() -> None:
    error = parse_error('{"path": "a\\ud800b"}')
    assert error.message == (
        'arguments are not usable: the string "a\\ud800b" contains an unpaired surrogate (not valid Unicode)'
    )
    error.message.encode("utf-8")  # the message itself stays sendable
    assert parse_arguments('{"path": "\\ud83d\\ude00"}') == {"path": "😀"}


def test_arguments_nested_too_deeply_are_refused() -> None:
    assert parse_arguments('{"a": ' + "[" * 63 + "]" * 63 + "}") is not None
    assert parse_error('{"a": ' + "[" * 64 + "]" * 64 + "}").message == (
        "arguments are not usable: arrays/objects nested deeper than 64 levels"
    )
    assert parse_error('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}").message == (
        "arguments are not usable: JSON nested too deeply"
    )


def test_what_the_text_cannot_vouch_for_is_walked_and_refused_as_before() -> None:
    # the walk is skipped only when the text itself shows no surrogate and too few brackets
    # to nest past the limit: each way past that quick look still meets the walk's refusal
    surrogate = 'the string "\\ud800" contains an unpaired surrogate (not valid Unicode)'
    assert parse_error('{"path": "\ud800"}').message == f"arguments are not usable: {surrogate}"
    assert parse_error('{"path": "\\ud800"}').message == f"arguments are not usable: {surrogate}"
    assert parse_arguments('{"path": "a\\u0041"}') == {"path": "aA"}  # an escape, walked: sendable
    brackets = "[" * 70
    assert parse_arguments('{"text": "' + brackets + '"}') == {"text": brackets}  # in a string: walked
    assert parse_error('{"a": ' + "[" * 63 + "{" + '"b": 1' + "}" + "]" * 63 + "}").message == (
        "arguments are not usable: arrays/objects nested deeper than 64 levels"
    )
    assert parse_arguments('{"a": ' + "[" * 62 + "{" + '"b": 1' + "}" + "]" * 62 + "}") is not None
    assert parse_error('{"a": ' + "[" * 63 + "1" + "]" * 63 + "}").message == (  # 64 brackets: walked
        "arguments are not usable: arrays/objects nested deeper than 64 levels"
    )
    assert parse_arguments('{"a": ' + "[" * 62 + "1" + "]" * 62 + "}") is not None  # 63: cannot nest past


def test_a_byte_order_mark_before_the_object_is_refused_as_json_loads_refuses_it() -> None:
    assert parse_error('\ufeff{"path": "a.txt"}').message == (
        "arguments are not valid JSON: Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 "
        '(character 0), near <here>\ufeff{"path": "a.txt"}'
    )
    assert parse_arguments('{"path": "\ufeff"}') == {"path": "\ufeff"}  # inside a string it is text


def test_a_plain_object_parses_to_an_equal_value() -> None:
    text = '{"path": "/r/a.txt", "head": 20, "opts": {"x": [1, 2.5, null, true]}}'
    assert parse_arguments(text) == {"path": "/r/a.txt", "head": 20, "opts": {"x": [1, 2.5, None, True]}}


# -- validation ------------------------------------------------------------------------------------


def test_a_wrong_type_names_the_field_the_expectation_and_the_value() -> None:
    error = invalid(READ_TEXT_FILE_SCHEMA, {"path": "/r/a.txt", "head": "20"})
    assert error.kind == "invalid"
    assert error.message == f'{HEAD}: head: expected number, got "20" (string)'
    assert error.problems == ('head: expected number, got "20" (string)',)


def test_missing_required_properties_are_named() -> None:
    assert (
        invalid(READ_TEXT_FILE_SCHEMA, {"head": 2}).message == f"{HEAD}: path: required property is missing"
    )


def test_enum_mismatch_lists_the_allowed_values() -> None:
    rule = {"type": "object", "properties": {"sortBy": {"type": "string", "enum": ["name", "size"]}}}
    assert invalid(rule, {"sortBy": "date"}).message == (
        f'{HEAD}: sortBy: expected one of "name", "size", got "date" (string)'
    )


def test_unexpected_properties_are_named_with_the_allowed_ones() -> None:
    rule = {"type": "object", "properties": {"path": {"type": "string"}}, "additionalProperties": False}
    assert invalid(rule, {"path": "a", "recursive": True}).message == (
        f"{HEAD}: recursive: unexpected property (allowed: path)"
    )
    empty = {"type": "object", "additionalProperties": False}
    assert (
        invalid(empty, {"x": 1}).message
        == f"{HEAD}: x: unexpected property (this object takes no properties)"
    )


def test_nested_paths_and_array_indexes_are_shown() -> None:
    rule = {
        "type": "object",
        "properties": {
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                    "required": ["oldText", "newText"],
                },
            }
        },
    }
    error = invalid(rule, {"edits": [{"oldText": "a", "newText": "b"}, {"oldText": 3}]})
    assert error.message == (
        f"{HEAD} (2 problems):\n- edits/1/oldText: expected string, got 3 (integer)\n"
        "- edits/1/newText: required property is missing"
    )


def test_many_problems_are_listed_up_to_the_cap_and_counted() -> None:
    rule = {"type": "object", "properties": {f"p{n}": {"type": "integer"} for n in range(8)}}
    error = invalid(rule, {f"p{n}": "x" for n in range(8)}, ArgumentChecker(max_problems=3))
    assert error.message == (
        f'{HEAD} (8 problems):\n- p0: expected integer, got "x" (string)\n'
        '- p1: expected integer, got "x" (string)\n- p2: expected integer, got "x" (string)\n- … and 5 more'
    )
    assert len(error.problems) == 8


def test_number_and_string_bounds() -> None:
    rule = {
        "type": "object",
        "properties": {
            "head": {"type": "integer", "minimum": 1},
            "name": {"type": "string", "maxLength": 3},
            "code": {"type": "string", "pattern": "^[A-Z]+$"},
            "tags": {"type": "array", "minItems": 1},
        },
    }
    error = invalid(rule, {"head": 0, "name": "abcd", "code": "ab", "tags": []})
    assert error.problems == (
        "head: expected a number >= 1, got 0 (integer)",
        'name: expected at most 3 characters, got "abcd" (string)',
        'code: expected text matching the pattern "^[A-Z]+$", got "ab" (string)',
        "tags: expected at least 1 item, got [] (array)",
    )


def test_bounds_of_one_are_singular_and_other_bounds_plural() -> None:
    rule = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1},
            "code": {"type": "string", "maxLength": 1},
            "filter": {"type": "object", "minProperties": 1},
            "pair": {"type": "array", "maxItems": 1},
            "word": {"type": "string", "minLength": 2},
        },
    }
    error = invalid(rule, {"path": "", "code": "ab", "filter": {}, "pair": [1, 2], "word": "a"})
    assert error.problems == (
        'path: expected at least 1 character, got "" (string)',
        'code: expected at most 1 character, got "ab" (string)',
        "filter: expected at least 1 property, got {} (object)",
        "pair: expected at most 1 item, got [1, 2] (array)",
        'word: expected at least 2 characters, got "a" (string)',
    )


def test_a_draft4_exclusive_bound_is_shown_as_strict() -> None:
    rule = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "minimum": 1, "exclusiveMinimum": True}},
    }
    assert invalid(rule, {"n": 1}).problems == ("n: expected a number > 1, got 1 (integer)",)


def test_alternatives_show_the_closest_branch() -> None:
    rule = {
        "type": "object",
        "properties": {
            "target": {
                "anyOf": [{"type": "string"}, {"type": "object", "properties": {"line": {"type": "integer"}}}]
            },
            "n": {"oneOf": [{"type": "number"}, {"type": "integer"}]},
            "k": {"const": "file"},
        },
    }
    error = invalid(rule, {"target": {"line": "7"}, "n": 3, "k": "dir"})
    assert error.problems == (
        'target: matches none of the allowed alternatives (closest: target/line: expected integer, got "7" '
        "(string))",
        "n: matches more than one of the alternatives (exactly one is allowed), got 3 (integer)",
        'k: expected "file", got "dir" (string)',
    )
    assert invalid(rule, {"target": 5}).problems == (
        "target: matches none of the allowed alternatives (closest: expected string, got 5 (integer))",
    )


def test_valid_arguments_pass_and_long_values_are_clipped_in_messages() -> None:
    checker = ArgumentChecker()
    assert (
        checker.validate("fs__read_text_file", READ_TEXT_FILE_SCHEMA, {"path": "/r/a.txt", "head": 2}) is None
    )
    error = invalid(READ_TEXT_FILE_SCHEMA, {"path": ["x" * 500]}, checker)
    assert error.message == f'{HEAD}: path: expected string, got ["{"x" * 57}… (array)'


# -- drafts, caching, broken schemas ---------------------------------------------------------------


def test_the_validator_follows_the_declared_draft() -> None:
    assert validator_class(READ_TEXT_FILE_SCHEMA) is Draft7Validator
    assert validator_class({"type": "object"}) is Draft202012Validator
    assert (
        validator_class({"$schema": "https://json-schema.org/draft/2020-12/schema"}) is Draft202012Validator
    )
    assert validator_class({"$schema": "https://example.com/my-dialect"}) is Draft202012Validator
    # Draft-07 tuple items are valid there, and checked as a tuple.
    tuple_rule = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}},
    }
    assert (
        invalid(tuple_rule, {"pair": ["a", "b"]}).message
        == f'{HEAD}: pair/1: expected integer, got "b" (string)'
    )


def test_a_changed_schema_for_the_same_alias_is_used_at_once() -> None:
    checker = ArgumentChecker()
    v1 = {"type": "object", "properties": {"n": {"type": "string"}}}
    v2 = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert checker.validate("s__t", v1, {"n": "a"}) is None
    assert checker.validate("s__t", v1, {"n": "b"}) is None
    problem = checker.validate("s__t", v2, {"n": "a"})
    assert problem is not None and problem.problems == ('n: expected integer, got "a" (string)',)


def test_an_invalid_schema_is_reported_as_the_tools_problem() -> None:
    error = invalid({"type": "object", "properties": {"n": {"type": "strng"}}}, {"n": 1})
    assert error.kind == "tool_schema"
    assert error.message == (
        "the tool's input schema is invalid, so these arguments cannot be checked (a problem of the tool's "
        "server, not of the arguments): properties/n/type: 'strng' is not valid under any of the given "
        "schemas"
    )


def test_a_schema_that_is_not_an_object_is_reported_as_the_tools_problem() -> None:
    error = ArgumentChecker().validate("s__t", ["not", "a", "schema"], {})  # type: ignore[arg-type]
    assert error is not None and error.kind == "tool_schema"
    assert error.message.endswith("not of the arguments): the schema is not an object (got array)")
    root_error = invalid({"type": "object", "required": "path"}, {})
    assert root_error.message.endswith("not of the arguments): required: 'path' is not of type 'array'")


def test_a_looping_ref_is_reported_as_the_tools_problem() -> None:
    error = invalid({"$ref": "#"}, {"a": 1})
    assert error.message.endswith("not of the arguments): its $ref chain loops or nests too deeply")


@pytest.fixture
def schema_server() -> Iterator[FakeHttpServer]:
    """A real loopback HTTP server that serves a schema to whoever asks (``seen``: who did)."""

    async def schema(request: HttpRequest, http: HttpResponder) -> None:
        await send_json(http, 200, {"type": "string"})

    with FakeHttpServer(schema) as server:
        yield server


def test_a_remote_ref_is_never_fetched(schema_server: FakeHttpServer) -> None:
    url = f"{schema_server.origin}/schema.json"
    rule = {"type": "object", "properties": {"n": {"$ref": url}}}
    error = invalid(rule, {"n": 1})
    assert error.kind == "tool_schema"
    assert error.message.endswith(f"not of the arguments): Unresolvable: {url}")
    assert schema_server.seen == [], "a server's schema must not make toolrelay open URLs"


def test_prepare_parses_strips_and_validates_in_that_order() -> None:
    checker = ArgumentChecker()
    assert checker.prepare(
        "fs__r", READ_TEXT_FILE_SCHEMA, '{"path": "a", "head": null, "tail": null}', strict=True
    ) == {"path": "a"}
    refused = checker.prepare("fs__r", READ_TEXT_FILE_SCHEMA, '{"path": null, "head": null}', strict=True)
    assert isinstance(refused, ArgumentError)
    assert refused.message == f"{HEAD}: path: expected string, got null (null)"
    broken = checker.prepare("fs__r", READ_TEXT_FILE_SCHEMA, '{"path": NaN}', strict=True)
    assert isinstance(broken, ArgumentError) and broken.kind == "json"
