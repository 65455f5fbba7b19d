"""The stream check's one pass over the common shape (``verify/stream_common.py``).

A streamed turn of function calls, written as the stand-in writes it (compact JSON), is
judged without the assembler and without parsing the events before each call's
``output_item.done``. It must say what the assembler says: of the real run untouched, and
of copies tampered the way a forger would (compact JSON again, so each event still looks
like the common shape until the one fact changed), where the verdict is the very one the
assembler's path gives, message for message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolrelay.verify import load_run
from toolrelay.verify.facts import RunFacts
from toolrelay.verify.stream_common import common_stream

from .helpers import Event, broken_link, findings_said, said_by_the_assembler, tampered, verdict_of

Mutation = Callable[[list[Event]], None]
RUN = "streamed_errors_run"
"""A real streamed run whose turn 1 is two calls and nothing else: the common shape."""


def _turn_stream(events: list[Event], turn: int = 1) -> list[Event]:
    return [e for e in events if e["kind"] == "model_stream" and e["turn"] == turn]


def _of_type(events: list[Event], kind: str, nth: int = 0) -> Event:
    return [e for e in _turn_stream(events) if json.loads(e["data"])["type"] == kind][nth]


def _rewrite(event: Event, change: Callable[[dict[str, Any]], None]) -> None:
    """The event's data changed, and written back compactly, as the stand-in writes it."""
    payload = json.loads(event["data"])
    change(payload)
    event["data"] = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def delta_changed(events: list[Event]) -> None:
    _rewrite(_of_type(events, "response.function_call_arguments.delta"), lambda p: p.update(delta="tampered"))


def arguments_done_disagrees(events: list[Event]) -> None:
    _rewrite(_of_type(events, "response.function_call_arguments.done", 1), lambda p: p.update(arguments="{}"))


def item_done_disagrees(events: list[Event]) -> None:
    _rewrite(_of_type(events, "response.output_item.done"), lambda p: p["item"].update(arguments="{}"))


def delta_dropped(events: list[Event]) -> None:
    """The second call's delta gone, the records' indexes and count closed over the gap."""
    events.remove(_of_type(events, "response.function_call_arguments.delta", 1))
    for index, event in enumerate(_turn_stream(events)):
        event["index"] = index
    response = next(e for e in events if e["kind"] == "model_response" and e["turn"] == 1)
    response["stream_events"] = len(_turn_stream(events))


def data_reordered(events: list[Event]) -> None:
    """Two events' data swapped: the records' own order and indexes unchanged."""
    delta = _of_type(events, "response.function_call_arguments.delta")
    done = _of_type(events, "response.function_call_arguments.done")
    delta["data"], done["data"] = done["data"], delta["data"]


def terminal_response_changed(events: list[Event]) -> None:
    _rewrite(_of_type(events, "response.completed"), lambda p: p["response"].update(model="a-better-model"))


CASES: list[tuple[Mutation, str]] = [
    (delta_changed, r'turn 1: the arguments deltas of output item 0 add up to "tampered" is not the '
                    r"response.function_call_arguments.done text"),
    (arguments_done_disagrees, r'turn 1: the arguments deltas of output item 1 add up to .* is not the '
                               r'response.function_call_arguments.done text "\{\}"'),
    (item_done_disagrees, r'turn 1: the arguments deltas of output item 0 add up to .* is not the '
                          r'response.output_item.done text "\{\}"'),
    (delta_dropped, r"turn 1: stream event \d+ has sequence_number \d+ after \d+: the events were reordered, "
                    "or one is missing"),
    (data_reordered, r"turn 1: stream event 3 has sequence_number 4 after 2: the events were reordered"),
    (terminal_response_changed, r"turn 1: the recorded response is not what its \d+ stream events assemble "
                                "to: it departs at model"),
]
"""Each tampering of a call stream in the common shape, and the start of what verify says."""


def test_the_common_shape_is_judged_in_one_pass_as_the_assembler_judges_it(run_named: Any) -> None:
    run = load_run(run_named(RUN))
    calls_turn = run.rounds[0]
    said = common_stream(calls_turn)
    assembled = RunFacts(run).assembled(calls_turn)
    assert said == (assembled.terminal, assembled.differences) == ("completed", [])
    assert common_stream(run.rounds[1]) is None  # a message: the assembler's to judge


