"""A replayed request carries the previous request's outputs on (format 2 shares those very
items): the correlation check counts only what each request adds, yet names a repeated or
stray output in every request that holds it, exactly as it does for whole bodies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from testkit.transcripts import replay_run as five_reads
from testkit.transcripts import whole_copy
from toolrelay.verify import load_run, verify

Event = dict[str, Any]


@pytest.fixture(scope="module")
def replay_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real replay-mode run: two calls, one, two, then the answer (format 2)."""
    return five_reads(tmp_path_factory.mktemp("carried"))


def _tampered(source: Path, target: Path, extra: Event) -> Path:
    """``source`` with ``extra`` added to the end of request 2's new input items (the delta)."""
    events = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    request = next(e for e in events if e["kind"] == "model_request" and e.get("turn") == 2)
    request["body_delta"]["extend"]["input"].append(extra)
    target.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return target


def _output_findings(path: Path) -> list[tuple[bool, int | None, str]]:
    verdict = verify(load_run(path))
    return [(f.ok, f.turn, f.message) for f in verdict.findings if f.check == "call_outputs"]


def _feedback_ref(path: Path, call_index: int) -> Event:
    feedbacks = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                 if json.loads(line)["kind"] == "feedback"]
    return {"ref": [feedbacks[call_index]["seq"], "item"]}


def test_an_output_repeated_in_a_delta_is_named_in_each_request_that_carries_it(
    replay_run: Path, tmp_path: Path
) -> None:
    first = json.loads(next(line for line in replay_run.read_text().splitlines()
                            if json.loads(line)["kind"] == "feedback"))["call_id"]
    delta = _tampered(replay_run, tmp_path / "delta.jsonl", _feedback_ref(replay_run, 0))
    found = _output_findings(delta)
    repeated = [(ok, turn) for ok, turn, message in found
                if f"holds 2 function_call_output items for {first}: one call, one output" in message]
    assert repeated == [(False, 2), (False, 3), (False, 4)], found
    assert found == _output_findings(whole_copy(delta, tmp_path / "whole.jsonl"))
    broken = verify(load_run(delta)).broken
    assert broken is not None and broken.link == "correlation"
    assert broken.message == f"request 2 holds 2 function_call_output items for {first}: one call, one output"


def test_a_stray_output_in_a_delta_is_named_in_each_request_that_carries_it(
    replay_run: Path, tmp_path: Path
) -> None:
    stray = {"type": "function_call_output", "call_id": "call_nobody", "output": "made up"}
    delta = _tampered(replay_run, tmp_path / "delta.jsonl", {"items": [stray]})
    found = _output_findings(delta)
    said = "holds an output for call_nobody, but no earlier response has a function_call with that call_id"
    assert [turn for ok, turn, message in found if said in message and not ok] == [2, 3, 4], found
    assert found == _output_findings(whole_copy(delta, tmp_path / "whole.jsonl"))


def test_an_untouched_replayed_run_answers_each_call_once(replay_run: Path) -> None:
    found = _output_findings(replay_run)
    assert [(ok, turn) for ok, turn, _ in found] == [(True, 2), (True, 3), (True, 4)], found
    assert "request 4 answers each of the 2 call(s) of response 3 once, by call_id" in found[-1][2]
