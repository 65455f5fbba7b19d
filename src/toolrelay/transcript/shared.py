"""What a line need not repeat from an earlier line: JSON-RPC messages of a known shape,
and the request input items another line already holds.

**Messages** (``mcp_request``, ``mcp_response`` and the other MCP kinds). The first message
of a shape (its kind, server, connection, method, fields and the fields of its object
fields) is recorded whole; each later one of that shape as ``message_delta``: ``of``, the
seq of that whole one, and ``set``, the places where this one differs (``changes.py``),
in the line's ``message`` place. A message with many changes is recorded whole again and
becomes the shape's base. The writer keeps each base as read back from the line it wrote,
so a live message changed afterwards cannot make a delta wrong.

**Input items** (a delta-recorded ``model_request``, ``delta.py``). In replay mode a
request appends the previous response's output items and the calls' outputs, which its
``model_response`` and ``feedback`` lines already hold. Such an appended list is recorded
as ``extend`` entries: ``{"refs": [seq, *path], "from": i, "to": j}`` (items i to j of the
array at that path of line seq), ``{"ref": [seq, *path]}`` (the value there) or
``{"items": [...]}`` (items no earlier line holds). An item is referred to only when its
wire bytes are those of the item recorded there, so the rebuilt body is the one sent
(``body_sha256`` still checks it).

**Texts.** A tool's result text is in its answer twice (``content`` and
``structuredContent``) and again in the call's ``feedback`` item. A long string a line
repeats is left out of it (a message delta does not set it; a feedback item holds null in
its place) and named in the line's ``copies``: ``[path in the line, [seq, *path]]``, the
string at that path of line seq (or of this line itself, once its message is rebuilt).
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..events import MCP_ROLES, FeedbackEvent, ModelResponseEvent
from .changes import changes
from .delta import wire_bytes_of

__all__ = ["COPIES_FIELD", "FORMAT", "FORMAT_FIELD", "MESSAGE_DELTA_FIELD", "MESSAGE_FIELD", "ItemSources",
           "MessageBases", "Shape", "TextSources", "message_shape", "resolve"]

FORMAT: Final = 2
"""The line shape written: 2 adds message deltas, input item references and the run id on
the first line only; 1 (no ``transcript_format``) is every line whole but request bodies."""
FORMAT_FIELD: Final = "transcript_format"

MESSAGE_FIELD: Final = "message"
"""The key of an MCP record's message (the record's, not a Responses item type)."""

MESSAGE_DELTA_FIELD: Final = "message_delta"
COPIES_FIELD: Final = "copies"
MIN_TEXT: Final = 64
"""Shorter strings are written again (a reference would save little)."""
MAX_TEXTS: Final = 1024
"""Long strings remembered for later lines (the latest)."""
MAX_CHANGES: Final = 12
"""More places changed than this: the message is recorded whole (and is the new base)."""
_FEEDBACK: Final = FeedbackEvent.kind
_RESPONSE: Final = ModelResponseEvent.kind

Shape = tuple[Any, ...]
"""What makes messages of one shape: kind, server, connection, method, fields (``message_shape``)."""


class MessageBases:
    """The writer's side of message deltas: the base of each shape seen."""

    def __init__(self, bases: dict[Shape, _Base] | None = None) -> None:
        self._bases: dict[Shape, _Base] = {} if bases is None else bases

    def copy(self) -> MessageBases:
        """These bases, for another writer (a base itself never changes: shared)."""
        return MessageBases(dict(self._bases))

    def shrink(self, line: dict[str, Any], shape: Shape | None) -> dict[str, Any] | None:
        """``line`` with its message as a delta against its shape's base; None to write it whole."""
        base = self._bases.get(shape) if shape is not None else None
        if base is None:
            return None
        found = changes(base.message, line[MESSAGE_FIELD])
        if len(found) > MAX_CHANGES:
            return None
        delta = {"of": base.seq, "set": found}
        return dict((MESSAGE_DELTA_FIELD, delta) if key == MESSAGE_FIELD else (key, value)
                    for key, value in line.items())

    def remember(self, line: dict[str, Any], shape: Shape | None, text: str) -> None:
        """After ``line`` was written whole as ``text``: its message is its shape's base."""
        if shape is not None:
            self._bases[shape] = _Base(line["seq"], text)


class _Base:
    """A message written whole: its line's seq, and the message as read back from the line
    (decoded when a later message of its shape first needs it: most never have one)."""

    __slots__ = ("_message", "_text", "seq")

    def __init__(self, seq: int, text: str) -> None:
        self.seq = seq
        self._text: str | None = text
        self._message: Any = None

    @property
    def message(self) -> Any:
        if self._text is not None:
            self._message, self._text = json.loads(self._text)[MESSAGE_FIELD], None
        return self._message


