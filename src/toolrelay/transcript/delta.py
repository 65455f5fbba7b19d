"""Request bodies recorded as what changed: a run's transcript grows with the run, not its square.

A replayed request repeats the whole context, so recording every body whole makes a
100-turn run's transcript quadratic. The writer records the first ``model_request`` of a
run whole (``body``) and each later one as ``body_delta`` against the run's previous
request (named by its ``seq`` in ``of``):

- ``append``: top-level lists that grew by appending (``input`` of a Responses body,
  ``messages`` of a Chat Completions one, any other): field → the new items only;
- ``set``: fields that are new or whose value changed otherwise, whole;
- ``drop``: fields the previous body had and this one has not;
- ``order``: the body's field order, only when it is not the one the changes give (the
  previous order, dropped fields left out, new fields at the end);
- ``extend``: like ``append``, for lists whose new items earlier lines already hold (the
  previous response's output, the calls' outputs): references to them (``shared.py``);
- ``set_items``: like ``set``, for a list set whole whose items earlier lines hold (the
  outputs a chained request sends), as the same references.

Every request also records ``body_sha256``: the SHA-256 of the exact bytes sent (the
compact UTF-8 JSON the model clients post, ``wire_bytes``). The reader rebuilds each body
(``apply_delta``); ``BodyDigests`` checks a rebuilt body against its digest without
serialising the shared context again for every request (each item's bytes are made once).
"""

from __future__ import annotations

import hashlib
import json
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from ..protocol.json_text import text_encoder

__all__ = ["DELTA_FIELD", "DIGEST_FIELD", "BodyDigests", "Lookup", "apply_delta", "body_delta", "wire_bytes",
           "wire_bytes_of", "wire_digest"]

DELTA_FIELD: Final = "body_delta"
DIGEST_FIELD: Final = "body_sha256"
_WIRE: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_WIRE_TEXT: Final = text_encoder(_WIRE)
"""``_WIRE.encode``, made once: the writer encodes every item a request refers to."""


def wire_bytes(body: dict[str, Any]) -> bytes:
    """The bytes a model client posts for ``body``: compact JSON, UTF-8, no NaN."""
    return _WIRE_TEXT(body).encode()


def wire_bytes_of(value: Any) -> bytes | None:
    """``wire_bytes`` of any value, or None for one no model client could post (NaN, too deep)."""
    try:
        return _WIRE_TEXT(value).encode()
    except (ValueError, TypeError, RecursionError):
        return None


