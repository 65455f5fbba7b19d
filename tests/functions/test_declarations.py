"""A function's MCP declaration: schemas from hints, words from the docstring, and the
errors a declaration that cannot be made raises (when declared, not when called)."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Optional, TypedDict, Union

import pytest

import toolrelay
from toolrelay.functions.docstrings import parse_docstring
from toolrelay.functions.schema import SchemaBuilder


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Point:
    """A point on the map."""

    x: float
    y: float
    label: str = ""


class Span(TypedDict, total=False):
    start: int
    end: int


@pytest.mark.parametrize(("hint", "schema"), [
    (str, {"type": "string"}),
    (int, {"type": "integer"}),
    (float, {"type": "number"}),
    (bool, {"type": "boolean"}),
    (None, {"type": "null"}),
    (Any, {}),
    (Literal["a", "b"], {"enum": ["a", "b"], "type": "string"}),
    (Literal[1, "x"], {"enum": [1, "x"]}),
    (Color, {"enum": ["red", "blue"], "type": "string"}),
    (list[int], {"type": "array", "items": {"type": "integer"}}),
    (Sequence[str], {"type": "array", "items": {"type": "string"}}),
    (set[str], {"type": "array", "items": {"type": "string"}}),
    (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
    (tuple[int, str], {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                       "items": False, "minItems": 2, "maxItems": 2}),
    (dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
    (Optional[int], {"anyOf": [{"type": "integer"}, {"type": "null"}]}),  # noqa: UP045
    (Union[int, str], {"anyOf": [{"type": "integer"}, {"type": "string"}]}),  # noqa: UP007
    (int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
    (Annotated[str, "The city."], {"type": "string", "description": "The city."}),
    (Span, {"type": "object", "title": "Span", "properties": {"start": {"type": "integer"},
                                                              "end": {"type": "integer"}},
            "additionalProperties": False}),
    (Point, {"type": "object", "title": "Point", "description": "A point on the map.",
             "properties": {"x": {"type": "number"}, "y": {"type": "number"}, "label": {"type": "string"}},
             "required": ["x", "y"], "additionalProperties": False}),
])
def test_each_hint_has_its_schema(hint: Any, schema: dict[str, Any]) -> None:
    assert SchemaBuilder().schema(hint) == schema


def test_a_pydantic_model_is_described_by_pydantic() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Inner(pydantic.BaseModel):
        n: int

    class Outer(pydantic.BaseModel):
        inner: Inner
        note: str = "x"

    @toolrelay.tool
    def take(value: Outer) -> Outer:
        return value

    schema = take.declaration()["inputSchema"]
    assert schema["properties"]["value"]["title"] == "Outer"
    assert schema["properties"]["value"]["properties"]["inner"] == {"$ref": "#/$defs/Inner"}
    assert set(schema["$defs"]) == {"Inner"}  # at the top, where the reference points
    assert take.declaration()["outputSchema"]["title"] == "Outer"


GOOGLE = '''Find notes.

    Longer words about it.

    Args:
        query: What to look for,
            over two lines.
        limit (int): At most this many.

    Returns:
        The notes.
    '''
NUMPY = '''Find notes.

    Longer words about it.

    Parameters
    ----------
    query : str
        What to look for,
        over two lines.
    limit : int
        At most this many.

    Returns
    -------
    list
    '''
REST = '''Find notes.

    Longer words about it.

    :param query: What to look for,
        over two lines.
    :param int limit: At most this many.
    :returns: the notes
    '''


@pytest.mark.parametrize("doc", [GOOGLE, NUMPY, REST], ids=["google", "numpy", "rest"])
def test_docstring_styles_give_the_same_words(doc: str) -> None:
    parsed = parse_docstring(doc)
    assert parsed.description == "Find notes.\n\nLonger words about it."
    assert parsed.params == {"query": "What to look for, over two lines.", "limit": "At most this many."}


def test_a_tool_declaration_from_signature_and_docstring() -> None:
    @toolrelay.tool(read_only=True, idempotent=True)
    def find(query: str, limit: int = 5, color: Color | None = None) -> list[Point]:
        """Find points.

        Args:
            query: What to look for.
            limit: At most this many.
        """
        return []

    declared = find.declaration()
    assert declared["name"] == "find" and declared["description"] == "Find points."
    assert declared["inputSchema"] == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {"type": "integer", "description": "At most this many.", "default": 5},
            "color": {"anyOf": [{"enum": ["red", "blue"], "type": "string"}, {"type": "null"}],
                      "default": None},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    # a list is not an object: the output is {"result": [...]}
    assert declared["outputSchema"]["required"] == ["result"]
    assert declared["outputSchema"]["properties"]["result"]["type"] == "array"
    assert declared["annotations"] == {"readOnlyHint": True, "idempotentHint": True}
    assert find("q") == []  # still the function


def test_names_descriptions_and_hints_can_be_given() -> None:
    def fn(ctx: toolrelay.ToolContext, x: int) -> str:
        return str(x)

    declared = toolrelay.tool(fn, name="other", description="Said here.", destructive=True).declaration()
    assert declared["name"] == "other" and declared["description"] == "Said here."
    assert list(declared["inputSchema"]["properties"]) == ["x"]  # the context is not in the schema
    assert "outputSchema" not in declared  # text
    assert declared["annotations"] == {"readOnlyHint": False, "destructiveHint": True}


class Opaque:
    pass


def test_what_cannot_be_declared_says_why() -> None:
    def takes_opaque(thing: Opaque) -> str:
        return ""

    def takes_args(*values: int) -> str:
        return ""

    def no_args() -> str:
        return ""

    def takes_int_keys(table: dict[int, str]) -> str:
        return ""

    with pytest.raises(TypeError) as failed:
        toolrelay.tool(takes_opaque)
    assert str(failed.value) == (
        "tool takes_opaque, parameter thing: cannot describe Opaque as JSON Schema "
        "(use str, int, float, bool, None, Literal, Enum, list, dict, tuple, unions, TypedDict, "
        "dataclasses, pydantic models)")
    with pytest.raises(TypeError, match=r"^tool takes_args: \*values / \*\*values cannot be declared"):
        toolrelay.tool(takes_args)
    with pytest.raises(TypeError, match=r"^tool f: positional-only parameter x cannot be given by name$"):
        toolrelay.tool(lambda x, /: x, name="f")
    with pytest.raises(TypeError, match=r"JSON object keys are strings$"):
        toolrelay.tool(takes_int_keys)
    with pytest.raises(ValueError, match=r"^tool name 'a b': 1 to 128 of"):
        toolrelay.tool(lambda: "", name="a b")
    with pytest.raises(ValueError, match=r"^server g: two tools named f \(pass name= to one\)$"):
        toolrelay.tools_server("g", [toolrelay.tool(no_args, name="f"), toolrelay.tool(Opaque, name="f")])
