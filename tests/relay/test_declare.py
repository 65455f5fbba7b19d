"""Declarations: MCP tools → the exact Responses ``tools`` array, strict or not, with reports."""

from __future__ import annotations

import copy
import json
from typing import Any

from jsonschema import Draft7Validator
from relay_helpers import READ_TEXT_FILE_SCHEMA, READ_TEXT_FILE_TOOL

from toolrelay.relay.stages.arguments import ArgumentChecker
from toolrelay.relay.stages.declare import declare_tools, normalize_parameters
from toolrelay.relay.stages.optional_nulls import strip_optional_nulls

DESCRIPTION = READ_TEXT_FILE_TOOL["description"]
TAIL = {"description": "If provided, returns only the last N lines of the file", "type": "number"}
HEAD = {"description": "If provided, returns only the first N lines of the file", "type": "number"}


def _tool(name: str, schema: Any = None, **more: Any) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name, "description": f"{name} does things", **more}
    tool["inputSchema"] = schema if schema is not None else {"type": "object", "properties": {}}
    return tool


def test_read_text_file_non_strict_is_the_input_schema_without_dollar_schema() -> None:
    original = copy.deepcopy(READ_TEXT_FILE_TOOL)
    declared = declare_tools([("fs", READ_TEXT_FILE_TOOL)])
    [declaration] = declared.declarations
    assert json.dumps(declared.tools()) == json.dumps(
        [
            {
                "type": "function",
                "name": "fs__read_text_file",
                "description": DESCRIPTION,
                "parameters": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}, "tail": TAIL, "head": HEAD},
                    "required": ["path"],
                },
                "strict": False,
            }
        ]
    ), "exact content and key order"
    assert declaration.report.lines() == ["/$schema: removed (the API does not take it)"]
    assert declaration.rule is READ_TEXT_FILE_TOOL["inputSchema"]
    assert original == READ_TEXT_FILE_TOOL, "the rule (inputSchema) is never modified"
    assert (declaration.server, declaration.tool, declaration.strict) == ("fs", "read_text_file", False)
    assert declaration.annotations == {"readOnlyHint": True, "openWorldHint": False}


def test_read_text_file_strict_makes_head_and_tail_nullable() -> None:
    original = copy.deepcopy(READ_TEXT_FILE_TOOL)
    [declaration] = declare_tools([("fs", READ_TEXT_FILE_TOOL)], strict=True).declarations
    assert json.dumps(declaration.function_tool) == json.dumps(
        {
            "type": "function",
            "name": "fs__read_text_file",
            "description": DESCRIPTION,
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "tail": {**TAIL, "type": ["number", "null"]},
                    "head": {**HEAD, "type": ["number", "null"]},
                },
                "required": ["path", "tail", "head"],
                "additionalProperties": False,
            },
            "strict": True,
        }
    )
    assert declaration.report.lines() == [
        "/$schema: removed (the API does not take it)",
        "/additionalProperties: set to false (strict mode)",
        "/properties/tail: made nullable (optional)",
        "/properties/head: made nullable (optional)",
        "/required: lists every property (strict mode)",
    ]
    assert original == READ_TEXT_FILE_TOOL


def test_strict_read_text_file_values_strip_to_what_the_node_server_accepts() -> None:
    """head alone, tail alone, neither: the three calls that must work (spec.md §C1 trap)."""
    original = Draft7Validator(READ_TEXT_FILE_SCHEMA)
    cases = [
        ({"path": "/r/a.txt", "head": 20, "tail": None}, {"path": "/r/a.txt", "head": 20}),
        ({"path": "/r/a.txt", "head": None, "tail": 5}, {"path": "/r/a.txt", "tail": 5}),
        ({"path": "/r/a.txt", "head": None, "tail": None}, {"path": "/r/a.txt"}),
    ]
    for strict_value, sent in cases:
        stripped = strip_optional_nulls(strict_value, READ_TEXT_FILE_SCHEMA)
        assert stripped == sent
        assert list(stripped) == list(sent)
        assert not list(original.iter_errors(stripped))
        assert list(original.iter_errors(strict_value)), "unstripped, the original refuses the nulls"


def test_strict_read_text_file_arguments_text_end_to_end() -> None:
    checker = ArgumentChecker()
    prepared = checker.prepare(
        "fs__read_text_file",
        READ_TEXT_FILE_SCHEMA,
        '{"path": "/r/a.txt", "tail": null, "head": 3}',
        strict=True,
    )
    assert prepared == {"path": "/r/a.txt", "head": 3}
    unstripped = checker.prepare(
        "fs__read_text_file", READ_TEXT_FILE_SCHEMA, '{"path": "/r/a.txt", "tail": null}', strict=False
    )
    assert not isinstance(unstripped, dict)
    assert unstripped.message == (
        "arguments do not match the tool's input schema: tail: expected number, got null (null)"
    )


def test_two_servers_with_the_same_tool_and_hostile_names() -> None:
    declared = declare_tools(
        [
            ("fs", READ_TEXT_FILE_TOOL),
            ("backup", READ_TEXT_FILE_TOOL),
            ("fs", _tool("a.b")),
            ("fs", _tool("a_b")),
        ]
    )
    assert [d.alias for d in declared.declarations] == [
        "backup__read_text_file",
        "fs__a_b_76a65fd8",
        "fs__a_b",
        "fs__read_text_file",
    ]
    by_alias = declared.by_alias()
    assert (by_alias["fs__a_b_76a65fd8"].server, by_alias["fs__a_b_76a65fd8"].tool) == ("fs", "a.b")
    assert by_alias["fs__a_b_76a65fd8"].report.notes == (
        "name: fs__a_b_76a65fd8 for fs__a.b (hash added: another tool maps to the same name)",
    )
    assert by_alias["fs__a_b"].report.notes == ()


