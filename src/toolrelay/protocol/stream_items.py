"""One output item while it streams: its added and done items, and the text of its deltas.

``ItemState`` collects what the events of one ``output_index`` say; ``build_item`` makes
the final item from it (the done item, with what a server left out of it filled in from
the added item and the deltas); ``compare_outputs`` says where a terminal event's output
differs from the built items. Part of ``protocol.stream``; pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from .responses import (
    COMPLETED,
    CONTENT_PART_ADDED,
    CONTENT_PART_DONE,
    FUNCTION_CALL,
    FUNCTION_CALL_ARGUMENTS_DELTA,
    FUNCTION_CALL_ARGUMENTS_DONE,
    INCOMPLETE,
    MESSAGE,
    OUTPUT_TEXT,
    OUTPUT_TEXT_DELTA,
    OUTPUT_TEXT_DONE,
    REASONING,
    REASONING_SUMMARY_PART_ADDED,
    REASONING_SUMMARY_PART_DONE,
    REASONING_SUMMARY_TEXT_DELTA,
    REASONING_SUMMARY_TEXT_DONE,
    REASONING_TEXT,
    REASONING_TEXT_DELTA,
    REASONING_TEXT_DONE,
    REFUSAL,
    REFUSAL_DELTA,
    REFUSAL_DONE,
    SUMMARY_TEXT,
)
from .stream_updates import ReasoningDelta, RefusalDelta, TextDelta, Update

__all__ = ["ItemState", "Located", "build_item", "compare_outputs", "locate"]

KNOWN_QUIRKS: Final = {REASONING: frozenset({"encrypted_content"})}
"""Fields that real streams send differently in ``done`` and ``completed`` (not a difference)."""
_TEXT_FIELD: Final = {REFUSAL: "refusal"}
"""The field holding a part's text (``text`` unless named here)."""


@dataclass(slots=True)
class _Text:
    """One text of an item: a content part, a summary part, or the arguments."""

    kind: str
    pieces: list[str] = field(default_factory=list)
    done: str | None = None
    part: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        return self.done if self.done is not None else "".join(self.pieces)

    def close(self, text: Any, what: str) -> str | None:
        """The done text; a problem when the deltas do not add up to it."""
        if not isinstance(text, str):
            return f"{what} without its text"
        joined = "".join(self.pieces)
        self.done = text
        if self.pieces and joined != text:
            return f"the deltas of {what} add up to {_short(joined)}, but its done event says {_short(text)}"
        return None


# event type → (which texts, part kind, the done event's text field, the update for a delta)
_DELTAS: Final = {
    OUTPUT_TEXT_DELTA: ("parts", OUTPUT_TEXT), REFUSAL_DELTA: ("parts", REFUSAL),
    REASONING_TEXT_DELTA: ("parts", REASONING_TEXT), REASONING_SUMMARY_TEXT_DELTA: ("summary", SUMMARY_TEXT),
    FUNCTION_CALL_ARGUMENTS_DELTA: ("arguments", FUNCTION_CALL),
}
_DONES: Final = {
    OUTPUT_TEXT_DONE: ("parts", OUTPUT_TEXT, "text"), REFUSAL_DONE: ("parts", REFUSAL, "refusal"),
    REASONING_TEXT_DONE: ("parts", REASONING_TEXT, "text"),
    REASONING_SUMMARY_TEXT_DONE: ("summary", SUMMARY_TEXT, "text"),
    FUNCTION_CALL_ARGUMENTS_DONE: ("arguments", FUNCTION_CALL, "arguments"),
}
_PARTS: Final = {CONTENT_PART_ADDED: "parts", CONTENT_PART_DONE: "parts",
                 REASONING_SUMMARY_PART_ADDED: "summary", REASONING_SUMMARY_PART_DONE: "summary"}


class ItemState:
    """What the events of one output item said so far."""

    CONTENT_EVENTS: ClassVar[frozenset[str]] = frozenset({*_DELTAS, *_DONES, *_PARTS})
    """The event types ``take`` reads (those addressed to an item by output_index / item_id)."""

    __slots__ = ("added", "arguments", "done", "parts", "summary")

    def __init__(self) -> None:
        self.added: dict[str, Any] | None = None
        self.done: dict[str, Any] | None = None
        self.parts: dict[int, _Text] = {}
        """content_index → a message's part, or a reasoning item's raw text."""
        self.summary: dict[int, _Text] = {}
        """summary_index → a reasoning summary part."""
        self.arguments = _Text(FUNCTION_CALL)

    def take(
        self, kind: str, payload: Mapping[str, Any], index: int, item_id: str | None
    ) -> Update | str | None:
        """Record a content event of type ``kind``; the update it makes, a problem's text, or None."""
        if kind in _DELTAS:
            where, part_kind = _DELTAS[kind]
            delta = payload.get("delta")
            if not isinstance(delta, str):
                return f"{kind} without a text delta"
            position = _position(payload, where)
            self._text(where, position, part_kind).pieces.append(delta)
            return _delta_update(kind, index, item_id, position, delta)
        if kind in _DONES:
            where, part_kind, text_field = _DONES[kind]
            position = _position(payload, where)
            named = "arguments" if where == "arguments" else f"{where}[{position}]"
            what = f"output_index {index} {named}"
            return self._text(where, position, part_kind).close(payload.get(text_field), what)
        where = _PARTS[kind]
        part = payload.get("part")
        if isinstance(part, dict):
            position = _position(payload, where)
            entry = self._text(where, position, str(part.get("type") or OUTPUT_TEXT))
            entry.part = part
        return None

    def mismatches(self) -> list[str]:
        """Where the done item's texts differ from what the deltas and done events said."""
        item = self.done or {}
        found = []
        streamed = self.arguments.pieces or self.arguments.done is not None
        said = item.get("arguments") if item.get("type") == FUNCTION_CALL else None
        if streamed and isinstance(said, str) and said != self.arguments.text:
            found.append(f"output_item.done arguments {_short(said)} differ from the streamed "
                         f"{_short(self.arguments.text)}")
        for where, texts in (("content", self.parts), ("summary", self.summary)):
            listed = item.get(where)
            if not isinstance(listed, list):
                continue
            for position, entry in texts.items():
                said = listed[position] if position < len(listed) else None
                if not isinstance(said, dict):
                    continue
                value = said.get(_TEXT_FIELD.get(str(said.get("type")), "text"))
                if isinstance(value, str) and value != entry.text:
                    found.append(f"output_item.done {where}[{position}] {_short(value)} differs from the "
                                 f"streamed {_short(entry.text)}")
        return found

    def _text(self, where: str, position: int, kind: str) -> _Text:
        if where == "arguments":
            return self.arguments
        texts = self.parts if where == "parts" else self.summary
        entry = texts.get(position)
        if entry is None:
            entry = texts[position] = _Text(kind)
        return entry