class TextSources:
    """The writer's side of copies: the long strings message deltas set lately, by value
    (a string a recent message delta set is copied from there too: a file read again)."""

    def __init__(self) -> None:
        self._known: dict[str, list[Any]] = {}

    def copy(self) -> TextSources:
        """These sources, for another writer (their paths are never changed: shared)."""
        copied = TextSources()
        copied._known = dict(self._known)
        return copied

    def fold_message(self, line: dict[str, Any]) -> None:
        """A delta line's repeated long strings left out of its ``set``, named in ``copies``."""
        delta, seq = line[MESSAGE_DELTA_FIELD], line["seq"]
        kept: list[list[Any]] = []
        copies: list[list[Any]] = []
        here: dict[str, list[Any]] = {}
        for path, value in delta["set"]:
            if not isinstance(value, str) or len(value) < MIN_TEXT:
                kept.append([path, value])
            elif value in here or value in self._known:  # this message's, or a recent line's
                copies.append([["message", *path], here.get(value) or self._known[value]])
            else:
                kept.append([path, value])
                here[value] = [seq, "message", *path]
        if copies:
            delta["set"] = kept
            line[COPIES_FIELD] = copies
        for value, source in here.items():
            self._known.pop(value, None)
            self._known[value] = source
        while len(self._known) > MAX_TEXTS:
            del self._known[next(iter(self._known))]

    def fold_feedback(self, line: dict[str, Any]) -> dict[str, Any] | None:
        """A feedback line whose item's output text a message holds, with a copy of it; else None."""
        item = line.get("item")
        if not isinstance(item, dict):
            return None
        output = item.get("output")
        source = self._known.get(output) if isinstance(output, str) else None
        if source is None:
            return None
        return {**line, "item": {**item, "output": None}, COPIES_FIELD: [[["item", "output"], source]]}


def message_shape(line: dict[str, Any]) -> Shape | None:
    """The shape of the MCP message ``line`` records; None for a line that records none."""
    message = line.get(MESSAGE_FIELD)
    if line["kind"] not in MCP_ROLES or not isinstance(message, dict):
        return None
    fields = tuple((key, tuple(value) if isinstance(value, dict) else None) for key, value in message.items())
    return line["kind"], line.get("server"), line.get("connection"), line.get("method"), fields


class ItemSources:
    """The writer's side of input item references: the items recorded since the last request."""

    def __init__(self) -> None:
        self._known: dict[bytes, list[Any]] = {}

    def copy(self) -> ItemSources:
        """These sources, for another writer (their paths are never changed: shared)."""
        copied = ItemSources()
        copied._known = dict(self._known)
        return copied

    def offer(self, line: dict[str, Any]) -> None:
        """Remember the items a ``model_response`` or ``feedback`` line holds, by wire bytes."""
        kind, seq = line["kind"], line["seq"]
        if kind == _FEEDBACK:
            self._add(line.get("item"), [seq, "item"])
        elif kind == _RESPONSE and isinstance(body := line.get("body"), dict):
            output, choices = body.get("output"), body.get("choices")
            for index, item in enumerate(output if isinstance(output, list) else []):
                self._add(item, [seq, "body", "output", index])
            for index, choice in enumerate(choices if isinstance(choices, list) else []):
                if isinstance(choice, dict):
                    self._add(choice.get("message"), [seq, "body", "choices", index, "message"])

    def _add(self, item: Any, path: list[Any]) -> None:
        if isinstance(item, dict):
            found = wire_bytes_of(item)
            if found is not None:
                self._known.setdefault(found, path)

    def entries(self, items: list[Any]) -> list[dict[str, Any]] | None:
        """``items`` as ``extend`` entries, or None when no earlier line holds any of them."""
        entries: list[dict[str, Any]] = []
        referred = False
        for item in items:
            found = wire_bytes_of(item) if isinstance(item, dict) else None
            path = self._known.get(found) if found is not None else None
            last = entries[-1] if entries else {}
            if path is None:
                if "items" in last:
                    last["items"].append(item)
                else:
                    entries.append({"items": [item]})
                continue
            referred = True
            head, place = path[:-1], path[-1]
            if "refs" in last and last["refs"] == head and last["to"] == place:
                last["to"] += 1
            elif "ref" in last and isinstance(place, int) and last["ref"] == [*head, place - 1]:
                entries[-1] = {"refs": head, "from": place - 1, "to": place + 1}
            else:
                entries.append({"ref": path})
        return entries if referred else None

    def clear(self) -> None:
        self._known.clear()


def resolve(by_seq: dict[int, dict[str, Any]], path: Any, current: dict[str, Any] | None = None) -> Any:
    """The value at ``path`` (``[seq, key or index, ...]``) of an earlier line, or of
    ``current`` (the line being read) when it names its seq; ValueError if none."""
    if not (isinstance(path, list) and path and isinstance(path[0], int)):
        raise ValueError("a reference is not [seq, key or index, ...]")
    value: Any = current if current is not None and current["seq"] == path[0] else by_seq.get(path[0])
    if value is None:
        raise ValueError(f"it refers to seq {path[0]}, which the transcript does not hold before it")
    for step in path[1:]:  # every copy and reference walks a path: the steps are checked inline
        kind = type(value)
        if not (type(step) is str and step in value if kind is dict
                else kind is list and type(step) is int and 0 <= step < len(value)):
            raise ValueError(f"it refers to {path!r}, which seq {path[0]} does not hold")
        value = value[step]
    return value
