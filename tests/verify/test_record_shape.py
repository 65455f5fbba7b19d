"""Hand-edited or corrupted records: a clear refusal or a broken link, never a crash.

Envelope fields (ids, server names, the body and message slots) have one JSON type in
every transcript toolrelay writes; another type there is unreadable input (exit 2) that
names the event. Inside the evidence (bodies, JSON-RPC messages) any shape may appear;
verify judges it and reports a broken link, and explain and view still render. A seeded
mutation sweep over real transcripts holds all of that for a few hundred random edits.
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolrelay.errors import ToolrelayError, UsageError
from toolrelay.verify import load_run, verify
from toolrelay.verify.explain import walk
from toolrelay.verify.record import index_events
from toolrelay.verify.shape import check_envelopes, envelope_problem, envelope_test
from toolrelay.view.build import build_trace
from toolrelay.view.render import render_html

from .helpers import (
    Event,
    edited_copies,
    find,
    model_body,
    odd_edit,
    read_events,
    tampered,
    tool_call,
    verdict_of,
)

SWEEP_EDITS = 300
ODD_VALUES: list[Any] = [None, 0, -1, 1.5, "", "x", [], {}, True, [1], {"a": 1}, "call_offline_0001"]


def _refusal(path: Path) -> str:
    with pytest.raises(UsageError) as refused:
        load_run(path)
    return str(refused.value)


def test_an_id_of_the_wrong_type_names_the_event_and_field(seed_run: Path, tmp_path: Path) -> None:
    def object_id(events: list[Event]) -> None:
        tool_call(events, 0, "mcp_response")["mcp_id"] = {"id": 3}

    copy_path = tampered(seed_run, tmp_path / "t.jsonl", object_id)
    seq = tool_call(json.loads(f"[{','.join(copy_path.read_text().splitlines())}]"), 0, "mcp_response")["seq"]
    assert _refusal(copy_path) == (
        f"{copy_path}: event seq {seq} (mcp_response) has an object as 'mcp_id', not an integer or a "
        "string or null; toolrelay never writes that, so this transcript cannot be checked"
    )


@pytest.mark.parametrize(
    ("kind", "change", "said"),
    [
        ("mcp_request", lambda e: e.pop("message"), "has no 'message' field"),
        ("model_request", lambda e: e.update(body=["input"]), "has an array as 'body', not an object"),
        ("call_outcome", lambda e: e["outcome"].update(status=["ok"]),
         "has an array as 'outcome.status', not a string"),
        ("call_routed", lambda e: e.update(server=7), "has an integer as 'server', not a string"),
        ("model_response", lambda e: e.update(turn=True), "has true or false as 'turn', not an integer"),
        ("server_ready", lambda e: e.update(run=["r"]), "has an array as 'run', not a string or null"),
    ],
    ids=["missing-message", "body-array", "outcome-status", "server-number", "turn-bool", "run-array"],
)
def test_envelope_fields_are_checked_before_any_link(
    seed_run: Path, tmp_path: Path, kind: str, change: Any, said: str
) -> None:
    copy_path = tampered(seed_run, tmp_path / "t.jsonl", lambda events: change(find(events, kind)))
    message = _refusal(copy_path)
    assert f"({kind}) {said};" in message
    proc = subprocess.run([sys.executable, "-m", "toolrelay", "verify", str(copy_path)],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and said in proc.stderr


def test_odd_evidence_breaks_a_link_and_still_explains_and_renders(seed_run: Path, tmp_path: Path) -> None:
    def odd_bodies(events: list[Event]) -> None:
        request_2 = model_body(events, "model_request", 2)
        request_2["input"] = 1.5  # not a list of items
        request_2["tools"] = [{"name": ["fs__read_text_file"]}]  # a name that is not text
        tool_call(events, 0, "mcp_response")["message"]["result"]["content"] = [{"type": "text"}]

    copy_path = tampered(seed_run, tmp_path / "t.jsonl", odd_bodies)
    run = load_run(copy_path)
    verdict = verify(run)
    assert verdict.broken is not None and verdict.broken.link == "feedback"
    assert 'render_output gives "" for the recorded answer' in verdict.broken.message  # text-less block
    assert "BROKEN at feedback" in walk(run, verdict)
    assert "<html" in render_html(build_trace(run.events, verdict, source=str(copy_path)))


_edit_once = odd_edit(None, ODD_VALUES)


def _edit(events: list[Event], rng: random.Random) -> None:
    """One to three random edits anywhere in the record: a value replaced or removed."""
    for _ in range(rng.randint(1, 3)):
        _edit_once(events, rng)


@pytest.mark.parametrize("run", ["seed_run", "parallel_run", "errors_run"])
def test_a_sweep_of_random_edits_never_crashes_verify_explain_or_view(
    run: str, run_named: Any, tmp_path: Path
) -> None:
    rng = random.Random(f"toolrelay-{run}")  # seeded: the same edits on every machine
    source = run_named(run)
    outcomes = {"refused": 0, "broken": 0, "holds": 0}
    for _, path in edited_copies(source, tmp_path, SWEEP_EDITS // 3, rng, _edit):
        try:
            record = load_run(path)
        except ToolrelayError:
            outcomes["refused"] += 1
            continue
        verdict = verify(record)
        walk(record, verdict)
        render_html(build_trace(record.events, verdict, source=str(path)))
        outcomes["broken" if verdict.broken else "holds"] += 1
    # some edits touch no link (a timestamp, a server's version string): those may hold
    assert outcomes["refused"] > 0 and outcomes["broken"] > 0, outcomes
    assert verdict_of(source).ok  # and the untouched run still holds


def test_a_transcript_from_before_a_field_was_added_still_verifies(seed_run: Path, tmp_path: Path) -> None:
    # run_start.media_budget and feedback.cut came in a later version; a transcript written
    # before them reads as if they had their defaults, and verifies as it did then
    def older(events: list[Event]) -> None:
        find(events, "run_start").pop("media_budget")
        for event in events:
            if event["kind"] == "feedback":
                event.pop("cut")

    copy_path = tampered(seed_run, tmp_path / "old.jsonl", older)
    assert "media_budget" not in copy_path.read_text() and '"cut"' not in copy_path.read_text()
    verdict = verdict_of(copy_path)
    assert verdict.ok and verdict.finished, verdict.broken


# -- the envelopes checked in the indexing pass (``index_events(checked=True)``) ------------


def _record_of(events: list[Event], source: Path, *, fast: bool) -> Any:
    """The run indexed from ``events`` (a copy) with its envelopes checked in the indexing
    pass (``fast``) or, as before it, by ``check_envelopes`` first."""
    events = copy.deepcopy(events)
    if fast:
        return index_events(events, source, checked=True)
    check_envelopes(events, source)
    return index_events(events, source)


def _shape_of(record: Any) -> list[Any]:
    """What the indexer made, by seq numbers: each call's events, the orphans, each round's."""
    def seqs(events: list[Event]) -> list[int]:
        return [e["seq"] for e in events]
    return [
        [(c.call_id, c.turn, c.index, c.response_seq, c.closed_seq, seqs(c.parsed), seqs(c.routed),
          seqs(c.mcp_requests), seqs(c.mcp_responses), [(a["seq"], b["seq"]) for a, b in c.input_rounds],
          seqs(c.server_requests), seqs(c.task_messages), seqs(c.mcp_other), seqs(c.outcomes),
          seqs(c.feedbacks), len(c.duplicates)) for c in record.calls],
        seqs(record.orphans), seqs(record.mcp), {kind: seqs(same) for kind, same in record.by_kind.items()},
        [(r.turn, r.attempts, seqs(r.stream), r.closed_at) for r in record.rounds],
    ]


@pytest.mark.parametrize(
    "run", ["seed_run", "chain_run", "parallel_run", "streamed_parallel_run", "errors_run"]
)
def test_the_envelopes_checked_while_indexing_give_the_record_and_verdict_checked_first(
    run: str, run_named: Any, tmp_path: Path
) -> None:
    events = read_events(run_named(run))
    older = copy.deepcopy(events)  # an event mid-run from before a field was added: the slow path from there
    next(e for e in older[len(older) // 2:] if e["kind"] == "feedback").pop("cut")
    for which in (events, older):
        fast, checked = _record_of(which, tmp_path, fast=True), _record_of(which, tmp_path, fast=False)
        assert _shape_of(fast) == _shape_of(checked)
        assert verify(fast).to_dict() == verify(checked).to_dict()
        assert verify(fast).ok, verify(fast).broken


@pytest.mark.parametrize(
    ("kind", "change", "said"),
    [
        ("call_outcome", lambda e: e["outcome"].update(mcp_id=[1]),
         "has an array as 'outcome.mcp_id', not an integer or a string or null"),
        ("call_outcome", lambda e: e.update(outcome="ok"), "has a string as 'outcome', not an object"),
        ("mcp_response", lambda e: e.update(elapsed="slow"),
         "has a string as 'elapsed', not a number or null"),
        ("model_stream", lambda e: e.pop("data"), "has no 'data' field"),
        ("feedback", lambda e: e.update(call_id=None), "has null as 'call_id', not a string"),
    ],
    ids=["outcome-id-array", "outcome-string", "elapsed-string", "stream-no-data", "feedback-null-id"],
)
def test_an_envelope_late_in_the_run_is_refused_naming_its_event(
    run_named: Any, tmp_path: Path, kind: str, change: Any, said: str
) -> None:
    # the last event of its kind: every event before it went through the indexing pass's test
    def last(events: list[Event]) -> None:
        change([e for e in events if e["kind"] == kind][-1])

    copy_path = tampered(run_named("streamed_parallel_run"), tmp_path / "t.jsonl", last)
    seq = [e for e in read_events(copy_path) if e["kind"] == kind][-1]["seq"]
    assert _refusal(copy_path) == (
        f"{copy_path}: event seq {seq} ({kind}) {said}; toolrelay never writes that, so this "
        "transcript cannot be checked"
    )


def test_events_written_by_hand_without_run_ids_load_and_are_checked_as_before(
    seed_run: Path, tmp_path: Path
) -> None:
    # no run id on any event (written by hand): the indexing pass's test holds for none, so
    # check_envelopes judges every event; a bad envelope late in the run is still refused
    def hand_written(events: list[Event]) -> None:
        for event in events:
            event.pop("run", None)

    def and_bad_later(events: list[Event]) -> None:
        hand_written(events)
        [e for e in events if e["kind"] == "call_routed"][-1]["server"] = 7

    hand = tampered(seed_run, tmp_path / "hand.jsonl", hand_written)
    assert verdict_of(hand).to_dict() == verify(_record_of(read_events(hand), hand, fast=False)).to_dict()
    bad = tampered(seed_run, tmp_path / "bad.jsonl", and_bad_later)
    seq = [e for e in read_events(bad) if e["kind"] == "call_routed"][-1]["seq"]
    assert f"event seq {seq} (call_routed) has an integer as 'server', not a string;" in _refusal(bad)


def test_envelope_test_holds_only_for_events_the_slow_check_lets_through_unchanged(seed_run: Path) -> None:
    events = read_events(seed_run)
    assert all(envelope_test(e["kind"])(e) for e in events)  # what toolrelay writes takes the fast test
    tried = 0
    for event in events:
        edits = [(event, name) for name in event if name not in ("seq", "kind")]
        if isinstance(event.get("outcome"), dict):
            edits += [(event["outcome"], name) for name in event["outcome"]]
        for record, name in edits:
            for value in [*ODD_VALUES, None.__class__]:  # the class: a field removed
                edited = copy.deepcopy(event)
                target = edited["outcome"] if record is not event else edited
                if value is None.__class__:
                    del target[name]
                else:
                    target[name] = value
                try:
                    held = envelope_test(edited["kind"])(edited)
                except (LookupError, TypeError):
                    held = False
                if held:
                    before = copy.deepcopy(edited)
                    assert envelope_problem(edited) is None, (name, value)  # field by field
                    kept = {key: edited[key] for key in before}
                    assert kept == before, (name, value)  # nothing it holds changed
                tried += 1
    assert tried > 1000
