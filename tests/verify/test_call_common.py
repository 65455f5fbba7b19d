"""Calls of the common shape judged at once (``call_common.CommonCalls``): the verdict of
the six per-call steps, call by call.

A call parsed once, routed once to a declared tool, sent once (after its input_required
rounds) and answered once with a plain result, with one outcome and one feedback event,
is given the six findings ``CommonCalls`` makes from what the steps all read; anything
else is handed to the steps. So the verdict must be the one the steps give with the
common shape off: same findings, order, words and seq numbers, untouched runs and
tampered ones alike; and each tampered copy of a common call is named by its step, in its
words.
"""

from __future__ import annotations

import bisect
import itertools
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolrelay.errors import ToolrelayError
from toolrelay.relay.stages.arguments import parse_arguments
from toolrelay.verify import load_run, verify
from toolrelay.verify.call_common import CommonCalls, _written_as
from toolrelay.verify.facts import RunFacts, _span
from toolrelay.verify.jsonpath import json_equal

from .helpers import Event, edited_copies, iter_events, modern_files_run, odd_edit, tampered

EDITS = 60
CALL_KINDS = ("call_parsed", "call_routed", "mcp_request", "mcp_response", "call_outcome", "feedback",
              "declarations")
ODD: list[Any] = [None, 0, 1, 1.5, "", "x", [], {}, True, False, {"a": 1}, ["roots"]]


READS = {"turns": [{"calls": [{"name": "files__read_text_file", "arguments": {"path": "notes.txt", "head": n}}
                              for n in range(1, 8)]}, {"message": "Done."}]}


@pytest.fixture(scope="module")
def modern_reads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seven reads from toolrelay's own file server pinned to 2026-07-28 (stdio): each
    tools/call is answered input_required (the roots), then retried and answered."""
    folder = tmp_path_factory.mktemp("modern_reads")
    notes = "".join(f"line {n}\n" for n in range(1, 11))
    return modern_files_run(folder, {"notes.txt": notes}, "read notes.txt", READS)


def _common_off(run: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    with monkeypatch.context() as patched:
        patched.setattr(RunFacts, "common_shape", False)  # every call judged by the six steps
        return verify(run).to_dict()


def _with_seqs(verdict: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(f["link"], f["check"], f["ok"], f["message"], f.get("seqs")) for f in verdict["findings"]]


def _shaped(run: Any) -> list[bool]:
    common = CommonCalls(RunFacts(run))
    return [common.findings(call) is not None for call in run.calls]


@pytest.mark.parametrize("name", ["many_calls_run", "chain_run", "strict_run", "errors_run", "media_run",
                                  "parallel_run", "streamed_parallel_run", "duplicate_call_id_run"])
def test_the_untouched_runs_get_the_verdict_of_the_steps(
    name: str, run_named: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = load_run(run_named(name))
    shaped = verify(run).to_dict()
    assert shaped == _common_off(run, monkeypatch)
    assert shaped["ok"] and shaped["finished"]


@pytest.mark.parametrize("name", ["many_calls_run", "chain_run", "strict_run", "parallel_run"])
def test_the_honest_reads_are_of_the_common_shape(name: str, run_named: Any) -> None:
    run = load_run(run_named(name))
    assert _shaped(run) == [True] * len(run.calls)


def test_a_chain_of_input_required_rounds_is_of_the_common_shape(
    modern_reads: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = load_run(modern_reads)
    assert [len(call.input_rounds) for call in run.calls] == [1] * 7  # the roots asked for first
    assert _shaped(run) == [True] * 7
    verdict = verify(run).to_dict()
    assert verdict["ok"] and verdict == _common_off(run, monkeypatch)
    said = [f["message"] for f in verdict["findings"] if f["check"] == "exchange"]
    assert len(said) == 7 and all(" after 1 input_required round: a result (ok)" in s for s in said), said


def test_a_duplicate_and_the_call_it_repeats_go_to_the_steps(run_named: Any) -> None:
    run = load_run(run_named("duplicate_call_id_run"))
    assert _shaped(run) == [False, True]  # the first "dup" carries its repeat's refusal


_edit = odd_edit(CALL_KINDS, ODD)
"""A value inside one of a call's events (or the declarations) replaced or removed."""


