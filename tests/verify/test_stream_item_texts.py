"""The terminal event's text made of its items' texts (``stream_common._with_items``).

In a turn of the common shape each call's item is written, string by string, by the pass
that checks its four events; the recorded response's text, which the terminal event must
be, is then put together from those texts and the rest of the response, in place of
encoding its output again. Tampered copies of a real run, written compactly as the
stand-in writes (so every event keeps the common shape), must get the verdict the
assembler's path gives, message for message; an item written another way (its keys in
another order, another key, another status) is encoded whole, as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolrelay.verify import load_run, stream_common
from toolrelay.verify.stream_common import common_stream

from .helpers import (
    Event,
    broken_link,
    findings_said,
    model_body,
    said_by_the_assembler,
    tampered,
)

Mutation = Callable[[list[Event]], None]
RUN = "streamed_errors_run"
"""A real streamed run whose turn 1 is two calls and nothing else: the common shape."""


def _terminal(events: list[Event]) -> Event:
    return next(e for e in events if e["kind"] == "model_stream" and e["turn"] == 1
                and e["event"] == "response.completed")


def _rewrite(event: Event, change: Callable[[dict[str, Any]], None]) -> None:
    """The event's data changed, and written back compactly, as the stand-in writes it."""
    payload = json.loads(event["data"])
    change(payload)
    event["data"] = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def _in_both(events: list[Event], change: Callable[[dict[str, Any]], None]) -> None:
    """The recorded response and the terminal event's changed alike (they still agree)."""
    change(model_body(events, "model_response", 1))
    _rewrite(_terminal(events), lambda payload: change(payload["response"]))


def _first_item(change: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], None]:
    return lambda response: change(response["output"][0]) and None


def terminal_arguments_changed(events: list[Event]) -> None:
    _rewrite(_terminal(events), lambda p: p["response"]["output"][0].update(arguments="{}"))


def terminal_status_changed(events: list[Event]) -> None:
    _rewrite(_terminal(events), lambda p: p["response"]["output"][1].update(status="incomplete"))


def terminal_item_key_added(events: list[Event]) -> None:
    _rewrite(_terminal(events), lambda p: p["response"]["output"][0].update(extra=1))


def items_reordered(events: list[Event]) -> None:
    _in_both(events, lambda response: response.update(output=response["output"][::-1]))


BROKEN: list[tuple[Mutation, str]] = [
    (terminal_arguments_changed, r"turn 1: the recorded response is not what its \d+ stream events assemble "
                                 r"to: it departs at output\[0\]\.arguments"),
    (terminal_status_changed, r"turn 1: the recorded response is not what its \d+ stream events assemble "
                              r"to: it departs at output\[1\]\.status"),
    (terminal_item_key_added, r"turn 1: the recorded response is not what its \d+ stream events assemble "
                              r"to: it departs at output\[0\]"),
]
"""The terminal event's items changed (the recorded response left alone), and what verify says."""


def keys_reordered(events: list[Event]) -> None:
    _in_both(events, _first_item(lambda item: [item.update({key: item.pop(key)}) for key in ("id", "type")]))


def key_added(events: list[Event]) -> None:
    _in_both(events, _first_item(lambda item: item.update(extra="x")))


def status_other(events: list[Event]) -> None:
    _in_both(events, _first_item(lambda item: item.update(status="incomplete")))


AGREEING: list[Mutation] = [keys_reordered, key_added, status_other, items_reordered]
"""Items the recorded response and the terminal event both write otherwise than the API."""


def _made_of_items(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """For each turn's common_stream: whether the terminal text was made of the items' texts."""
    made: list[bool] = []
    real = stream_common._with_items

    def watched(*args: Any) -> str | None:
        text = real(*args)
        made.append(text is not None)
        return text

    with monkeypatch.context() as patched:
        patched.setattr(stream_common, "_with_items", watched)
        common_stream(load_run(path).rounds[0])
    return made


def test_the_untouched_run_s_terminal_text_is_made_of_its_items(
    run_named: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = run_named(RUN)
    assert _made_of_items(path, monkeypatch) == [True]
    current = load_run(path).rounds[0]
    assert common_stream(current) == ("completed", [])
    assert current.answer is not None
    base = 0  # the stand-in numbers its events from 0, as their positions
    built = stream_common._calls(current, base, tuple(event["data"] for event in current.stream))
    assert built is not None and built[1] is not None
    assert stream_common._with_items(current.answer, *built) == stream_common._EXACT(current.answer)
    assert findings_said(path) == said_by_the_assembler(path, monkeypatch)


@pytest.mark.parametrize(("mutation", "message"), BROKEN, ids=[m.__name__ for m, _ in BROKEN])
def test_a_terminal_item_changed_breaks_the_link_as_the_assembler_says(
    mutation: Mutation, message: str, run_named: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tampered(run_named(RUN), tmp_path / "tampered.jsonl", mutation)
    assert _made_of_items(copy, monkeypatch) == [True]  # the items' texts, not the terminal's
    assert common_stream(load_run(copy).rounds[0]) is None
    link, said = broken_link(copy)
    assert link == "model_response" and re.match(message, said), said
    assert findings_said(copy) == said_by_the_assembler(copy, monkeypatch)


@pytest.mark.parametrize("mutation", AGREEING, ids=[m.__name__ for m in AGREEING])
def test_items_written_otherwise_are_encoded_whole_and_judged_as_the_assembler_judges(
    mutation: Mutation, run_named: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tampered(run_named(RUN), tmp_path / "otherwise.jsonl", mutation)
    assert _made_of_items(copy, monkeypatch) == [False]
    assert findings_said(copy) == said_by_the_assembler(copy, monkeypatch)
