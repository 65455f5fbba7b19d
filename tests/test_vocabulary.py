"""The Responses wire vocabulary is spelled once, in ``protocol/responses.py``.

Everywhere else in src/ an item or part type is written as that module's constant
(``FUNCTION_CALL``, ``INPUT_TEXT``, ...), so a new item type is one edit there and a grep
for the constant finds every reader. The scan reads each module with ``ast``; docstrings
(and attribute docstrings) are prose and are skipped. Its rule, chosen to have no false
positives on toolrelay's own code:

- a type name with an underscore (``function_call``, ``function_call_output``,
  ``input_text``, ``output_text``, ...) is flagged as any string constant: no JSON field,
  status or message toolrelay writes is spelled like one;
- a one-word type name (``message``, ``reasoning``, ``refusal``) is also a JSON-RPC field,
  an error's field, a part's field and a server-sent event's name, so it is flagged only
  where it stands for a type: compared (``==``, ``!=``, or ``in`` a literal tuple, list
  or set) with a ``"type"`` lookup (``x["type"]``, ``x.get("type")``) or with a plain
  variable (``kind = item.get("type")``), as the value of a ``"type"`` key in a dict
  literal, or as a ``case`` pattern;
- a server-sent event type of a streamed response (``response.output_text.delta``, ...;
  every one but ``error``, which is also a field) is flagged as any string constant.
"""

from __future__ import annotations

import ast
import typing
from pathlib import Path

from conftest import REPO
from toolrelay.protocol import responses

SRC = REPO / "src" / "toolrelay"
VOCABULARY = SRC / "protocol" / "responses.py"
FOREIGN_NAMES = SRC / "protocol" / "foreign_names.py"  # chat and evals fields spelled like types

TYPE_NAMES = responses.ITEM_TYPES | responses.PART_TYPES
EVENT_NAMES = responses.STREAM_EVENT_TYPES - {responses.STREAM_ERROR}
_ANYWHERE = frozenset(name for name in TYPE_NAMES if "_" in name) | EVENT_NAMES
_AS_TYPE_ONLY = TYPE_NAMES - _ANYWHERE


def literal_type_names(source: str) -> list[tuple[int, str]]:
    """(line, name) for each string constant in ``source`` that spells a Responses type
    name where the module's rule (above) says it must be the constant."""
    tree = ast.parse(source)
    prose = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    as_type = {id(node) for node in _type_positions(tree)}
    return sorted(
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
        and (node.value in _ANYWHERE or (node.value in _AS_TYPE_ONLY and id(node) in as_type))
    )


def _type_positions(tree: ast.AST) -> list[ast.expr]:
    """The expressions that stand for a type: compared with one, a "type" value, a case pattern."""
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            found.extend(_compared_with_a_type(node))
        elif isinstance(node, ast.Dict):
            found.extend(
                value for key, value in zip(node.keys, node.values, strict=True)
                if isinstance(key, ast.Constant) and key.value == "type"
            )
        elif isinstance(node, ast.MatchValue):
            found.append(node.value)
    return found


def _compared_with_a_type(node: ast.Compare) -> list[ast.expr]:
    """Each operand compared with a type: ``kind == "message"``, ``kind in ("message", ...)``;
    but ``"message" in entry`` asks for a key, so a membership test flags only its container."""
    found: list[ast.expr] = []
    lefts = (node.left, *node.comparators[:-1])
    for left, op, right in zip(lefts, node.ops, node.comparators, strict=True):
        if isinstance(op, ast.In | ast.NotIn):
            if _holds_a_type(left) and isinstance(right, ast.Tuple | ast.List | ast.Set):
                found.extend(right.elts)
        elif _holds_a_type(left) or _holds_a_type(right):
            found.extend(side for side in (left, right) if isinstance(side, ast.Constant))
    return found


def _holds_a_type(node: ast.expr) -> bool:
    """``x["type"]``, ``x.get("type")`` or a plain variable (which may hold one)."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Subscript):
        key = node.slice
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        key = node.args[0] if node.args else None
    else:
        return False
    return isinstance(key, ast.Constant) and key.value == "type"


STANDALONE_CHECKS = SRC / "examples"
"""Scripts shipped beside the package that import nothing from it, on purpose: an
independent check spells the wire format itself, so a wrong constant cannot pass both."""


def _scanned_files() -> list[Path]:
    return [
        path for path in sorted(SRC.rglob("*.py"))
        if path not in (VOCABULARY, FOREIGN_NAMES) and STANDALONE_CHECKS not in path.parents
    ]


def test_src_spells_no_responses_type_name_outside_the_vocabulary() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}: {name!r} (use protocol.responses' constant)"
        for path in _scanned_files()
        for line, name in literal_type_names(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_scan_flags_each_use_of_a_type_name_and_no_field_of_that_name() -> None:
    source = '''
"""A docstring may say function_call and message."""
def read(item, block, error):
    """So may a function's."""
    if item.get("type") == "function_call":
        return {"type": "function_call_output", "output": error["message"]}
    if block["type"] in ("output_text", "refusal"):
        return block["refusal"]
    if kind == "message" or event.event == "message" or error["message"] == "refusal":
        return kind
    match item.get("type"):
        case "reasoning":
            return {"type": "message", "role": "user", "message": "input_file"}
    return {"message": "the function_call has no name", "refusal": "message"}
'''
    assert literal_type_names(source) == [
        (5, "function_call"),
        (6, "function_call_output"),
        (7, "output_text"),
        (7, "refusal"),
        (9, "message"),
        (12, "reasoning"),
        (13, "input_file"),
        (13, "message"),
    ]


def test_stream_event_names_are_flagged_anywhere_but_error_is_not() -> None:
    source = '''
def read(event):
    if event.type == "response.output_text.delta":
        return {"type": "error", "error": event.data}
    return HANDLERS.get("response.completed")
'''
    assert literal_type_names(source) == [(3, "response.output_text.delta"), (5, "response.completed")]


def test_every_stream_event_name_is_listed_and_spelled_as_the_api_does() -> None:
    constants = {name: value for name, value in vars(responses).items()
                 if isinstance(value, str) and (value.startswith("response.") or value == "error")}
    assert set(constants.values()) == responses.STREAM_EVENT_TYPES
    named = responses.TERMINAL_STREAM_EVENTS | responses.RETRY_SAFE_STREAM_EVENTS
    assert named <= responses.STREAM_EVENT_TYPES
    assert set(responses.TERMINAL_STATUS) == responses.TERMINAL_STREAM_EVENTS


def test_every_item_and_part_typed_dict_names_a_listed_type() -> None:
    declared = {
        name: typing.get_args(typing.get_type_hints(cls)["type"])
        for name, cls in vars(responses).items()
        if typing.is_typeddict(cls)
    }
    assert declared, "protocol.responses declares no TypedDict"
    unlisted = {name: types for name, types in declared.items() if not set(types) <= TYPE_NAMES}
    assert unlisted == {}