@pytest.mark.parametrize("name", ["modern_reads", "chain_run"])
def test_edited_calls_get_the_verdict_of_the_steps(
    name: str, run_named: Any, modern_reads: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(f"common-{name}")  # seeded: the same edits on every machine
    broken = 0
    source = modern_reads if name == "modern_reads" else run_named(name)
    for number, path in edited_copies(source, tmp_path, EDITS, rng, _edit):
        try:
            run = load_run(path)
        except ToolrelayError:
            continue  # an envelope field of the wrong type: refused before any check
        shaped = verify(run).to_dict()
        off = _common_off(run, monkeypatch)
        assert shaped == off, f"edit {number}"
        assert _with_seqs(shaped) == _with_seqs(off), f"edit {number}"
        broken += not shaped["ok"]
    assert broken > EDITS // 6, broken  # many values (a _meta, a time) change no verdict


def _third(events: list[Event], kind: str, **fields: Any) -> Event:
    """The event of ``kind`` (the last of them, for a chain's requests) of the run's third call."""
    call_id = [e["call_id"] for e in iter_events(events, "call_parsed")][2]
    return [e for e in iter_events(events, kind, **fields) if e.get("call_id") == call_id][-1]


def _first_round(events: list[Event]) -> Event:
    call_id = [e["call_id"] for e in iter_events(events, "call_parsed")][2]
    requests = iter_events(events, "mcp_request", method="tools/call")
    return next(e for e in requests if e.get("call_id") == call_id)


def parsed_value_changed(events: list[Event]) -> None:
    _third(events, "call_parsed")["arguments"]["head"] = 30


def routed_with_another_digest(events: list[Event]) -> None:
    _third(events, "call_routed")["digest"] = "sha256:" + "0" * 64


def first_round_read_another_file(events: list[Event]) -> None:
    _first_round(events)["message"]["params"]["arguments"]["path"] = "todo.md"


def retry_sent_a_request_state(events: list[Event]) -> None:
    _third(events, "mcp_request", method="tools/call")["message"]["params"]["requestState"] = "made up"


def retry_answered_no_roots(events: list[Event]) -> None:
    _third(events, "mcp_request", method="tools/call")["message"]["params"]["inputResponses"] = {}


def output_edited(events: list[Event]) -> None:
    _third(events, "feedback")["item"]["output"] = "line 1\n"


def outcome_names_another_mcp_id(events: list[Event]) -> None:
    _third(events, "call_outcome")["outcome"]["mcp_id"] = 999


def answer_not_json_rpc(events: list[Event]) -> None:
    del _third(events, "mcp_response", method="tools/call")["message"]["jsonrpc"]


TAMPERS: list[tuple[Callable[[list[Event]], None], str, Callable[[str], str]]] = [
    (parsed_value_changed, "parse", lambda call_id: (
        f'{call_id}: the text parses to {{"path": "notes.txt", "head": 3}}, call_parsed records '
        '{"path": "notes.txt", "head": 30} (error None)')),
    (routed_with_another_digest, "routing", lambda call_id: (
        f"{call_id}: the model was offered files__read_text_file as sha256:")),
    (first_round_read_another_file, "server_check", lambda call_id: (
        f"{call_id}: its input_required chain is broken: the retry of round 1 (mcp id ")),
    (retry_sent_a_request_state, "server_check", lambda call_id: (
        f"{call_id}: its input_required chain is broken: the retry of round 1 (mcp id ")),
    (retry_answered_no_roots, "server_check", lambda call_id: (
        f"{call_id}: its input_required chain is broken: the retry of round 1 (mcp id ")),
    (output_edited, "feedback", lambda call_id: (
        f'{call_id}: the feedback event holds "line 1\\n"; render_output gives "line 1\\nline 2\\nline 3\\n" '
        "for the recorded answer, a success (no isError) (differs at output)")),
    (outcome_names_another_mcp_id, "correlation", lambda call_id: (
        f"{call_id}: call_outcome names mcp id 999 on files, but its tools/call is mcp id ")),
    (answer_not_json_rpc, "server_check", lambda call_id: (
        f"{call_id}: recorded as ok, yet the answer to mcp id ")),
]
ENDINGS = {
    "first_round_read_another_file": "is not the original request: its tool name or arguments differ",
    "retry_sent_a_request_state": "sends a requestState round 1 never gave",
    "retry_answered_no_roots": "answers inputResponses [] but round 1 asked for ['roots']",
    "answer_not_json_rpc": 'is not a JSON-RPC response: Invalid Request: "jsonrpc" must be "2.0"',
}


@pytest.mark.parametrize(("change", "link", "said"), TAMPERS, ids=[case[0].__name__ for case in TAMPERS])
def test_a_tampered_common_call_is_named_by_its_step(
    change: Callable[[list[Event]], None], link: str, said: Callable[[str], str],
    modern_reads: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = load_run(tampered(modern_reads, tmp_path / "run.jsonl", change))
    assert _shaped(run) == [True, True, False, True, True, True, True]  # the third goes to the steps
    verdict = verify(run).to_dict()
    assert verdict == _common_off(run, monkeypatch)
    call_id = run.calls[2].call_id
    broken = [(f["link"], f["message"]) for f in verdict["findings"] if not f["ok"]]
    assert broken and all(message.startswith(f"{call_id}: ") for _, message in broken)
    named = [message for found, message in broken if found == link and message.startswith(said(call_id))]
    assert named, broken
    ending = ENDINGS.get(change.__name__)
    assert ending is None or named[0].endswith(ending), named


WRITTEN: list[tuple[str, bool]] = [
    ('{"path":"notes.txt","head":3}', True),
    ('{"path": "notes.txt", "head": 3}', True),  # json's own spacing
    ('{"n":1.5,"big":12345678901234567890,"t":true,"f":false,"z":null,"l":[1,{"é":"ü"}]}', True),
    ('{"head":3,"path":"notes.txt"}', False),  # another key order: the parser reads it
    ('{"path":"notes.txt" ,"head":3}', False),
    ('{"path":"notes\\u002etxt","head":3}', False),  # an escape could spell a surrogate
    ('{"path":"notes.txt","head":3.0}', False),
    ('{"path":"x","path":"notes.txt","head":3}', False),  # a key twice: the parser refuses it
    ('{"a":' + "[" * 70 + "]" * 70 + "}", False),  # past the depth limit: the parser refuses it
]


@pytest.mark.parametrize(("text", "taken"), WRITTEN)
def test_a_text_is_taken_for_its_value_only_as_json_writes_it(text: str, taken: bool) -> None:
    value = {"path": "notes.txt", "head": 3} if "notes" in text else json.loads(text)
    parsed = parse_arguments(text)
    assert _written_as(value, text) is taken
    if taken:  # what the live parser gives for that text, true told from 1
        assert isinstance(parsed, dict) and json_equal(parsed, value)


@pytest.mark.parametrize("seqs", [[], [5], [3, 8, 20], [3, 8, 8, 20], [9, 4, 12]])
def test_a_span_of_seqs_has_one_latest_event_before_each(seqs: list[int]) -> None:
    """What ``CommonCalls`` keeps the declarations and a server's listing by: for every seq
    ``lo < s <= hi`` of the span given for a seq, the latest event before ``s`` is the one
    given (what bisect finds for ``s``; of seqs out of order, the span is that seq alone)."""
    found = [f"event at {seq}" for seq in seqs]
    increasing = all(a < b for a, b in itertools.pairwise(seqs))
    for seq in range(25):
        item, lo, hi = _span(seqs, found, seq, increasing)
        assert lo < seq <= hi
        for other in range(25):
            if lo < other <= hi:
                index = bisect.bisect_left(seqs, other) - 1
                assert item == (found[index] if index >= 0 else None), (seq, other)
