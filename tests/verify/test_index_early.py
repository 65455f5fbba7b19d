"""What the indexer does as it reads each event, where it did it after the pass before
(``record._Indexer``): a call's input_required rounds moved into ``input_rounds`` as its
retried tools/call is indexed. The record must be the one the pass gives with that off:
every call's lists holding the same events in the same order, for a real 2026-07-28 run
(seven reads, each answered input_required, then retried), with a ``run_resumed`` put at
any point of it (the moves made before it put back), and with seeded edits of its MCP
events; and the verdict the same."""

from __future__ import annotations

import copy
import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest

from toolrelay.transcript.reader import read_transcript
from toolrelay.verify import load_run, verify
from toolrelay.verify.record import CallTrace, RunRecord, _Indexer, _traced, index_events
from toolrelay.verify.shape import envelope_step, envelope_test

from .helpers import Event, modern_files_run, odd_edit

READS = {"turns": [{"calls": [{"name": "files__read_text_file", "arguments": {"path": "notes.txt", "head": n}}
                              for n in range(1, 8)]}, {"message": "Done."}]}
LISTS = ("parsed", "routed", "mcp_requests", "mcp_responses", "server_requests", "task_messages", "mcp_other",
         "outcomes", "feedbacks", "stopped")
EDITS = 80
ODD: list[Any] = [None, 0, 1, 7, "", "x", "tools/call", {}, [], {"id": 1}, "input_required", True]


@pytest.fixture(scope="module")
def modern_reads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("early_reads")
    notes = "".join(f"line {n}\n" for n in range(1, 11))
    return modern_files_run(folder, {"notes.txt": notes}, "read notes.txt", READS)


def _call_shape(call: CallTrace) -> tuple[Any, ...]:
    """A call's lists as the seqs of their events, in order (and its rounds, pair by pair)."""
    lists = tuple(tuple(event.get("seq") for event in getattr(call, name)) for name in LISTS)
    rounds = tuple((request.get("seq"), answer.get("seq")) for request, answer in call.input_rounds)
    return call.call_id, call.turn, call.index, lists, rounds


def _shape(record: RunRecord) -> tuple[Any, ...]:
    return (tuple(map(_call_shape, record.calls)), tuple(map(_call_shape, record.abandoned)),
            tuple(e.get("seq") for e in record.orphans), tuple(e.get("seq") for e in record.mcp))


def _indexed(events: list[Event], *, early: bool, monkeypatch: pytest.MonkeyPatch) -> RunRecord:
    with monkeypatch.context() as patched:
        patched.setattr(_Indexer, "split_while_indexing", early)
        return index_events(events, Path("run.jsonl"))


def _both(events: list[Event], monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    return (_shape(_indexed(copy.deepcopy(events), early=True, monkeypatch=monkeypatch)),
            _shape(_indexed(copy.deepcopy(events), early=False, monkeypatch=monkeypatch)))


def test_the_rounds_are_moved_as_read_and_the_verdict_is_the_same(
    modern_reads: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    early = load_run(modern_reads)
    assert len(early.calls) == 7
    assert all(len(call.input_rounds) == 1 and len(call.mcp_requests) == 1 for call in early.calls)
    with monkeypatch.context() as patched:
        patched.setattr(_Indexer, "split_while_indexing", False)
        late = load_run(modern_reads)
        late_verdict = verify(late).to_dict()
    assert _shape(early) == _shape(late)
    assert verify(early).to_dict() == late_verdict and late_verdict["ok"]


def test_a_resume_anywhere_gives_the_record_of_the_pass_without_early_moves(
    modern_reads: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = read_transcript(modern_reads).events
    start = next(e for e in events if e["kind"] == "run_start")
    resumed = {**copy.deepcopy(start), "kind": "run_resumed", "turn": 1, "note": ""}
    first_retry = [e for e in events if e["kind"] == "mcp_request" and e.get("method") == "tools/call"][1]
    moved_before = 0
    for position in range(1, len(events) + 1):
        edited = [*events[:position], {**resumed, "seq": 10_000 + position}, *events[position:]]
        early, late = _both(edited, monkeypatch)
        assert early == late, f"run_resumed at position {position}"
        moved_before += position > events.index(first_retry)
    assert moved_before  # some resumes came after rounds had been moved: they were put back


def test_edited_mcp_events_give_the_record_of_the_pass_without_early_moves(
    modern_reads: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = read_transcript(modern_reads).events
    rng, edit = random.Random(29), odd_edit(("mcp_request", "mcp_response"), ODD)
    differed = 0
    for number in range(EDITS):
        edited = copy.deepcopy(events)
        edit(edited, rng)
        early, late = _both(edited, monkeypatch)
        assert early == late, f"edit {number}"
        differed += early != _both(events, monkeypatch)[0]
    assert differed >= 10  # some edits changed what was indexed (ids, methods, call_ids, rounds)


@pytest.mark.parametrize("closed_seq", [None, 12])
def test_a_call_made_by_the_indexer_is_the_dataclass_made_one(closed_seq: int | None) -> None:
    item = {"type": "function_call", "call_id": "c1", "name": "t", "arguments": "{}"}
    made = _traced("c1", 2, 3, item, 11, closed_seq)
    declared = CallTrace(call_id="c1", turn=2, index=3, item=item, response_seq=11, closed_seq=closed_seq)
    for each in dataclasses.fields(CallTrace):  # every field set (a new one without a default fails here)
        assert getattr(made, each.name) == getattr(declared, each.name), each.name
    lists = [getattr(made, each.name) for each in dataclasses.fields(CallTrace)
             if isinstance(getattr(made, each.name), list)]
    assert len({id(each) for each in lists}) == len(lists) == 12  # a list of its own for each
    assert made == declared and made.item is item


def test_the_indexer_step_holds_where_the_envelope_test_holds(modern_reads: Path) -> None:
    """``envelope_step`` (test, keep and handle in one call) says what ``envelope_test`` says
    of each event, edited or not, and gives the event on only where it held."""
    events = read_transcript(modern_reads).events
    rng, edit = random.Random(6), odd_edit(None, ODD)
    held = refused = 0
    for _ in range(40):
        edited = copy.deepcopy(events)
        edit(edited, rng)
        for event in edited:
            if type(event.get("kind")) is not str:
                continue  # the reader refuses such a line before anything is indexed
            kept: list[Event] = []
            handled: list[Event] = []
            step = envelope_step(event["kind"], kept.append, handled.append)
            try:
                expected = envelope_test(event["kind"])(event)
            except (LookupError, TypeError):
                expected = False
            assert step(event) is expected
            assert kept == handled == ([event] if expected else [])
            held, refused = held + expected, refused + (not expected)
    assert held and refused


def test_what_a_handler_raises_is_not_taken_for_an_envelope_that_does_not_hold() -> None:
    def handle(event: Event) -> None:
        raise KeyError("the handler's")

    step = envelope_step("call_routed", [].append, handle)
    with pytest.raises(KeyError, match="the handler's"):
        step({"run": None, "call_id": "c1", "alias": "a", "server": "s", "tool": "t"})
    assert step({"run": None, "call_id": "c1", "alias": "a", "server": "s"}) is False  # no tool
