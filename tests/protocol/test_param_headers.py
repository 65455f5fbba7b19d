"""SEP-2243's ``x-mcp-header`` marks (``protocol/param_headers.py``): which arguments become
``Mcp-Param-*`` headers and how their values are written."""

from __future__ import annotations

import base64

from toolrelay.protocol.param_headers import annotation_problem, marks_of, mirrored

SCHEMA = {"type": "object", "properties": {
    "region": {"type": "string", "x-mcp-header": "Region"},
    "priority": {"type": "integer", "x-mcp-header": "Priority"},
    "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
    "where": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
    "query": {"type": "string"},
}}


def _wrapped(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


def test_marked_arguments_are_mirrored_as_text_and_unmarked_ones_never() -> None:
    assert annotation_problem(SCHEMA) is None
    headers = mirrored(marks_of(SCHEMA), {"region": "us-west1", "priority": 42, "verbose": False,
                                          "where": {"zone": "b"}, "query": "SELECT 1"})
    assert headers == {"mcp-param-region": "us-west1", "mcp-param-priority": "42",
                       "mcp-param-verbose": "false", "mcp-param-zone": "b"}


def test_values_a_header_cannot_carry_are_wrapped_and_null_ones_omitted() -> None:
    marks = marks_of(SCHEMA)
    for text in ("Hello, 世界", " padded ", "line1\r\nline2", "\tindented", "=?base64?SGk=?="):
        assert mirrored(marks, {"region": text}) == {"mcp-param-region": _wrapped(text)}
    assert mirrored(marks, {"region": "us west 1"}) == {"mcp-param-region": "us west 1"}
    assert mirrored(marks, {"region": None, "verbose": None}) == {}


def test_a_mark_on_the_root_or_with_no_type_breaks_the_rules() -> None:
    assert annotation_problem({"type": "object", "x-mcp-header": "Root"}) is not None
    assert annotation_problem({"type": "object", "properties": {"x": {"x-mcp-header": "X"}}}) is not None
    assert annotation_problem({"type": "object", "properties": {"x": {"type": "string", "x-mcp-header": ""}}})