@pytest.mark.parametrize(("mutation", "message"), CASES, ids=[m.__name__ for m, _ in CASES])
def test_a_tampered_call_stream_is_caught_as_the_assembler_catches_it(
    mutation: Mutation, message: str, run_named: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tampered(run_named(RUN), tmp_path / "tampered.jsonl", mutation)
    assert common_stream(load_run(copy).rounds[0]) is None
    link, said = broken_link(copy)
    assert link == "model_response" and re.match(message, said), said
    assert findings_said(copy) == said_by_the_assembler(copy, monkeypatch)


def test_another_padding_is_still_the_common_shape(run_named: Any, tmp_path: Path) -> None:
    def padded(events: list[Event]) -> None:
        for event in _turn_stream(events):
            if '"obfuscation"' in event["data"]:
                _rewrite(event, lambda p: p.update(obfuscation="x7Qz"))

    copy = tampered(run_named(RUN), tmp_path / "padded.jsonl", padded)
    assert common_stream(load_run(copy).rounds[0]) == ("completed", [])
    assert verdict_of(copy).ok


def test_a_stream_written_otherwise_is_the_assembler_s_and_holds_the_same(
    run_named: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def spaced(events: list[Event]) -> None:  # JSON with spaces: the same values, another text
        for event in _turn_stream(events):
            event["data"] = json.dumps(json.loads(event["data"]))

    copy = tampered(run_named(RUN), tmp_path / "spaced.jsonl", spaced)
    assert common_stream(load_run(copy).rounds[0]) is None
    assert verdict_of(copy).ok
    stream_said = [s for s in findings_said(copy) if s[2] == "stream"]
    assert stream_said == [s for s in findings_said(run_named(RUN)) if s[2] == "stream"]
    assert findings_said(copy) == said_by_the_assembler(copy, monkeypatch)


def test_an_opening_event_that_is_not_the_recorded_response_is_parsed_and_holds_as_before(
    run_named: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def reshelled(events: list[Event]) -> None:  # the assembler keeps no created response once completed
        _rewrite(_of_type(events, "response.created"), lambda p: p["response"].update(model="another"))

    copy = tampered(run_named(RUN), tmp_path / "reshelled.jsonl", reshelled)
    assert common_stream(load_run(copy).rounds[0]) == ("completed", [])
    assert verdict_of(copy).ok
    assert findings_said(copy) == said_by_the_assembler(copy, monkeypatch)


@pytest.mark.parametrize(("plain", "escaped"), [
    ('"type":"response.output_item.done"', '"type":"response.output_item.d\\u006fne"'),
    ('"type":"function_call"', '"type":"function\\u005Fcall"'),  # upper-case hex: the same
], ids=["event-type", "item-type"])
def test_a_closing_event_spelled_with_an_escape_links_its_call_as_the_plain_spelling(
    plain: str, escaped: str, run_named: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each call's ``output_item.done`` with a letter written as a ``\\u`` escape: the same
    value, so the same verdict, finding for finding, in the one pass (the indexer parsed
    the closing events: their texts are not compared) as in the assembler's."""
    def spelled(events: list[Event]) -> None:
        for event in _turn_stream(events):
            if event["event"] == "response.output_item.done":
                assert plain in event["data"]
                event["data"] = event["data"].replace(plain, escaped, 1)

    copy = tampered(run_named(RUN), tmp_path / "escaped.jsonl", spelled)
    assert common_stream(load_run(copy).rounds[0]) == ("completed", [])
    assert findings_said(copy) == findings_said(run_named(RUN))
    assert findings_said(copy) == said_by_the_assembler(copy, monkeypatch)


@pytest.mark.parametrize("left_out", ["name", "call_id"])
@pytest.mark.parametrize("nth", [0, 1])
def test_a_closed_item_the_assembler_completes_is_the_assembler_s_and_holds_as_the_whole_one(
    left_out: str, nth: int, run_named: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call's ``output_item.done`` without its name or call_id (some proxies): the stream's
    reader takes the added item's, so the round is the assembler's from that event on, and
    the verdict is the one of the whole item, finding for finding."""
    def left(events: list[Event]) -> None:
        _rewrite(_of_type(events, "response.output_item.done", nth), lambda p: p["item"].pop(left_out))

    copy = tampered(run_named(RUN), tmp_path / "left_out.jsonl", left)
    run, whole = load_run(copy), load_run(run_named(RUN))
    assert common_stream(run.rounds[0]) is None
    assert [call.closed_seq for call in run.calls] == [call.closed_seq for call in whole.calls]
    assert findings_said(copy) == findings_said(run_named(RUN))
    assert findings_said(copy) == said_by_the_assembler(copy, monkeypatch)
