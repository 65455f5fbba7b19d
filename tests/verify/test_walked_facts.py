"""Facts a check's walk keeps for a later check (verify/walked.py): check_event_order's
"the seqs run in order" for check_answer_order, check_mcp_pairs' request methods for
check_listens. With nothing kept each check walks for itself; the verdict is the same,
and a feedback sent after the answer's request is still caught."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolrelay.verify import correlation, load_run, verify

from .conftest import RUNS
from .helpers import Event, tampered


def _verdicts(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], dict[str, Any]]:
    kept = verify(load_run(path)).to_dict()
    with monkeypatch.context() as patched:
        patched.setattr(correlation, "keep", lambda *_: None)  # nothing kept: every check walks
        walked = verify(load_run(path)).to_dict()
    return kept, walked


def _late_feedback(events: list[Event]) -> None:
    """The answer's request moved before the last feedback, the seqs renumbered in order."""
    final = max(i for i, e in enumerate(events) if e["kind"] == "model_request")
    last = max(i for i, e in enumerate(events) if e["kind"] == "feedback")
    events.insert(last, events.pop(final))
    for seq, event in enumerate(events, start=events[0]["seq"]):
        event["seq"] = seq


def _seqs_out_of_order(events: list[Event]) -> None:
    events[3]["seq"], events[4]["seq"] = events[4]["seq"], events[3]["seq"]


@pytest.mark.parametrize("name", sorted(RUNS))
def test_the_verdict_is_the_same_with_nothing_kept(name: str, run_named: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    kept, walked = _verdicts(run_named(name), monkeypatch)
    assert kept == walked


def test_a_feedback_after_the_answers_request_is_caught_either_way(seed_run: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    late = tampered(seed_run, tmp_path / "late.jsonl", _late_feedback)
    kept, walked = _verdicts(late, monkeypatch)
    assert kept == walked
    [said] = [f["message"] for f in kept["findings"] if f["check"] == "answer_order"]
    assert said.startswith("the answer's request (turn ") and " was sent before the feedback of call_" in said
    disordered = tampered(seed_run, tmp_path / "disordered.jsonl", _seqs_out_of_order)
    kept, walked = _verdicts(disordered, monkeypatch)
    assert kept == walked
    assert kept["broken"]["check"] == "event_order"
