"""The JSON comparisons behind every finding: strict about true vs 1, precise about where."""

from __future__ import annotations

from toolrelay.verify.jsonpath import excerpt, first_difference, item_label, json_equal


def test_true_is_not_one_and_false_is_not_zero() -> None:
    assert {"head": True} == {"head": 1}  # what Python's == says
    assert not json_equal({"head": True}, {"head": 1})
    assert not json_equal([False], [0])
    assert json_equal({"head": 20}, {"head": 20.0})  # the same JSON number
    assert json_equal({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]})
    assert not json_equal({"a": 1}, {"a": 1, "b": 2})


def test_first_difference_names_the_path() -> None:
    request = {"input": [{"type": "message"}, {"type": "function_call", "arguments": "{}"}]}
    changed = {"input": [{"type": "message"}, {"type": "function_call", "arguments": {}}]}
    assert first_difference(request, changed) == "input[1].arguments"
    assert first_difference(request, request) is None
    assert first_difference({"a": 1}, {"a": 1, "b": 2}) == "b"
    assert first_difference([1, 2], [1]) == "[1]"
    assert first_difference({"head": 1}, {"head": True}) == "head"


def test_excerpts_and_labels_are_short_and_named() -> None:
    assert excerpt("line 1\nline 2") == '"line 1\\nline 2"'
    assert excerpt("x" * 500, 20) == '"' + "x" * 18 + "…"
    assert excerpt({"path": "notes.txt"}) == '{"path": "notes.txt"}'
    assert item_label({"type": "function_call", "call_id": "call_1"}) == "function_call call_1"
    assert item_label({"role": "user", "content": "hi"}) == "message user"
