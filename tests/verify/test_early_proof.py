"""verify holds each early start to the run's ``--early`` policy, and says when it started.

The runs are real runs of the loop against ``HeldStream``, whose stream waits until the
tool call has reached the server: those calls started while the response was streaming.
"""

from __future__ import annotations

import json
from pathlib import Path

from toolrelay.verify import load_run, verify
from toolrelay.verify.explain import explain

from .helpers import Event, tampered, verdict_of
from .stream_runs import call_item, held_run, message_item, sse_turn

LOOK = call_item("call_look", "box__look", {"n": 1})
POKE = call_item("call_poke", "box__poke", {"n": 2})


def _answer(rid: str = "resp_2") -> list[dict[str, object]]:
    return sse_turn(rid, [message_item("all done", "msg_2")])


def _early_findings(path: Path) -> list[tuple[bool, str]]:
    return [(f.ok, f.message) for f in verdict_of(path).findings if f.check == "early_start"]


def test_a_read_only_call_started_mid_stream_is_shown_and_holds(tmp_path: Path) -> None:
    turns = [sse_turn("resp_1", [LOOK, message_item("reading it", "msg_1")], hold_after=0), _answer()]
    path, result = held_run(tmp_path, turns)
    assert result.completed
    verdict = verdict_of(path)
    assert verdict.ok, verdict.broken
    [(ok, said)] = _early_findings(path)
    assert ok and said.startswith("call_look started ")
    assert " into the response, at stream event 5 of " in said
    assert said.endswith("as its item closed; its tool is annotated readOnlyHint, as --early read-only asks")


def test_a_run_whose_policy_forbade_early_starts_is_caught(tmp_path: Path) -> None:
    turns = [sse_turn("resp_1", [LOOK], hold_after=0), _answer()]
    path, _ = held_run(tmp_path, turns)

    def policy_none(events: list[Event]) -> None:
        next(e for e in events if e["kind"] == "run_start")["early"] = "none"

    verdict = verdict_of(tampered(path, tmp_path / "none.jsonl", policy_none))
    assert verdict.broken is not None and verdict.broken.link == "model_response"
    assert verdict.broken.message.endswith(
        "yet the run's policy (--early none) lets no call start before its response is complete")


def test_an_early_call_of_a_tool_not_annotated_read_only_is_caught(tmp_path: Path) -> None:
    turns = [sse_turn("resp_1", [LOOK], hold_after=0), _answer()]
    path, _ = held_run(tmp_path, turns)

    def annotation_dropped(events: list[Event]) -> None:
        for event in events:
            if event["kind"] == "mcp_response" and event.get("method") == "tools/list":
                for tool in event["message"]["result"]["tools"]:
                    tool.pop("annotations", None)

    verdict = verdict_of(tampered(path, tmp_path / "unmarked.jsonl", annotation_dropped))
    assert verdict.broken is not None and verdict.broken.check == "early_start", verdict.broken
    assert "yet --early read-only starts only tools annotated readOnlyHint, and this one is not" in \
        verdict.broken.message


def test_early_all_starts_any_tool_and_says_so(tmp_path: Path) -> None:
    turns = [sse_turn("resp_1", [POKE], hold_after=0), _answer()]
    path, result = held_run(tmp_path, turns, early="all")
    assert result.completed
    [(ok, said)] = _early_findings(path)
    assert ok and said.endswith("as its item closed; the run allowed early calls of every tool")


def test_a_response_failing_after_an_early_call_verifies_as_unfinished(tmp_path: Path) -> None:
    turns = [sse_turn("resp_1", [LOOK], hold_after=0, status="failed")]
    path, result = held_run(tmp_path, turns)
    [call] = result.calls  # it ended, or was cancelled when the failure came first: either is honest
    assert result.status == "failed" and call.status in ("ok", "cancelled")
    verdict = verdict_of(path)
    assert verdict.ok and not verdict.finished, verdict.broken
    assert any(reason.startswith("call_look ") for reason in verdict.unfinished), verdict.unfinished
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert not [r for r in records if r["kind"] == "feedback"]


def test_explain_shows_the_call_running_inside_the_stream(tmp_path: Path) -> None:
    turns = [sse_turn("resp_1", [LOOK, message_item("reading it", "msg_1")], hold_after=0), _answer()]
    path, _ = held_run(tmp_path, turns)
    run = load_run(path)
    text = explain(run, verify(run))
    lines = text.splitlines()
    stream = next(i for i, line in enumerate(lines) if line.startswith("  stream_1: "))
    assert lines[stream].endswith("ended completed") and " events over " in lines[stream]
    assert lines[stream + 1].startswith("    call_look started at ")
    assert lines[stream + 1].endswith("stream event 5): it ran while the model was still writing")


def test_an_early_start_names_the_first_stream_event_of_its_closing_seq(tmp_path: Path) -> None:
    """The stream event an early start is placed at is the first of the turn's events with
    its item's closing seq: a line copied over an earlier event's seq is named, not the
    closing event (and the copied seq breaks the record's order)."""
    turns = [sse_turn("resp_1", [LOOK, message_item("reading it", "msg_1")], hold_after=0), _answer()]
    path, _ = held_run(tmp_path, turns)
    [(_, said)] = _early_findings(path)
    assert " at stream event 5 of " in said

    def copy_seq(events: list[Event]) -> None:
        stream = [e for e in events if e["kind"] == "model_stream" and e.get("turn") == 1]
        closing = next(e for e in stream if e.get("event") == "response.output_item.done")
        stream[2]["seq"] = closing["seq"]

    copied = tampered(path, tmp_path / "copied.jsonl", copy_seq)
    verdict = verdict_of(copied)
    [(_, said)] = _early_findings(copied)
    assert " at stream event 2 of " in said
    assert verdict.broken is not None and verdict.broken.check == "event_order"