def wire_digest(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def body_delta(previous: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """What changed from ``previous`` to ``body`` (see the module docstring); {} for the same."""
    append: dict[str, list[Any]] = {}
    changed: dict[str, Any] = {}
    for key, value in body.items():
        if key not in previous:
            changed[key] = value
            continue
        old = previous[key]
        if value is old:
            continue
        if _grew(old, value):
            if len(value) > len(old):
                append[key] = value[len(old):]
        elif value != old:
            changed[key] = value
    delta: dict[str, Any] = {}
    if append:
        delta["append"] = append
    if changed:
        delta["set"] = changed
    dropped = [key for key in previous if key not in body]
    if dropped:
        delta["drop"] = dropped
    if list(body) != _natural_order(previous, body.keys(), dropped):
        delta["order"] = list(body)
    return delta


def _grew(old: Any, value: Any) -> bool:
    return (isinstance(old, list) and isinstance(value, list) and len(value) >= len(old)
            and value[: len(old)] == old)


def _natural_order(previous: dict[str, Any], keys: Any, dropped: list[str]) -> list[str]:
    gone = set(dropped)
    order = [key for key in previous if key not in gone]
    known = set(order)
    return order + [key for key in keys if key not in known]


Lookup = Callable[[Any], Any]
"""The value a reference (``[seq, key or index, ...]``) names in an earlier line; ValueError if none."""


def apply_delta(previous: dict[str, Any], delta: Any, lookup: Lookup | None = None) -> dict[str, Any]:
    """The body ``delta`` describes against ``previous``; ValueError when it is no delta.
    ``lookup`` resolves the references of ``extend`` (none without it).

    Values not changed are shared with ``previous`` (never copied): a rebuilt run holds
    each item once, however many requests carry it."""
    if not isinstance(delta, dict):
        raise ValueError("it is not an object")
    append, changed = delta.get("append", {}), delta.get("set", {})
    dropped, order = delta.get("drop", []), delta.get("order")
    extend, set_items = delta.get("extend", {}), delta.get("set_items", {})
    if not all(isinstance(part, dict) for part in (append, changed, extend, set_items)) \
            or not isinstance(dropped, list):
        raise ValueError('its "append", "extend", "set" and "set_items" must be objects and its "drop" '
                         "an array")
    if extend:
        append = {**append, **{key: _extended(entries, lookup) for key, entries in extend.items()}}
    if set_items:
        changed = {**changed, **{key: _extended(entries, lookup) for key, entries in set_items.items()}}
    body = {key: value for key, value in previous.items() if key not in dropped}
    for key, items in append.items():
        base = body.get(key)
        if not isinstance(base, list) or not isinstance(items, list):
            raise ValueError(f'it appends to "{key}", which the previous request holds no array in')
        body[key] = base + items
    body.update(changed)
    if order is not None:
        if not isinstance(order, list) or sorted(map(str, order)) != sorted(body):
            raise ValueError('its "order" does not name the body\'s fields')
        body = {key: body[key] for key in order}
    return body


def _extended(entries: Any, lookup: Lookup | None) -> list[Any]:
    """The items ``extend`` entries name (see ``shared.py``)."""
    if not isinstance(entries, list):
        raise ValueError('its "extend" entries must be an array')
    items: list[Any] = []
    for entry in entries:
        if isinstance(entry, dict) and isinstance(entry.get("items"), list):
            items.extend(entry["items"])
        elif isinstance(entry, dict) and "ref" in entry and lookup is not None:
            items.append(lookup(entry["ref"]))
        elif isinstance(entry, dict) and "refs" in entry and lookup is not None:
            found, start, stop = lookup(entry["refs"]), entry.get("from"), entry.get("to")
            if not (isinstance(found, list) and type(start) is int and type(stop) is int
                    and 0 <= start <= stop <= len(found)):
                raise ValueError(f"it refers to items {start} to {stop} of {entry['refs']!r}, which is no "
                                 "array that holds them")
            items.extend(found[start:stop])
        else:
            raise ValueError('an "extend" entry is none of {"items": [...]}, {"ref": ...}, {"refs": ...}')
    return items


class BodyDigests:
    """SHA-256 of the wire bytes of rebuilt bodies, each shared value serialised once.

    The wire form of a body is ``{"key":value,...}`` and of a list ``[item,...]``, so a
    body's bytes are put together from its values' bytes; a list value (the growing
    context) from its items' bytes. Values are remembered by identity, which holds while
    the bodies are alive and unchanged (one pass over a read transcript).

    A rebuilt body shares with the one before it every field the delta left alone, and
    its grown list starts with the very items of the previous one (``apply_delta``). So
    the hash is resumed from where that shared part ended in the previous body (a copy of
    the hasher's state) instead of being fed the whole context again: one pass over a
    replayed run is linear in what changed, not quadratic in its turns. Whole bodies read
    from separate lines share nothing and are hashed whole, as before."""

    def __init__(self) -> None:
        self._bytes: dict[int, bytes] = {}
        self._alive: list[Any] = []  # keeps every remembered object alive: ids stay unique
        self._previous: list[_Field] = []
        """The last body's fields, each with the hasher's state after it."""

    def digest(self, body: dict[str, Any]) -> str:
        fields: list[_Field] = []
        hasher: Any = None  # None while every field so far is the previous body's own
        resume = _START
        previous = self._previous
        for number, (key, value) in enumerate(body.items()):
            head = (b"," if number else b"") + _WIRE.encode(str(key)).encode() + b":"
            before = previous[number] if hasher is None and number < len(previous) else None
            if before is not None and before.head == head:
                if before.value is value:  # the same object: the same bytes
                    fields.append(before)
                    resume = before.after
                    continue
                grown = before.grown_by(value)
                if grown is not None:
                    hasher = before.after_items.copy()
                    if grown:
                        hasher.update((b"," if before.count else b"") + self._joined(grown))
                    fields.append(self._close_list(key, head, value, hasher))
                    continue
            if hasher is None:
                hasher = resume.copy()
            if isinstance(value, list):
                hasher.update(head + b"[" + self._joined(value))
                fields.append(self._close_list(key, head, value, hasher))
            else:
                hasher.update(head + self._of(value))
                fields.append(_Field(head, value, 0, None, hasher.copy()))
        if hasher is None:
            hasher = resume.copy()
        self._previous = fields
        hasher.update(b"}")
        return str(hasher.hexdigest())

    def _close_list(self, key: str, head: bytes, value: list[Any], hasher: Any) -> _Field:
        self._alive.append(value)
        after_items = hasher.copy()
        hasher.update(b"]")
        return _Field(head, value, len(value), after_items, hasher.copy())

    def _joined(self, items: list[Any]) -> bytes:
        """The items' bytes joined by commas. Items none of which was serialised before are
        serialised as one list (its text is theirs joined, in brackets: one encoder call, not
        one per item; they are not remembered, as new items of a body seldom come again)."""
        remembered = self._bytes
        if not remembered.keys().isdisjoint(map(id, items)):  # in C
            return b",".join([self._of(item) for item in items])
        return _WIRE_TEXT(items)[1:-1].encode()

    def _of(self, value: Any) -> bytes:
        if not isinstance(value, dict | list):
            return _WIRE.encode(value).encode()
        found = self._bytes.get(id(value))
        if found is None:
            found = self._bytes[id(value)] = _WIRE.encode(value).encode()
            self._alive.append(value)
        return found


_START: Final = hashlib.sha256(b"{")


@dataclass(slots=True, frozen=True)
class _Field:
    """One field of the last body hashed, and the hasher's state after it."""

    head: bytes
    """``,"key":`` as the wire has it (no comma for the first)."""
    value: Any
    count: int
    """How many items a list value had (0 for any other value)."""
    after_items: Any
    """A list value's hasher state after its last item, before ``]``; else None."""
    after: Any

    def grown_by(self, value: Any) -> list[Any] | None:
        """The items ``value`` adds to this list, when it begins with this list's very
        items (identity, not equality: equal items could still serialise differently)."""
        old = self.value
        if self.after_items is None or not isinstance(value, list) or len(value) < self.count:
            return None
        if not all(map(operator.is_, value, old)):  # in C: a long run's every request asks it
            return None
        return value[self.count:]
