"""Compaction (``--compact-at``): a scripted 40-turn run whose response 30 compacts.

The stand-in (a real loopback HTTP server) puts a ``compaction`` item first in response 30's
output; request 31 starts from it, the 59 items before it left out; the run verifies, and
``explain`` and ``view`` show the boundary. Tampered copies are rejected by name: an input
after the compaction that feeds back a dropped call's output, and a call dropped at the
compaction whose output was never fed back before it.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from openai.types.responses import ResponseCompactionItem

from testkit.openai_wire import check_body
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.relay.loop import RunLimits, RunResult
from toolrelay.runner import RunOptions, run_async
from toolrelay.transcript.delta import wire_bytes, wire_digest
from toolrelay.verify import load_run, verify
from toolrelay.verify.explain import explain
from toolrelay.view.build import build_trace

from .helpers import read_events, write_events, write_notes

TURNS = 40
COMPACT_TURN = 30
THRESHOLD = 1_000_000  # asked for, never reached by the stand-in's estimate: the script compacts


def _read(head: int) -> dict[str, Any]:
    return {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": head}}


def compacted_run(folder: Path, *, stream: bool = False) -> tuple[Path, RunResult]:
    """40 turns: 39 with one call each (turn 30's response compacts first), then the answer."""
    folder.mkdir(parents=True, exist_ok=True)
    write_notes(folder)
    turns: list[dict[str, Any]] = [{"calls": [_read(1 + n % 5)]} for n in range(TURNS - 1)]
    turns[COMPACT_TURN - 1]["compact"] = True
    turns.append({"message": "done"})
    (folder / "script.json").write_text(json.dumps({"turns": turns}), encoding="utf-8")
    options = RunOptions(model="offline", script=folder / "script.json",
                         config=[in_process_file_server(folder)], transcript=folder / "run.jsonl",
                         stream=stream, compact_at=THRESHOLD,
                         limits=RunLimits(max_turns=TURNS + 5))
    return folder / "run.jsonl", asyncio.run(run_async("Read notes.txt again and again", options))


@pytest.fixture(scope="module")
def compacted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path, result = compacted_run(tmp_path_factory.mktemp("compacted"))
    assert (result.status, result.turns, len(result.calls)) == ("completed", TURNS, TURNS - 1)
    return path


def _requests(events: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    return {event["turn"]: event for event in events if event["kind"] == "model_request"}


def _responses(events: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    return {event["turn"]: event for event in events if event["kind"] == "model_response"}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_40_turn_run_compacted_at_turn_30_verifies(tmp_path: Path, stream: bool) -> None:
    path, result = compacted_run(tmp_path, stream=stream)
    assert result.status == "completed" and result.final_text == "done"
    verdict = verify(load_run(path))
    assert verdict.ok, verdict.broken
    events = read_events(path)
    requests, responses = _requests(events), _responses(events)
    for event in requests.values():  # every request asks for compaction as the openai types say
        assert event["body"]["context_management"] == [{"type": "compaction", "compact_threshold": THRESHOLD}]
        check_body(event["body"])
    output = responses[COMPACT_TURN]["body"]["output"]
    item = ResponseCompactionItem.model_validate(output[0])  # the compaction item comes first
    before, after = requests[COMPACT_TURN]["body"]["input"], requests[COMPACT_TURN + 1]["body"]["input"]
    assert len(before) == 2 * COMPACT_TURN - 1
    # request 31: the compaction item, the rest of response 30 unchanged, then the output
    assert after[0] == output[0] and after[0]["encrypted_content"] == item.encrypted_content
    assert after[: len(output)] == output
    assert [i["type"] for i in after[len(output):]] == ["function_call_output"]
    assert len(requests[TURNS]["body"]["input"]) == len(after) + 2 * (TURNS - COMPACT_TURN - 1)
    [record] = [event for event in events if event["kind"] == "compaction"]
    assert (record["turn"], record["dropped"]) == (COMPACT_TURN, len(before))
    said = [f.message for f in verdict.findings if f.check == "compaction" and f.ok]
    assert f"request 31 starts from the item of the compaction of turn 30: {len(before)} earlier item(s)" \
        in said[0]
    # the model's token count falls with the context (the stand-in counts what it reads)
    tokens = [responses[turn]["body"]["usage"]["input_tokens"] for turn in (COMPACT_TURN, COMPACT_TURN + 1)]
    assert tokens[1] < tokens[0] / 5


def test_the_transcript_records_the_shrunk_input_exactly_and_small(compacted: Path) -> None:
    lines = [json.loads(line) for line in compacted.read_text(encoding="utf-8").splitlines()]
    raw = {e["turn"]: e for e in lines if e["kind"] == "model_request"}
    delta = raw[COMPACT_TURN + 1]["body_delta"]
    # the shrink: set whole, once (its items as references to the lines that hold them)
    assert list(delta) == ["of", "set_items"] and list(delta["set_items"]) == ["input"]
    assert "extend" in raw[COMPACT_TURN + 2]["body_delta"]  # and appended to again after it
    events = read_events(compacted)
    assert len(_requests(events)[COMPACT_TURN + 1]["body"]["input"]) == 3
    for event in _requests(events).values():
        assert wire_digest(wire_bytes(event["body"])) == event["body_sha256"]


def test_explain_and_view_show_the_boundary(compacted: Path) -> None:
    run = load_run(compacted)
    text = explain(run, verify(run))
    assert "  compaction at turn 30, 59 items dropped (request 31 starts from the compaction item)\n" in text
    trace = build_trace(read_events(compacted), verify(load_run(compacted)))
    [row] = [row for group in trace.groups for row in group.rows() if row.kind == "compaction"]
    assert (row.label, row.source, row.target) == ("compaction at turn 30, 59 items dropped", "app", "app")
    starts = [row.seq for row in trace.rows() if "starts from a compaction item" in row.detail]
    requests = _requests(read_events(compacted))
    assert starts == [requests[turn]["seq"] for turn in range(COMPACT_TURN + 1, TURNS + 1)]


def _tampered(source: Path, target: Path, change: Callable[[list[dict[str, Any]]], None]) -> Path:
    """A copy with ``change`` applied and each request's digest made to fit (a careful forger)."""
    events = copy.deepcopy(read_events(source))
    change(events)
    for event in events:
        if event["kind"] == "model_request":
            event["body_sha256"] = wire_digest(wire_bytes(event["body"]))
    return write_events(target, events)


def _broken(path: Path) -> list[str]:
    return [f.message for f in verify(load_run(path)).broken_findings()]


def test_an_input_after_the_compaction_that_feeds_back_a_dropped_call_is_rejected(
    compacted: Path, tmp_path: Path
) -> None:
    events = read_events(compacted)
    dropped = _requests(events)[COMPACT_TURN]["body"]["input"][-1]  # call 29's output: before the boundary
    assert dropped["type"] == "function_call_output"

    def refer(changed: list[dict[str, Any]]) -> None:
        for turn, event in _requests(changed).items():
            if turn > COMPACT_TURN:  # request 31's tail, and every later request carries it on
                event["body"]["input"].insert(3, dropped)

    messages = _broken(_tampered(compacted, tmp_path / "refers.jsonl", refer))
    wanted = (f"request 31 input[3] feeds back the output of call {dropped['call_id']}, whose function_call "
              "the input does not carry, which the compaction of turn 30 left out")
    assert any(m.startswith(wanted) for m in messages), messages


def test_a_later_input_that_refers_to_a_dropped_call_is_rejected(compacted: Path, tmp_path: Path) -> None:
    events = read_events(compacted)
    dropped = _requests(events)[5]["body"]["input"][-1]

    def refer(changed: list[dict[str, Any]]) -> None:
        for turn, event in _requests(changed).items():
            if turn >= 35:
                body = event["body"]["input"]
                body.insert(len(body) - 1 - 2 * (turn - 35), dropped)  # request 35's own tail, carried on

    messages = _broken(_tampered(compacted, tmp_path / "later.jsonl", refer))
    assert any("request 35 input[" in m and f"feeds back the output of call {dropped['call_id']}" in m
               for m in messages), messages


def test_a_call_dropped_at_the_compaction_before_its_output_was_fed_back_is_rejected(
    compacted: Path, tmp_path: Path
) -> None:
    """Response 30's compaction item moved after its call: request 31 (recorded as it would then
    be: from the item on) leaves out call 30, whose output only request 31 gives."""

    def reorder(changed: list[dict[str, Any]]) -> None:
        output = _responses(changed)[COMPACT_TURN]["body"]["output"]
        output.append(output.pop(0))
        for turn, event in _requests(changed).items():
            if turn > COMPACT_TURN:
                del event["body"]["input"][1]  # function_call 30 gone, the item first, its output kept

    messages = _broken(_tampered(compacted, tmp_path / "unanswered.jsonl", reorder))
    call_id = _responses(read_events(compacted))[COMPACT_TURN]["body"]["output"][1]["call_id"]
    wanted = (f"request 31 leaves out call {call_id} (fs__read_text_file) at the compaction of turn 30, but "
              "its output was never fed back before the compaction")
    assert any(m.startswith(wanted) for m in messages), messages


def test_a_compaction_record_that_does_not_match_the_requests_is_rejected(
    compacted: Path, tmp_path: Path
) -> None:
    def lie(changed: list[dict[str, Any]]) -> None:
        next(e for e in changed if e["kind"] == "compaction")["dropped"] = 3

    messages = _broken(_tampered(compacted, tmp_path / "record.jsonl", lie))
    assert any(m.startswith("the compaction record of turn 30 says 3 item(s) were left out, and request 31 "
                            "leaves out 59 item(s)") for m in messages), messages
