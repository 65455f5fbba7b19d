"""JSON from outside has a nesting limit: past it, a ValueError (a JSONDecodeError with a
position) like any malformed JSON, never a RecursionError; at it, the value as decoded."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from toolrelay.protocol import json_depth
from toolrelay.protocol.json_depth import MAX_DEPTH, JsonTooDeep, clip_depth, loads, nested_too_deep


def _arrays(depth: int) -> str:
    return "[" * depth + "]" * depth


def _objects(depth: int, leaf: str = "1") -> str:
    return '{"a":' * depth + leaf + "}" * depth


def _depth(value: Any) -> int:
    level, depth = [value], 0
    while level:
        depth += 1
        level = [c for n in level for c in (n.values() if isinstance(n, dict) else n)
                 if isinstance(c, (dict, list))]
    return depth


@pytest.mark.parametrize("text", [_arrays(MAX_DEPTH), _objects(MAX_DEPTH)])
def test_the_limit_itself_is_allowed(text: str) -> None:
    assert _depth(loads(text)) == MAX_DEPTH
    assert _depth(loads(text.encode())) == MAX_DEPTH


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 900, 5_000, 200_000])
@pytest.mark.parametrize("shape", [_arrays, _objects])
def test_deeper_is_a_decode_error_with_its_position(depth: int, shape: Any) -> None:
    text = "\n" + shape(depth)  # a line break first: the position names line 2
    for data in (text, text.encode()):
        with pytest.raises(json.JSONDecodeError) as caught:
            loads(data)
        error = caught.value
        assert isinstance(error, JsonTooDeep) and isinstance(error, ValueError)
        assert error.msg == f"nested deeper than {MAX_DEPTH} levels"
        opener = 1 if shape is _arrays else 5  # '[' or '{"a":'
        assert (error.lineno, error.colno) == (2, MAX_DEPTH * opener + 1)


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"text": "[{" * 5_000 + '\\"[' * 1_000, "list": [[1]]})
    assert loads(text)["list"] == [[1]]


def test_escaped_quotes_do_not_hide_brackets() -> None:
    text = '{"a":"\\\\"' + "," + '"b":' + _arrays(MAX_DEPTH + 1) + "}"
    with pytest.raises(JsonTooDeep):
        loads(text)


def test_the_limit_can_be_raised_for_files_toolrelay_wrote() -> None:
    text = _objects(MAX_DEPTH + 10)
    assert _depth(loads(text, max_depth=json_depth.RECORD_DEPTH)) == MAX_DEPTH + 10
    with pytest.raises(JsonTooDeep):
        loads(text)


def test_decoder_options_are_passed_on() -> None:
    assert loads('{"a": 1.5}', parse_float=str) == {"a": "1.5"}


def test_ordinary_errors_stay_ordinary() -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        loads('{"a": }')
    assert not isinstance(caught.value, JsonTooDeep)


def test_a_huge_deep_message_is_refused_quickly() -> None:
    text = _arrays(2_000_000)  # 4 MB: the default message cap
    started = time.perf_counter()
    with pytest.raises(JsonTooDeep):
        loads(text)
    assert time.perf_counter() - started < 5


def test_nested_too_deep_checks_a_value_already_decoded() -> None:
    allowed = _arrays(MAX_DEPTH)
    too_deep = _objects(MAX_DEPTH + 1)
    assert not nested_too_deep(json.loads(allowed), allowed)
    assert nested_too_deep(json.loads(too_deep), too_deep)
    small = '{"a": [1, 2, {"b": null}]}'
    assert not nested_too_deep(json.loads(small), small)


@pytest.mark.parametrize("leaf", ['"[["', "1", "1.5", "true", "null", "[]", "{}", '{"k": 1}'])
def test_only_arrays_and_objects_count_as_levels(leaf: str) -> None:
    """511 levels of mixed arrays and objects around a leaf: at the limit when the leaf is
    an array or object, below it otherwise; one level more is too deep only for those."""
    def around(extra: int) -> str:
        return "[" * extra + '[{"k":' * 255 + "[" + leaf + "]" + "}]" * 255 + "]" * extra

    container = leaf[0] in "[{"
    assert _depth(loads(around(0))) == MAX_DEPTH - 1 + container
    if container:
        with pytest.raises(JsonTooDeep):
            loads(around(1))
    else:
        assert _depth(loads(around(1))) == MAX_DEPTH


def test_clip_depth_cuts_only_what_is_too_deep() -> None:
    value = {"keep": [1, {"x": "y"}], "deep": json.loads(_arrays(MAX_DEPTH + 50))}
    clipped = clip_depth(value, MAX_DEPTH)
    assert clipped["keep"] == value["keep"]
    assert _depth(clipped) == MAX_DEPTH
    text = json.dumps(clipped)
    assert f"[nested deeper than {MAX_DEPTH} levels: not kept]" in text
    assert _depth(loads(text)) == MAX_DEPTH


def test_clip_depth_handles_values_far_beyond_the_recursion_limit() -> None:
    deep: list[Any] = []
    for _ in range(50_000):
        deep = [deep]
    assert _depth(clip_depth({"v": deep}, 10)) == 10
