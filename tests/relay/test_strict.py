"""Strict conversion of odd schemas: the exact result or the exact fall-back, with the report,
and null-stripping back to what the original schema allows."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from relay_helpers import strict_violations

from toolrelay.relay.stages.optional_nulls import strip_optional_nulls
from toolrelay.relay.stages.strict import StrictConversion, to_strict


def obj(properties: dict[str, Any], required: list[str] | None = None, **more: Any) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "object", "properties": properties, **more}
    if required is not None:
        node["required"] = required
    return node


def closed(properties: dict[str, Any], **more: Any) -> dict[str, Any]:
    """What a converted object looks like when its original had no ``required``/``additionalProperties``."""
    return {
        "type": "object",
        "properties": properties,
        **more,
        "required": list(properties),
        "additionalProperties": False,
    }


def convert(schema: dict[str, Any]) -> StrictConversion:
    before = copy.deepcopy(schema)
    conversion = to_strict(schema)
    assert schema == before, "the original schema (the rule) must not be modified"
    if conversion.parameters is not None:
        assert strict_violations(conversion.parameters) == []
        Draft202012Validator.check_schema(conversion.parameters)
    return conversion


def report(conversion: StrictConversion) -> list[str]:
    return [str(change) for change in conversion.changes]


def fallback(schema: dict[str, Any]) -> str:
    conversion = convert(schema)
    assert conversion.parameters is None and conversion.changes == ()
    assert conversion.fallback is not None
    return str(conversion.fallback)


# -- conversions ---------------------------------------------------------------------------------


def test_nested_objects_are_closed_and_their_optional_properties_made_nullable() -> None:
    schema = obj({"name": {"type": "string"}, "options": obj({"depth": {"type": "integer"}}, [])}, ["name"])
    conversion = convert(schema)
    assert conversion.parameters == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "options": {
                "type": ["object", "null"],
                "properties": {"depth": {"type": ["integer", "null"]}},
                "required": ["depth"],
                "additionalProperties": False,
            },
        },
        "required": ["name", "options"],
        "additionalProperties": False,
    }
    assert report(conversion) == [
        "/additionalProperties: set to false (strict mode)",
        "/properties/options/additionalProperties: set to false (strict mode)",
        "/properties/options/properties/depth: made nullable (optional)",
        "/properties/options/required: lists every property (strict mode)",
        "/properties/options: made nullable (optional)",
        "/required: lists every property (strict mode)",
    ]


def test_an_object_whose_properties_are_all_required_only_gets_closed() -> None:
    conversion = convert(obj({"a": {"type": "string"}}, ["a"], additionalProperties=False))
    assert conversion.parameters == obj({"a": {"type": "string"}}, ["a"], additionalProperties=False)
    assert report(conversion) == []


def test_required_in_another_order_is_left_as_it_was() -> None:
    schema = obj({"a": {"type": "string"}, "b": {"type": "string"}}, ["b", "a"])
    conversion = convert(schema)
    assert conversion.parameters is not None and conversion.parameters["required"] == ["b", "a"]
    assert report(conversion) == ["/additionalProperties: set to false (strict mode)"]


def test_an_optional_enum_gets_null_in_its_type_and_in_its_values() -> None:
    schema = obj({"mode": {"type": "string", "enum": ["fast", "slow"]}, "level": {"enum": [1, 2]}})
    conversion = convert(schema)
    assert conversion.parameters == closed(
        {
            "mode": {"type": ["string", "null"], "enum": ["fast", "slow", None]},
            "level": {"enum": [1, 2, None]},
        }
    )
    assert "/properties/mode: made nullable (optional)" in report(conversion)


def test_a_required_enum_is_unchanged() -> None:
    conversion = convert(obj({"mode": {"type": "string", "enum": ["a", "b"]}}, ["mode"]))
    assert conversion.parameters == closed({"mode": {"type": "string", "enum": ["a", "b"]}})


def test_an_optional_anyof_gets_a_null_branch() -> None:
    conversion = convert(obj({"v": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}))
    assert conversion.parameters == closed(
        {"v": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}}
    )


def test_one_of_becomes_any_of_and_its_branches_are_reported_under_one_of() -> None:
    schema = obj({"v": {"oneOf": [{"type": "string", "format": "uri"}, {"type": "integer"}]}}, ["v"])
    conversion = convert(schema)
    assert conversion.parameters == closed({"v": {"anyOf": [{"type": "string"}, {"type": "integer"}]}})
    assert report(conversion) == [
        "/additionalProperties: set to false (strict mode)",
        "/properties/v/oneOf: rewritten as anyOf (strict mode has no oneOf)",
        '/properties/v/oneOf/0/format: removed (unsupported format "uri")',
    ]


def test_defs_and_recursive_refs_are_kept_and_converted() -> None:
    schema = {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node", "description": "the root node"}},
        "required": ["tree"],
        "$defs": {
            "Node": obj(
                {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
                ["value"],
            )
        },
    }
    conversion = convert(schema)
    assert conversion.parameters == {
        "type": "object",
        "properties": {"tree": {"description": "the root node", "anyOf": [{"$ref": "#/$defs/Node"}]}},
        "required": ["tree"],
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": ["array", "null"], "items": {"$ref": "#/$defs/Node"}},
                },
                "required": ["value", "children"],
                "additionalProperties": False,
            }
        },
        "additionalProperties": False,
    }
    assert report(conversion) == [
        "/additionalProperties: set to false (strict mode)",
        "/properties/tree/$ref: moved into anyOf (nothing may stand beside $ref)",
        "/$defs/Node/additionalProperties: set to false (strict mode)",
        "/$defs/Node/properties/children: made nullable (optional)",
        "/$defs/Node/required: lists every property (strict mode)",
    ]


def test_an_optional_ref_is_wrapped_with_a_null_branch() -> None:
    schema = {"type": "object", "properties": {"next": {"$ref": "#"}}}
    conversion = convert(schema)
    assert conversion.parameters == closed({"next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}})


def test_defaults_and_unsupported_formats_are_removed_supported_formats_kept() -> None:
    schema = obj(
        {
            "count": {"type": "integer", "default": 10},
            "url": {"type": "string", "format": "uri"},
            "when": {"type": "string", "format": "date-time"},
            "name": {"type": "string", "minLength": 1, "maxLength": 9, "pattern": "^[a-z]+$"},
        },
        ["count", "url", "when", "name"],
    )
    conversion = convert(schema)
    assert conversion.parameters == closed(
        {
            "count": {"type": "integer"},
            "url": {"type": "string"},
            "when": {"type": "string", "format": "date-time"},
            "name": {"type": "string", "pattern": "^[a-z]+$"},
        }
    )
    assert report(conversion) == [
        "/additionalProperties: set to false (strict mode)",
        "/properties/count/default: removed (not supported in strict mode)",
        '/properties/url/format: removed (unsupported format "uri")',
        "/properties/name/minLength: removed (not supported in strict mode)",
        "/properties/name/maxLength: removed (not supported in strict mode)",
    ]


def test_properties_named_like_keywords_are_not_touched() -> None:
    schema = obj(
        {"default": {"type": "string"}, "format": {"type": "string"}, "$schema": {"type": "string"}},
        ["default", "format", "$schema"],
    )
    conversion = convert(schema)
    assert conversion.parameters is not None
    assert list(conversion.parameters["properties"]) == ["default", "format", "$schema"]


def test_pointers_escape_slash_and_tilde() -> None:
    conversion = convert(obj({"a/b": {"type": "string"}, "c~d": {"type": "string"}}))
    assert "/properties/a~1b: made nullable (optional)" in report(conversion)
    assert "/properties/c~0d: made nullable (optional)" in report(conversion)


def test_type_lists_that_allow_null_stay_and_are_reported() -> None:
    schema = obj({"a": {"type": ["string", "null"]}, "b": {"type": ["string", "null"]}}, ["a"])
    conversion = convert(schema)
    assert conversion.parameters == obj(
        {"a": {"type": ["string", "null"]}, "b": {"type": ["string", "null"]}},
        ["a", "b"],
        additionalProperties=False,
    )
    assert "/properties/b: now required; already accepts null (optional)" in report(conversion)


def test_an_optional_const_is_wrapped_and_keeps_its_description_outside() -> None:
    schema = obj({"kind": {"type": "string", "const": "file", "description": "always file"}})
    conversion = convert(schema)
    assert conversion.parameters == closed(
        {
            "kind": {
                "anyOf": [{"type": "string", "const": "file"}, {"type": "null"}],
                "description": "always file",
            }
        }
    )


def test_one_entry_allof_becomes_anyof_and_a_longer_one_is_removed() -> None:
    schema = obj(
        {
            "a": {"allOf": [{"type": "string"}]},
            "b": {"type": "integer", "allOf": [{"minimum": 0}, {"maximum": 9}]},
        },
        ["a", "b"],
    )
    conversion = convert(schema)
    assert conversion.parameters == closed({"a": {"anyOf": [{"type": "string"}]}, "b": {"type": "integer"}})
    assert report(conversion) == [
        "/additionalProperties: set to false (strict mode)",
        "/properties/a/allOf: rewritten as anyOf (one entry: same meaning)",
        "/properties/b/allOf: removed (not supported in strict mode)",
    ]


def test_conditional_and_negating_keywords_are_removed() -> None:
    schema = obj(
        {"a": {"type": "string", "not": {"const": "x"}}},
        ["a"],
        **{"if": {"required": ["a"]}, "then": {}, "else": {}, "dependentRequired": {"a": []}},
    )
    conversion = convert(schema)
    assert conversion.parameters == closed({"a": {"type": "string"}})
    assert [line for line in report(conversion) if "removed" in line] == [
        "/if: removed (not supported in strict mode)",
        "/then: removed (not supported in strict mode)",
        "/else: removed (not supported in strict mode)",
        "/dependentRequired: removed (not supported in strict mode)",
        "/properties/a/not: removed (not supported in strict mode)",
    ]


def test_a_root_without_properties_is_a_tool_without_arguments() -> None:
    conversion = convert({"type": "object"})
    assert conversion.parameters == {
        "type": "object",
        "additionalProperties": False,
        "properties": {},
        "required": [],
    }
    assert report(conversion) == [
        "/additionalProperties: set to false (strict mode)",
        "/properties: added {} (object without properties)",
    ]


def test_a_nested_closed_object_without_properties_gets_empty_properties() -> None:
    schema = obj({"o": {"type": "object", "additionalProperties": False}}, ["o"])
    conversion = convert(schema)
    assert conversion.parameters == closed(
        {"o": {"type": "object", "additionalProperties": False, "properties": {}, "required": []}}
    )


def test_a_type_implied_by_properties_is_written_down() -> None:
    conversion = convert(obj({"o": {"properties": {"a": {"type": "string"}}, "required": ["a"]}}, ["o"]))
    assert conversion.parameters is not None
    assert conversion.parameters["properties"]["o"]["type"] == "object"
    assert '/properties/o/type: set to "object" (implied by its keywords)' in report(conversion)


# -- fall-backs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        (
            {"anyOf": [obj({}), obj({})]},
            '/: fell back to non-strict: root is not an object schema ({"type": "object"})',
        ),
        ({"type": "object", "anyOf": [obj({}), obj({})]}, "/: fell back to non-strict: root uses anyOf"),
        ({"type": "object", "oneOf": [obj({})]}, "/: fell back to non-strict: root uses oneOf"),
        (
            {"type": "object", "$ref": "#/$defs/A", "$defs": {"A": obj({})}},
            "/: fell back to non-strict: root uses $ref",
        ),
        ({"type": "string"}, '/: fell back to non-strict: root is not an object schema ({"type": "object"})'),
        (
            obj({"meta": {"type": "object"}}),
            "/properties/meta: fell back to non-strict: free-form object (no properties) cannot be strict",
        ),
        (
            obj({"a": {"type": "string"}}, additionalProperties=True),
            "/additionalProperties: fell back to non-strict: open object (additionalProperties is not false) "
            "cannot be strict",
        ),
        (
            obj({"env": obj({}, additionalProperties={"type": "string"})}),
            "/properties/env/additionalProperties: fell back to non-strict: open object "
            "(additionalProperties is not false) cannot be strict",
        ),
        (
            obj({"tags": {"type": "array"}}),
            "/properties/tags: fell back to non-strict: array without items "
            "(strict mode needs an item schema)",
        ),
        (
            obj({"pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}}),
            "/properties/pair/items: fell back to non-strict: tuple-form items cannot be strict",
        ),
        (
            obj({"any": {}}),
            "/properties/any: fell back to non-strict: schema without a type (strict mode needs one)",
        ),
        (
            obj({"any": {"description": "anything"}}),
            "/properties/any: fell back to non-strict: schema without a type (strict mode needs one)",
        ),
        (
            obj({"x": True}),
            "/properties/x: fell back to non-strict: a boolean is not a schema strict mode accepts",
        ),
        (
            obj({"x": {"type": "strng"}}),
            "/properties/x/type: fell back to non-strict: unknown type ['strng']",
        ),
        (
            obj({"x": {"allOf": [{"type": "string"}, {"minLength": 2}]}}),
            "/properties/x: fell back to non-strict: schema without a type (strict mode needs one)",
        ),
        (
            obj({"x": {"$ref": "https://example.com/s.json"}}),
            "/properties/x/$ref: fell back to non-strict: $ref 'https://example.com/s.json' is not local "
            "(# or #/$defs/...)",
        ),
        (
            obj({"x": {"$ref": "#/$defs/Missing"}}),
            "/properties/x/$ref: fell back to non-strict: $ref '#/$defs/Missing' does not resolve "
            "to a schema",
        ),
        (
            obj({"a": {"type": "string"}}, ["b"]),
            '/required: fell back to non-strict: required property "b" is not declared in properties',
        ),
        (
            obj({"x": {"type": "string", "oneOf": [{}], "anyOf": [{}]}}),
            "/properties/x: fell back to non-strict: uses both anyOf and oneOf",
        ),
        (
            obj({"x": {"$ref": "#/$defs/A", "oneOf": [{"type": "string"}]}}),
            "/properties/x: fell back to non-strict: uses both anyOf and $ref",
        ),
        (obj({"x": {"type": []}}), "/properties/x/type: fell back to non-strict: unknown type []"),
        (
            obj({"x": {"enum": []}}),
            "/properties/x/enum: fell back to non-strict: enum is not a non-empty list",
        ),
    ],
)
def test_schemas_strict_mode_cannot_express_fall_back_with_the_reason(
    schema: dict[str, Any], reason: str
) -> None:
    assert fallback(schema) == reason


def _nested_objects(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = obj({"leaf": {"type": "string"}}, ["leaf"])
    for _ in range(levels - 1):
        node = obj({"child": node}, ["child"])
    return node


def test_ten_levels_of_objects_convert_and_eleven_fall_back() -> None:
    assert convert(_nested_objects(10)).parameters is not None
    pointer = "/properties/child" * 10
    assert fallback(_nested_objects(11)) == (
        f"{pointer}: fell back to non-strict: objects nested deeper than 10 levels"
    )


def test_schemas_deeper_than_the_conversion_budget_fall_back() -> None:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(40):
        node = {"type": "array", "items": node}
    assert fallback(obj({"deep": node}, ["deep"])) == (
        "/properties/deep" + "/items" * 31 + ": fell back to non-strict: schema nested deeper than 32 levels"
    )


def test_schemas_with_more_nodes_than_the_budget_fall_back_before_any_work() -> None:
    properties = {f"p{n}": {"type": "string"} for n in range(25_000)}
    assert (
        fallback(obj(properties))
        == "/: fell back to non-strict: schema has more than 50000 nodes (conversion budget)"
    )


def test_more_than_5000_properties_in_total_fall_back() -> None:
    properties = {f"p{n}": {"type": "integer"} for n in range(2501)}
    schema = obj({"a": obj(properties, list(properties)), "b": obj(properties, list(properties))}, ["a", "b"])
    assert fallback(schema) == "/: fell back to non-strict: more than 5000 properties in total (OpenAI limit)"


def test_more_than_1000_enum_values_in_total_fall_back() -> None:
    schema = obj({"a": {"enum": list(range(600))}, "b": {"enum": list(range(600))}}, ["a", "b"])
    assert (
        fallback(schema) == "/: fell back to non-strict: more than 1000 enum values in total (OpenAI limit)"
    )


def test_a_large_enum_with_long_values_falls_back() -> None:
    schema = obj({"a": {"type": "string", "enum": [f"{n:03d}" + "v" * 57 for n in range(251)]}}, ["a"])
    assert fallback(schema) == (
        "/: fell back to non-strict: an enum of 251 values has 15060 characters (OpenAI limit: 15000 "
        "above 250 values)"
    )


def test_more_than_120000_characters_of_names_fall_back() -> None:
    schema = obj({"k" * 60_001: {"type": "string"}, "j" * 60_000: {"type": "string"}})
    assert fallback(schema) == (
        "/: fell back to non-strict: more than 120000 characters of names and enum/const values in total "
        "(OpenAI limit)"
    )


# -- back to the original: null-stripping -----------------------------------------------------------


READ_TEXT_FILE = obj(
    {"path": {"type": "string"}, "head": {"type": "number"}, "tail": {"type": "number"}}, ["path"]
)


def test_nulls_of_optional_properties_are_removed_and_required_nulls_stay() -> None:
    value = {"path": None, "head": None, "tail": 5}
    assert strip_optional_nulls(value, READ_TEXT_FILE) == {"path": None, "tail": 5}
    assert value == {"path": None, "head": None, "tail": 5}, "the input value is not modified"


def test_nested_objects_and_arrays_of_objects_are_stripped() -> None:
    schema = obj(
        {
            "options": obj({"depth": {"type": "integer"}, "name": {"type": "string"}}, ["name"]),
            "files": {
                "type": "array",
                "items": obj({"path": {"type": "string"}, "mode": {"type": "string"}}, ["path"]),
            },
        }
    )
    value = {
        "options": {"depth": None, "name": None},
        "files": [{"path": "a", "mode": None}, {"path": "b", "mode": "r"}],
    }
    assert strip_optional_nulls(value, schema) == {
        "options": {"name": None},
        "files": [{"path": "a"}, {"path": "b", "mode": "r"}],
    }


def test_refd_and_recursive_objects_are_stripped() -> None:
    schema = {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": obj({"value": {"type": "integer"}, "next": {"$ref": "#/$defs/Node"}}, ["value"])},
    }
    value = {"tree": {"value": 1, "next": {"value": 2, "next": None}}}
    assert strip_optional_nulls(value, schema) == {"tree": {"value": 1, "next": {"value": 2}}}
    assert strip_optional_nulls({"tree": None}, schema) == {}


def test_the_branch_with_the_same_property_names_decides() -> None:
    schema = obj(
        {
            "target": {
                "anyOf": [
                    obj({"path": {"type": "string"}, "line": {"type": "integer"}}, ["path"]),
                    obj({"url": {"type": "string"}, "line": {"type": ["integer", "null"]}}, ["url", "line"]),
                ]
            }
        },
        ["target"],
    )
    assert strip_optional_nulls({"target": {"path": "a", "line": None}}, schema) == {"target": {"path": "a"}}
    assert strip_optional_nulls({"target": {"url": "u", "line": None}}, schema) == {
        "target": {"url": "u", "line": None}
    }


def test_items_of_the_array_branch_the_value_was_made_for_are_stripped() -> None:
    """Found by the property test: an anyOf of two array types; the second one's items hold
    the optional null, so the first branch's items (strings) must not decide."""
    node = obj({"v": {"type": "integer"}, "next": {"$ref": "#/$defs/Node"}}, ["v"])
    schema = {
        **obj({"a": {"anyOf": [{"type": "array", "items": {"type": "string"}},
                               {"type": "array", "items": {"$ref": "#/$defs/Node"}}]}}),
        "$defs": {"Node": node},
    }
    stripped = strip_optional_nulls({"a": [{"v": 0, "next": None}]}, schema)
    assert stripped == {"a": [{"v": 0}]}
    assert not list(Draft202012Validator(schema).iter_errors(stripped))
    assert strip_optional_nulls({"a": ["x", "y"]}, schema) == {"a": ["x", "y"]}


