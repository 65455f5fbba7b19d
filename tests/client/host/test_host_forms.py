"""An elicitation form read from the spec's restricted schema: every field kind, its
defaults (SEP-1034), values typed as text, and the schemas a client must refuse."""

from __future__ import annotations

from typing import Any

import pytest

from toolrelay.client.host import form_fields, schema_defaults

# server-everything's trigger-elicitation-request form, shortened: every kind the spec allows
EVERYTHING_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"title": "String", "type": "string", "description": "Your full, legal name"},
        "check": {"type": "boolean", "title": "Boolean"},
        "email": {"type": "string", "format": "email"},
        "homepage": {"type": "string", "format": "uri"},
        "birthdate": {"type": "string", "format": "date"},
        "integer": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
        "number": {"type": "number", "minimum": 0, "maximum": 1000, "default": 3.14},
        "friend": {"type": "string", "enum": ["Monica", "Rachel", "Joey"], "default": "Monica"},
        "instruments": {
            "type": "array",
            "minItems": 1,
            "maxItems": 2,
            "items": {"type": "string", "enum": ["Guitar", "Piano", "Drums"]},
            "default": ["Guitar"],
        },
        "hero": {
            "type": "string",
            "oneOf": [{"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Wonder Woman"}],
            "default": "hero-1",
        },
        "fish": {
            "type": "array",
            "items": {
                "anyOf": [{"const": "fish-1", "title": "Tuna"}, {"const": "fish-2", "title": "Salmon"}]
            },
            "default": ["fish-1"],
        },
        "pet": {
            "type": "string",
            "enum": ["pet-1", "pet-2"],
            "enumNames": ["Cats", "Dogs"],
            "default": "pet-1",
        },
    },
    "required": ["name"],
}

# the conformance suite's SEP-1034 scenario: five optional fields, each with a default
SEP1034_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    },
}


def test_every_field_kind_is_read_with_its_choices_and_bounds() -> None:
    fields = {f.name: f for f in form_fields(EVERYTHING_FORM)}
    assert {name: f.kind for name, f in fields.items()} == {
        "name": "string",
        "check": "boolean",
        "email": "string",
        "homepage": "string",
        "birthdate": "string",
        "integer": "integer",
        "number": "number",
        "friend": "choice",
        "instruments": "choices",
        "hero": "choice",
        "fish": "choices",
        "pet": "choice",
    }
    assert fields["name"].required and fields["name"].title == "String" and not fields["name"].has_default
    assert fields["hero"].options == (("hero-1", "Superman"), ("hero-2", "Wonder Woman"))
    assert fields["pet"].options == (("pet-1", "Cats"), ("pet-2", "Dogs"))
    assert fields["fish"].options == (("fish-1", "Tuna"), ("fish-2", "Salmon"))
    assert (fields["integer"].minimum, fields["integer"].maximum) == (1, 100)
    assert (fields["instruments"].min_items, fields["instruments"].max_items) == (1, 2)


def test_defaults_keep_their_json_types_and_fields_without_one_are_left_out() -> None:
    assert schema_defaults(form_fields(SEP1034_FORM)) == {
        "name": "John Doe",
        "age": 30,
        "score": 95.5,
        "status": "active",
        "verified": True,
    }
    defaults = schema_defaults(form_fields(EVERYTHING_FORM))
    assert defaults == {
        "integer": 42,
        "number": 3.14,
        "friend": "Monica",
        "instruments": ["Guitar"],
        "hero": "hero-1",
        "fish": ["fish-1"],
        "pet": "pet-1",
    }
    assert type(defaults["integer"]) is int


def test_a_default_that_does_not_fit_its_field_is_not_sent() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "maximum": 5, "default": 9},
            "c": {"type": "string", "enum": ["a"], "default": "b"},
        },
    }
    assert schema_defaults(form_fields(schema)) == {}


@pytest.mark.parametrize(
    ("name", "typed", "value"),
    [
        ("check", "y", True),
        ("check", "No", False),
        ("integer", "7", 7),
        ("number", "2.5", 2.5),
        ("number", "12", 12),
        ("friend", "2", "Rachel"),
        ("friend", "Joey", "Joey"),
        ("hero", "Wonder Woman", "hero-2"),
        ("instruments", "1, 3", ["Guitar", "Drums"]),
        ("fish", "Salmon", ["fish-2"]),
        ("email", "a@b.io", "a@b.io"),
        ("birthdate", "2001-02-03", "2001-02-03"),
        ("homepage", "https://example.com", "https://example.com"),
    ],
)
def test_a_typed_answer_becomes_the_fields_value(name: str, typed: str, value: Any) -> None:
    field = {f.name: f for f in form_fields(EVERYTHING_FORM)}[name]
    assert field.parse(typed) == value
    assert type(field.parse(typed)) is type(value)


@pytest.mark.parametrize(
    ("name", "typed", "said"),
    [
        ("integer", "101", "at most 100"),
        ("integer", "4.5", "a whole number"),
        ("check", "maybe", "yes or no"),
        ("email", "nobody", "an email address"),
        ("birthdate", "3 Feb", "a date, YYYY-MM-DD"),
        ("friend", "7", "choose one of 1-3"),
        ("instruments", "1,2,3", "choose at most 2"),
        ("homepage", "not a uri", "a URI"),
    ],
)
def test_a_value_that_does_not_fit_says_what_is_expected(name: str, typed: str, said: str) -> None:
    field = {f.name: f for f in form_fields(EVERYTHING_FORM)}[name]
    with pytest.raises(ValueError, match=said):
        field.parse(typed)


@pytest.mark.parametrize(
    ("schema", "said"),
    [
        ({"type": "array"}, 'requestedSchema must be {"type": "object"'),
        ({"type": "object", "properties": {"o": {"type": "object"}}}, "property 'o' has type 'object'"),
        (
            {"type": "object", "properties": {"s": {"type": "string", "format": "hostname"}}},
            "format 'hostname'",
        ),
        (
            {"type": "object", "properties": {"m": {"type": "array", "items": {"type": "string"}}}},
            "an enum needs",
        ),
    ],
)
def test_a_schema_outside_the_restricted_set_is_refused(schema: dict[str, Any], said: str) -> None:
    with pytest.raises(ValueError, match=said):
        form_fields(schema)