def test_the_tools_array_does_not_depend_on_catalog_order() -> None:
    catalog = [("fs", READ_TEXT_FILE_TOOL), ("x", _tool("y__z")), ("x__y", _tool("z")), ("b", _tool("t"))]
    first = declare_tools(catalog, strict=True).tools()
    assert declare_tools(list(reversed(catalog)), strict=True).tools() == first


def test_description_falls_back_to_title_then_annotation_title_and_is_never_invented() -> None:
    schema = {"type": "object", "properties": {}}
    declared = declare_tools(
        [
            ("s", {"name": "t1", "title": "Title One", "inputSchema": schema}),
            (
                "s",
                {
                    "name": "t2",
                    "description": "",
                    "annotations": {"title": "From Annotations"},
                    "inputSchema": schema,
                },
            ),
            ("s", {"name": "t3", "inputSchema": schema}),
        ]
    ).by_alias()
    assert declared["s__t1"].function_tool["description"] == "Title One"
    assert declared["s__t1"].report.notes == ("description: none given; the title is used",)
    assert declared["s__t2"].function_tool["description"] == "From Annotations"
    assert declared["s__t2"].report.notes == ("description: none given; the annotations.title is used",)
    assert list(declared["s__t3"].function_tool) == ["type", "name", "parameters", "strict"]
    assert declared["s__t3"].description is None
    assert declared["s__t3"].report.notes == ("description: none given by the server (left out)",)


def test_normalisations_the_api_demands_are_made_and_reported() -> None:
    parameters, changes = normalize_parameters({"$schema": "https://json-schema.org/draft/2020-12/schema"})
    assert parameters == {"type": "object", "properties": {}}
    assert [str(change) for change in changes] == [
        "/$schema: removed (the API does not take it)",
        '/type: set to "object" (missing)',
        "/properties: added {} (object without properties)",
    ]
    unchanged, none = normalize_parameters({"type": "object", "properties": {"a": {"type": "string"}}})
    assert unchanged == {"type": "object", "properties": {"a": {"type": "string"}}}
    assert none == ()


def test_a_tool_without_input_schema_is_declared_as_taking_no_arguments() -> None:
    [declaration] = declare_tools([("s", {"name": "ping", "description": "p"})]).declarations
    assert declaration.function_tool["parameters"] == {"type": "object", "properties": {}}
    assert declaration.rule == {}


def test_unusable_tools_are_skipped_with_the_reason() -> None:
    declared = declare_tools(
        [
            ("s", {"description": "no name"}),
            ("s", _tool("ok")),
            ("s", _tool("ok", {"type": "object", "properties": {"other": {"type": "string"}}})),
            ("s", {"name": "bad", "inputSchema": ["not", "an", "object"]}),
            ("s", "not a tool"),
        ]
    )
    assert [d.alias for d in declared.declarations] == ["s__ok"]
    assert declared.declarations[0].function_tool["parameters"] == {"type": "object", "properties": {}}
    assert declared.skipped == (
        "server 's': tool #1 skipped: no \"name\" string",
        "server 's': tool #3 skipped: duplicate name 'ok' (the first one is used)",
        "server 's': tool #4 skipped: inputSchema of 'bad' is not an object (got array)",
        "server 's': tool #5 skipped: no \"name\" string",
    )


def test_one_tool_falls_back_alone_with_its_normalised_original_parameters() -> None:
    open_schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"env": {"type": "object", "additionalProperties": {"type": "string"}}},
    }
    declared = declare_tools([("s", _tool("run", open_schema)), ("fs", READ_TEXT_FILE_TOOL)], strict=True)
    run = declared.by_alias()["s__run"]
    assert run.function_tool["strict"] is False
    assert run.function_tool["parameters"] == {
        "type": "object",
        "properties": {"env": {"type": "object", "additionalProperties": {"type": "string"}}},
    }
    assert run.report.lines() == [
        "/$schema: removed (the API does not take it)",
        "/properties/env/additionalProperties: fell back to non-strict: open object (additionalProperties "
        "is not false) cannot be strict",
    ]
    assert run.report.fallback_reason == "open object (additionalProperties is not false) cannot be strict"
    assert (run.report.strict_requested, run.report.strict) == (True, False)
    assert declared.by_alias()["fs__read_text_file"].function_tool["strict"] is True


def test_strict_can_be_chosen_per_server() -> None:
    declared = declare_tools(
        [("fs", READ_TEXT_FILE_TOOL), ("other", READ_TEXT_FILE_TOOL)], strict={"fs": True}
    ).by_alias()
    assert declared["fs__read_text_file"].strict is True
    assert declared["other__read_text_file"].strict is False
    assert declared["other__read_text_file"].report.strict_requested is False


def test_parameters_share_nothing_with_the_rule() -> None:
    [declaration] = declare_tools([("fs", READ_TEXT_FILE_TOOL)]).declarations
    declaration.function_tool["parameters"]["properties"]["path"]["type"] = "changed"
    assert READ_TEXT_FILE_SCHEMA["properties"]["path"] == {"type": "string"}
