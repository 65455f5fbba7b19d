"""A streamed run's proof: its recorded events are the stream, and they are the response.

Tampered copies of a real streamed run (the stand-in streams; the run is made once)
break the ``model_response`` link and say where; the differences real streams have and
toolrelay tolerates (``obfuscation`` padding) do not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .helpers import Event, broken_link, model_body, tampered, verdict_of

Mutation = Callable[[list[Event]], None]


def _stream(events: list[Event], turn: int) -> list[Event]:
    return [e for e in events if e["kind"] == "model_stream" and e["turn"] == turn]


def _of_type(events: list[Event], turn: int, kind: str) -> Event:
    return next(e for e in _stream(events, turn) if json.loads(e["data"])["type"] == kind)


def _edit(event: Event, change: Callable[[dict[str, Any]], None]) -> None:
    payload = json.loads(event["data"])
    change(payload)
    event["data"] = json.dumps(payload)


def _renumber(events: list[Event]) -> None:
    """Seq numbers made to run on again, so only the stream's own order tells."""
    for seq, event in enumerate(events, start=events[0]["seq"]):
        event["seq"] = seq


def delta_altered(events: list[Event]) -> None:
    _edit(_of_type(events, 2, "response.output_text.delta"), lambda p: p.update(delta="The tool lied:\n"))


def event_dropped(events: list[Event]) -> None:
    events.remove(_of_type(events, 2, "response.content_part.added"))
    _renumber(events)


def event_dropped_and_indexes_closed(events: list[Event]) -> None:
    stream = _stream(events, 2)
    events.remove(stream[3])
    for index, event in enumerate(_stream(events, 2)):
        event["index"] = index
    find_response = next(e for e in events if e["kind"] == "model_response" and e["turn"] == 2)
    find_response["stream_events"] = len(stream) - 1
    _renumber(events)


def sequence_numbers_swapped(events: list[Event]) -> None:
    stream = _stream(events, 1)
    first, second = json.loads(stream[2]["data"]), json.loads(stream[3]["data"])
    _edit(stream[2], lambda p: p.update(sequence_number=second["sequence_number"]))
    _edit(stream[3], lambda p: p.update(sequence_number=first["sequence_number"]))


def events_swapped(events: list[Event]) -> None:
    stream = _stream(events, 1)
    a, b = events.index(stream[2]), events.index(stream[3])
    events[a], events[b] = events[b], events[a]
    _renumber(events)


def response_altered(events: list[Event]) -> None:
    model_body(events, "model_response", 1)["model"] = "a-better-model"


CASES: list[tuple[Mutation, str]] = [
    (delta_altered, r"turn 2: the text deltas of output item \d+ add up to \"The tool lied:"),
    (event_dropped, r"turn 2: stream event (\d+) follows event (\d+): an event of the stream is missing"),
    (event_dropped_and_indexes_closed, r"turn 2: stream event \d+ has sequence_number \d+ after \d+"),
    (sequence_numbers_swapped, r"turn 1: stream event 2 has sequence_number \d+ after \d+: the events were "
                               "reordered"),
    (events_swapped, r"turn 1: stream event 3 follows event 1"),
    (response_altered, r"turn 1: the recorded response is not what its \d+ stream events assemble to: "
                       "it departs at model"),
]
"""Each mutation and the start of what verify says (the stand-in's own event counts vary)."""


@pytest.mark.parametrize(("mutation", "message"), CASES, ids=[m.__name__ for m, _ in CASES])
def test_a_tampered_stream_breaks_the_model_response_link(
    mutation: Mutation, message: str, run_named: Any, tmp_path: Path
) -> None:
    copy = tampered(run_named("streamed_run"), tmp_path / "tampered.jsonl", mutation)
    link, said = broken_link(copy)
    assert link == "model_response" and re.match(message, said), said


def test_padding_is_not_proof(run_named: Any, tmp_path: Path) -> None:
    def padded(events: list[Event]) -> None:
        _edit(_of_type(events, 2, "response.output_text.delta"), lambda p: p.update(obfuscation="x7Qz"))

    assert verdict_of(tampered(run_named("streamed_run"), tmp_path / "padded.jsonl", padded)).ok


def test_an_untouched_streamed_run_says_its_stream_holds(run_named: Any) -> None:
    verdict = verdict_of(run_named("streamed_run"))
    assert verdict.ok, verdict.broken
    said = [f.message for f in verdict.findings if f.check == "stream"]
    assert re.match(r"turn 1: \d+ stream events, whole and in order; their deltas add up, and they "
                    r"assemble to the recorded response \(completed\)", said[0]), said
    assert len(said) == 2
