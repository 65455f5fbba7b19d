"""The view's fast paths give exactly what the slow ones give: a row's one-line text
(``rows.clip``), a record's JSON text (``rows.compact``, as ``json.dumps`` writes it), a
row as the page's JSON holds it (``model.page_value``), the page's data escaped in pieces
(``render._escaped_pieces``) and a stream group's text, read once from its events."""

from __future__ import annotations

import dataclasses
import json
import random
import sys
from decimal import Decimal
from typing import Any

import orjson
import pytest

from toolrelay.view import render
from toolrelay.view.build import build_trace
from toolrelay.view.model import (
    _PAGE_DEFAULTS,
    Badge,
    CallGroup,
    Group,
    Lane,
    LinkNote,
    Row,
    RunSummary,
    StreamGroup,
    Trace,
    page_value,
)
from toolrelay.view.rows import clip, compact

_PIECES = ["a", "é", "😀", " ", "  ", "\t", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85",
           "\u2028", "\u2029", "\u00a0", "\u3000", "\x00", "\x7f", "\ud800", "\udfff", "…", "⏎", "\u200b"]
"""Characters the two paths treat differently if any does: line breaks of every kind,
whitespace that is not a space, control characters, lone surrogates, beyond the BMP."""


def _clip_slowly(text: str, limit: int) -> str:
    """``clip`` before its fast path: every text split into lines and joined."""
    head = text[: limit * 4]
    flat = " ⏎ ".join(part for part in head.strip().splitlines() if part.strip())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def test_a_printable_character_is_no_line_break_and_no_whitespace_but_the_space() -> None:
    """What the fast path stands on: a printable text splits into no lines and strips only spaces."""
    found = [hex(code) for code in range(sys.maxunicode + 1)
             if chr(code).isprintable() and (len(f"a{chr(code)}b".splitlines()) > 1
                                             or (chr(code).isspace() and chr(code) != " "))]
    assert found == []


@pytest.mark.parametrize("limit", [1, 2, 10, 120, 240])
def test_clip_gives_what_the_line_by_line_join_gives(limit: int) -> None:
    chance = random.Random(limit)
    lengths = [0, 1, limit - 1, limit, limit + 1, 4 * limit - 1, 4 * limit, 4 * limit + 1]
    for _ in range(3000):
        size = chance.choice([*lengths, chance.randint(0, 5 * limit)])
        plain = chance.random() < 0.5  # half printable: the fast path, at and past the limits
        pieces = ["a", "é", "😀", " ", "…"] if plain else _PIECES
        text = "".join(chance.choice(pieces) for _ in range(max(size, 0)))
        assert clip(text, limit) == _clip_slowly(text, limit), (text, limit)


@pytest.mark.parametrize(("text", "line"), [
    ("", ""), ("   ", ""), ("  two words  ", "two words"), ("a\nb", "a ⏎ b"), ("a\u2028b", "a ⏎ b"),
    ("a\u00a0", "a"), ("x" * 121, "x" * 119 + "…"), ("x" * 120, "x" * 120), ("é" * 121, "é" * 119 + "…"),
])
def test_clip_words_a_text_as_one_line_of_the_limit(text: str, line: str) -> None:
    assert clip(text, 120) == line == _clip_slowly(text, 120)


class _Shown:
    def __str__(self) -> str:
        return "shown <by> str"


