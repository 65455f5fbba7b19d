"""A tool definition's digest: one per definition, whatever the key order or number form;
any change to what the model is shown (or what consent relies on) changes it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from toolrelay.protocol.tool_digest import canonical_json, tool_digest

TOOL: dict[str, Any] = {
    "name": "write_note", "title": "Write", "description": "Write a note.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string", "maxLength": 100}}},
    "annotations": {"readOnlyHint": False},
}


def test_key_order_and_number_forms_do_not_change_the_digest() -> None:
    reordered = {key: TOOL[key] for key in reversed(TOOL)}
    text = {"maxLength": 100.0, "type": "string"}
    reordered["inputSchema"] = {"properties": {"text": text}, "type": "object"}
    assert tool_digest(reordered) == tool_digest(TOOL)
    assert tool_digest(TOOL).startswith("sha256:") and len(tool_digest(TOOL)) == 71
    assert canonical_json({"b": -0.0, "a": [1.5, True, None, "é"]}) == '{"a":[1.5,true,null,"é"],"b":0}'


def test_icons_and_meta_are_not_part_of_the_definition() -> None:
    decorated = {**TOOL, "icons": [{"src": "data:,"}], "_meta": {"x": 1},
                 "execution": {"taskSupport": "optional"}}
    assert tool_digest(decorated) == tool_digest(TOOL)


@pytest.mark.parametrize("path, value", [
    (("description",), "Write a note, then mail it."),
    (("title",), "Writer"),
    (("inputSchema", "properties", "text", "maxLength"), 101),
    (("annotations", "readOnlyHint"), True),
    (("outputSchema",), {"type": "object"}),
])
def test_every_field_of_the_definition_changes_the_digest(path: tuple[str, ...], value: Any) -> None:
    changed = copy.deepcopy(TOOL)
    target = changed
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert tool_digest(changed) != tool_digest(TOOL)
