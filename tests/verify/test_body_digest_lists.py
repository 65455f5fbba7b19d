"""The body digest check's serialising of list fields (``BodyDigests``, transcript/delta.py):
a list of items never seen is serialised in one encoder call, a list holding an item seen
before item by item; either way each body gets the digest of its own wire bytes, and an
item changed after the run is caught."""

from __future__ import annotations

import copy
from typing import Any

from toolrelay.transcript.delta import BodyDigests, wire_bytes, wire_digest

TOOLS = [{"type": "function", "name": "fs__read", "parameters": {"type": "object"}}]
FORMAT = {"format": {"type": "text"}}
"""A field's value (serialised and remembered whole), then an item of a list."""


def _body(items: list[Any]) -> dict[str, Any]:
    return {"model": "m", "text": FORMAT, "tools": TOOLS, "input": items, "stream": True}


def _output(n: int, text: str = "ok") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": f"call_{n}", "output": f"{text} é \" \\ \n {n}"}


def test_each_body_of_new_or_seen_items_digests_as_its_own_bytes() -> None:
    first = [_output(1), _output(2), 3.5, "a text", None, True, 10**20]
    again = [first[1], _output(4), first[0]]  # seen items, in another order: not a grown list
    bodies = [_body(first), _body([_output(5), _output(6)]), _body(again), _body([]),
              {"input": [_output(7), FORMAT, TOOLS[0]]}]
    digests = BodyDigests()
    for body in bodies:
        assert digests.digest(body) == wire_digest(wire_bytes(body))


def test_an_item_changed_among_new_items_changes_the_digest() -> None:
    sent = _body([_output(1), _output(2)])
    edited = copy.deepcopy(sent)
    edited["input"][1]["output"] = "ok é \" \\ \n 3"
    assert BodyDigests().digest(edited) != wire_digest(wire_bytes(sent))
    assert BodyDigests().digest(copy.deepcopy(sent)) == wire_digest(wire_bytes(sent))