@pytest.mark.parametrize("value", [
    None, True, 0, -1, 2**64, -(2**70), 1.0, -0.0, 1e16, 1e-7, 0.1, float("nan"), float("inf"), float("-inf"),
    "", "plain", "é😀", "\x00\x1f\x7f\n\t\"\\", "\ud800 lone", "\u2028<&>",
    [], {}, [1, [2, [3, {}]]], {"b": 1, "a": [None, "x"]},
    {1: "int key", 2.5: "float key", None: "n", False: "f"},
    {"decimal": Decimal("1.10"), "object": _Shown(), "tuple": (1, 2), "set": {3}},
])
def test_compact_writes_what_json_dumps_writes(value: Any) -> None:
    assert compact(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _page_value_slowly(value: Any) -> Any:
    """``page_value`` before its fast path: each field compared with its default, one by one,
    and every dataclass inside made plain by the encoder's call back (here: recursively)."""
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return value
    defaults = _PAGE_DEFAULTS.get(getattr(value, "type", ""), {})
    page = {}
    for item in dataclasses.fields(value):
        if item.metadata.get("page", True):
            field_value = getattr(value, item.name)
            if item.name not in defaults or field_value != defaults[item.name]:
                page[item.name] = field_value
    return {name: [_page_value_slowly(entry) for entry in field_value] if isinstance(field_value, list)
            else _page_value_slowly(field_value) for name, field_value in page.items()}


def _plainly(value: Any) -> Any:
    """A page value with the dataclasses still in it (a row's links) made plain the fast way."""
    if isinstance(value, dict):
        return {name: _plainly(item) for name, item in value.items()}
    if isinstance(value, list):
        return [_plainly(item) for item in value]
    return _plainly(page_value(value)) if dataclasses.is_dataclass(value) else value


@pytest.mark.parametrize("row", [
    Row(seq=1, kind="k", stage="s", source="app", target="app", label="only what is always written"),
    Row(seq=2, kind="k", stage="s", source="app", target="model", label="l", detail="d", at=1.5,
        badges=[Badge(kind="call", text="c1"), Badge(kind="mcp", text="id 4")], elapsed=0.0, state="failed",
        message=True, call_id="c1", links=[LinkNote(link="x", message="y", ok=False)], during="inside",
        streamed="not on the page"),
    Row(seq=3, kind="k", stage="s", source="a", target="b", label="", detail="", badges=[], state="ok"),
])
def test_page_value_writes_a_row_as_its_fields_left_out_at_their_defaults(row: Row) -> None:
    fast, slow = _plainly(page_value(row)), _page_value_slowly(row)
    assert fast == slow and list(fast) == list(slow)  # the same keys in the same order
    assert "streamed" not in fast


@pytest.mark.parametrize("value", [
    CallGroup(call_id="c1"), CallGroup(call_id="c2", alias="read", mcp_id=7, expanded=False, rows=[
        Row(seq=9, kind="k", stage="s", source="a", target="b", label="l",
            badges=[Badge(kind="k", text="t")])]),
    StreamGroup(key="s1", text="writing", during=""), Badge(kind="call", text="c"),
    Lane(key="user", title="User"), LinkNote(link="l", message="m", ok=True),
])
def test_page_value_writes_every_other_class_as_before(value: Any) -> None:
    fast, slow = _plainly(page_value(value)), _page_value_slowly(value)
    assert fast == slow and list(fast) == list(slow)


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 7, 64])
def test_the_data_escaped_in_pieces_is_the_data_escaped_at_once(size: int, monkeypatch: Any) -> None:
    """Pieces of any size, cut anywhere a character may be: never inside one (é is two
    bytes, ⏎ and the line separator three, 😀 four), so every escape is made."""
    chance = random.Random(size)
    text = "".join(chance.choice(["a", "<", ">", "&", "é", "\u2028", "\u2029", "⏎", "😀", "\\u003c"])
                   for _ in range(2000))
    monkeypatch.setattr(render, "_ESCAPED_AT_ONCE", size)
    pieces = list(render._escaped_pieces(text.encode("utf-8")))
    assert b"".join(pieces).decode("utf-8") == render._inert(text)
    assert all(piece.decode("utf-8") for piece in pieces)  # each piece whole characters


def test_a_stream_groups_line_is_the_text_its_events_carry() -> None:
    """Responses output_text deltas and a chat chunk's content, read once, when the row is made."""
    def event(seq: int, data: Any, **more: Any) -> dict[str, Any]:
        return {"seq": seq, "time": seq / 10, "kind": "model_stream", "index": seq, "data": json.dumps(data),
                **more}

    events = [
        {"seq": 1, "time": 0.0, "kind": "run_start", "task": "t", "model": "m"},
        {"seq": 2, "time": 0.1, "kind": "model_request", "turn": 1, "body": {}},
        event(3, {"type": "response.output_text.delta", "delta": "Hel"}),
        event(4, {"type": "response.function_call_arguments.delta", "delta": "{not text}"}),
        event(5, {"type": "response.output_text.delta", "delta": "lo\n"}),
        event(6, {"choices": [{"delta": {"content": "wor"}}]}, dialect="chat_completions"),
        event(7, {"choices": [{"delta": {"content": "ld"}}]}),  # a chunk's content in any dialect
        event(8, {"type": "response.output_text.delta", "delta": 5}),  # not text: nothing
        event(9, "not an object"),
    ]
    streams = [item for group in build_trace(events).groups for item in group.items
               if isinstance(item, StreamGroup)]
    assert [segment.text for segment in streams] == ["Hello ⏎ world"]


def test_badges_written_by_orjson_are_the_plain_badges() -> None:
    """The encoder writes a row's badges as dataclasses of its own: the very bytes of the
    badges made plain (every field, in order), escapes and all."""
    row = Row(seq=1, kind="k", stage="s", source="a", target="b", label="l", badges=[
        Badge(kind="call", text="c<1>&"), Badge(kind="mcp", text="id 4 é 😀 \u2028"),
        Badge(kind="", text="\"\\\n")])
    assert orjson.dumps(render._written_badges(row.badges)) == orjson.dumps(page_value(row)["badges"])
    assert render.embed_trace(_trace_of([row])) == render.embed_json(_trace_of([row]).to_dict())


def test_a_lone_surrogate_in_a_badge_still_makes_the_page() -> None:
    """orjson refuses it in the badges too: the page's data takes json's way, as for any field."""
    row = Row(seq=1, kind="k", stage="s", source="a", target="b", label="l",
              badges=[Badge(kind="call", text="lone \ud800")])
    assert "lone \\ud800" in render.embed_trace(_trace_of([row]))


def _trace_of(rows: list[Row]) -> Trace:
    return Trace(title="t", run=RunSummary(source="s"), lanes=[], records={},
                 groups=[Group(key="setup", kind="setup", title="Setup", items=list(rows))])