Located = tuple[ItemState, int, "str | None"]


def locate(
    payload: Mapping[str, Any], items: Mapping[int, ItemState], ids: Mapping[str, int]
) -> tuple[ItemState, int, str | None, bool] | None:
    """The item a content event is for: (state, output_index, item_id, known before); None
    when the event names neither an output_index nor a known item_id."""
    index = payload.get("output_index")
    item_id = payload.get("item_id") if isinstance(payload.get("item_id"), str) else None
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        index = ids.get(item_id) if item_id is not None else None
    if index is None:
        return None
    state = items.get(index)
    return (state, index, item_id, True) if state is not None else (ItemState(), index, item_id, False)


def build_item(state: ItemState, terminal: str | None) -> dict[str, Any]:
    """The final item: the done item, completed from the added one and the deltas where a
    server left something out; without a done item, built from the added item and deltas."""
    if state.done is not None:
        item = dict(state.done)
        if item.get("type") == FUNCTION_CALL:
            _fill_call(item, state)
        elif item.get("type") == MESSAGE and not isinstance(item.get("content"), list):
            item["content"] = _parts(state)
        return item
    item = dict(state.added) if state.added is not None else {"type": _guess_type(state)}
    kind = item.get("type")
    if kind == FUNCTION_CALL:
        item["arguments"] = state.arguments.text
    elif kind == MESSAGE:
        item["content"] = _parts(state)
    elif kind == REASONING:
        item["summary"] = [_part(entry, SUMMARY_TEXT) for _, entry in sorted(state.summary.items())]
        if state.parts:
            item["content"] = _parts(state)
    if "status" in item and terminal is not None:
        item["status"] = COMPLETED if terminal == COMPLETED else INCOMPLETE
    return item


def _fill_call(item: dict[str, Any], state: ItemState) -> None:
    """A done function_call lacking name or call_id (some proxies) gets the added item's."""
    added = state.added or {}
    for key in ("name", "call_id"):
        if not item.get(key) and added.get(key):
            item[key] = added[key]
    if not isinstance(item.get("arguments"), str):
        item["arguments"] = state.arguments.text


def _parts(state: ItemState) -> list[dict[str, Any]]:
    return [_part(entry, entry.kind) for _, entry in sorted(state.parts.items())]


def _part(entry: _Text, kind: str) -> dict[str, Any]:
    part: dict[str, Any] = dict(entry.part) if entry.part is not None else {"type": kind}
    part[_TEXT_FIELD.get(str(part.get("type")), "text")] = entry.text
    if part.get("type") == OUTPUT_TEXT:
        part.setdefault("annotations", [])
    return part


def _guess_type(state: ItemState) -> str:
    if state.arguments.pieces or state.arguments.done is not None:
        return FUNCTION_CALL
    return REASONING if state.summary else MESSAGE


def _position(payload: Mapping[str, Any], where: str) -> int:
    key = "summary_index" if where == "summary" else "content_index"
    value = payload.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1024 else 0


def _delta_update(kind: str, index: int, item_id: str | None, position: int, delta: str) -> Update | None:
    if kind == OUTPUT_TEXT_DELTA:
        return TextDelta(output_index=index, item_id=item_id, content_index=position, delta=delta)
    if kind == REFUSAL_DELTA:
        return RefusalDelta(output_index=index, item_id=item_id, content_index=position, delta=delta)
    if kind == FUNCTION_CALL_ARGUMENTS_DELTA:
        return None
    summary = kind == REASONING_SUMMARY_TEXT_DELTA
    return ReasoningDelta(output_index=index, item_id=item_id, delta=delta, summary=summary)


def compare_outputs(final: list[Any], built: list[dict[str, Any]]) -> list[str]:
    """Where the terminal event's ``output`` differs from the built items (known quirks aside)."""
    found = []
    if len(final) != len(built):
        found.append(f"the terminal event's output has {len(final)} items, the stream's items "
                     f"{len(built)}")
    for position, (said, streamed) in enumerate(zip(final, built, strict=False)):
        if not isinstance(said, dict):
            found.append(f"output[{position}] of the terminal event is not an object")
            continue
        quirks = KNOWN_QUIRKS.get(str(said.get("type")), frozenset())
        keys = sorted(key for key in said.keys() | streamed.keys()
                      if key not in quirks and said.get(key) != streamed.get(key))
        if keys:
            found.append(f"output[{position}] ({said.get('type')} {said.get('id')}): {', '.join(keys)} "
                         "differ from the stream's item")
    return found


def _short(text: str) -> str:
    return repr(text) if len(text) <= 60 else repr(text[:57] + "...")