def test_a_branch_with_exactly_the_values_names_beats_a_wider_one() -> None:
    wide = obj({"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}}, ["a", "c"])
    narrow = obj({"a": {"type": "integer"}, "b": {"type": ["integer", "null"]}}, ["a", "b"])
    schema = obj({"v": {"anyOf": [wide, narrow]}}, ["v"])
    value = {"v": {"a": 1, "b": None}}
    assert strip_optional_nulls(value, schema) == value
    assert not list(Draft202012Validator(schema).iter_errors(value))


def test_a_branch_where_a_null_is_not_allowed_is_passed_over() -> None:
    strict_x = obj({"x": {"type": "string"}, "y": {"type": "integer"}}, ["x"])
    null_x = obj({"x": {"type": ["string", "null"]}, "y": {"type": ["integer", "null"]}}, ["x", "y"])
    schema = obj({"v": {"anyOf": [strict_x, null_x]}}, ["v"])
    value = {"v": {"x": None, "y": None}}
    assert strip_optional_nulls(value, schema) == value
    assert not list(Draft202012Validator(schema).iter_errors(value))


def test_allof_parts_are_read_together() -> None:
    schema = {"allOf": [obj({"a": {"type": "string"}}, ["a"]), obj({"b": {"type": "string"}})]}
    assert strip_optional_nulls({"a": None, "b": None}, schema) == {"a": None}


def test_keys_the_schema_does_not_declare_are_left_alone() -> None:
    assert strip_optional_nulls({"path": "a", "extra": None}, READ_TEXT_FILE) == {"path": "a", "extra": None}
