"""Faults met by the checks' quicker walks (``check_mcp_pairs``' session at hand, the stream
records' fields read once, the policy refusals looked for in C first): each still breaks
its link, in the check's own words, when it is the only thing changed in a real run."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .helpers import Event, broken_link, find, iter_events, tampered, verdict_of

Mutation = Callable[[list[Event]], None]


def _renumber(events: list[Event]) -> None:
    for seq, event in enumerate(events, 1):
        event["seq"] = seq


def _tool_call(events: list[Event]) -> Event:
    return find(events, "mcp_request", method="tools/call")


def request_id_used_twice(events: list[Event]) -> None:
    """A copy of the tools/call request (and of its answer) sent again under the same id."""
    request = _tool_call(events)
    answer = next(e for e in iter_events(events, "mcp_response", method="tools/call")
                  if e["mcp_id"] == request["mcp_id"])
    at = events.index(answer) + 1
    events[at:at] = [copy.deepcopy(request), copy.deepcopy(answer)]
    _renumber(events)


def answered_twice(events: list[Event]) -> None:
    request = _tool_call(events)
    answer = next(e for e in iter_events(events, "mcp_response", method="tools/call")
                  if e["mcp_id"] == request["mcp_id"])
    events.insert(events.index(answer) + 1, copy.deepcopy(answer))
    _renumber(events)


def answer_on_another_connection(events: list[Event]) -> None:
    """The tools/call's answer recorded on a connection that asked nothing."""
    request = _tool_call(events)
    answer = next(e for e in iter_events(events, "mcp_response", method="tools/call")
                  if e["mcp_id"] == request["mcp_id"])
    answer["connection"] = 7


def refused_by_policy_without_one(events: list[Event]) -> None:
    find(events, "call_outcome")["outcome"]["refused_by"] = "policy"


def stream_event_of_another_attempt(events: list[Event]) -> None:
    stream = [e for e in events if e["kind"] == "model_stream" and e["turn"] == 1]
    stream[1]["attempt"] = 2


CASES: list[tuple[str, Mutation, str, str]] = [
    ("seed_run", request_id_used_twice, "correlation",
     "mcp id 4 is used twice on fs (connection 1): ids must be unique in a session"),
    ("seed_run", answered_twice, "correlation",
     "the response with mcp id 4 on fs (connection 1) answers an id already answered"),
    ("seed_run", answer_on_another_connection, "correlation",
     "the response with mcp id 4 on fs (connection 7) answers no request"),
    ("seed_run", refused_by_policy_without_one, "routing",
     "call_offline_0001 (fs__read_text_file): its outcome says the policy refused it, but no policy is "
     "recorded"),
    ("streamed_errors_run", stream_event_of_another_attempt, "model_response",
     "turn 1: stream event 1 belongs to attempt 2, not 1"),
]


@pytest.mark.parametrize(("run", "mutation", "link", "message"), CASES, ids=[c[1].__name__ for c in CASES])
def test_a_fault_met_by_a_quicker_walk_breaks_its_link(
    run: str, mutation: Mutation, link: str, message: str, run_named: Any, tmp_path: Path
) -> None:
    copy_path = tampered(run_named(run), tmp_path / "tampered.jsonl", mutation)
    said = [(f.link, f.message) for f in verdict_of(copy_path).findings if not f.ok]
    assert any(on == link and message in text for on, text in said), json.dumps(said, indent=1)
    assert broken_link(copy_path)[0] is not None


def test_a_second_session_is_paired_on_its_own(run_named: Any, tmp_path: Path) -> None:
    """The tools/call and its answer moved to another connection together: both sessions hold."""
    def moved(events: list[Event]) -> None:
        request = _tool_call(events)
        answer = next(e for e in iter_events(events, "mcp_response", method="tools/call")
                      if e["mcp_id"] == request["mcp_id"])
        request["connection"] = answer["connection"] = 7

    copy_path = tampered(run_named("seed_run"), tmp_path / "moved.jsonl", moved)
    said = [f.message for f in verdict_of(copy_path).findings if f.check == "mcp_pairs"]
    assert "fs (connection 7): 1 request id(s), unique; 1 answered by their own id" in said, said
    assert all(f.ok for f in verdict_of(copy_path).findings if f.check == "mcp_pairs")


def _mcp_said(run: Any, facts: Any) -> list[tuple[Any, ...]]:
    from toolrelay.verify.correlation import check_mcp_pairs

    return [(f.ok, f.message, f.mcp_id, f.server, f.seqs) for f in check_mcp_pairs(run, facts)]


def test_the_walk_kept_with_the_listings_is_the_one_the_check_makes(run_named: Any, tmp_path: Path) -> None:
    from toolrelay.verify import load_run
    from toolrelay.verify.facts import RunFacts
    from toolrelay.verify.walked import MCP_WALK

    def faults(events: list[Event]) -> None:
        request_id_used_twice(events)
        answer_on_another_connection(events)

    run = load_run(tampered(run_named("seed_run"), tmp_path / "faults.jsonl", faults))
    kept = RunFacts(run)
    assert MCP_WALK in kept.walked and kept.listings  # made together
    alone = RunFacts(run)
    del alone.walked[MCP_WALK]
    said = _mcp_said(run, kept)
    assert said == _mcp_said(run, alone) == _mcp_said(run, kept)  # the kept walk is read, not used up
    assert [ok for ok, *_ in said].count(False) == 2


def test_a_message_id_the_walk_cannot_take_is_said_as_before(run_named: Any, tmp_path: Path) -> None:
    """An id no dict can hold: the walk leaves it to the check, which says the record cannot be checked."""
    def listed_id(events: list[Event]) -> None:  # a cancellation naming no id a set can hold
        request = _tool_call(events)
        cancel = {**copy.deepcopy(request), "kind": "mcp_notification", "mcp_id": None,
                  "method": "notifications/cancelled",
                  "message": {"jsonrpc": "2.0", "method": "notifications/cancelled",
                              "params": {"requestId": [4]}}}
        events.insert(events.index(request) + 1, cancel)
        _renumber(events)

    copy_path = tampered(run_named("seed_run"), tmp_path / "listed_id.jsonl", listed_id)
    said = [f.message for f in verdict_of(copy_path).findings if f.check == "mcp_pairs"]
    assert said == ["the record cannot be checked here: it holds a value in a shape toolrelay never writes "
                    "(TypeError: unhashable type: 'list')"], said


def test_a_call_id_used_in_two_turns_is_named(run_named: Any, tmp_path: Path) -> None:
    """Turn 2's call given turn 1's call_id everywhere: the call_ids, found unique in C in most
    runs, are grouped again and the one used twice named."""
    def reused(events: list[Event]) -> None:
        for at, event in enumerate(events):
            events[at] = json.loads(json.dumps(event).replace("call_offline_0002", "call_offline_0001"))

    copy_path = tampered(run_named("chain_run"), tmp_path / "reused.jsonl", reused)
    said = [f.message for f in verdict_of(copy_path).findings if f.check == "call_ids"]
    assert said == ["call_id call_offline_0001 is used by 2 function_calls (turns 1, 2)"], said


def test_an_output_without_a_call_id_is_counted_one_by_one(run_named: Any, tmp_path: Path) -> None:
    def nameless(events: list[Event]) -> None:
        request = find(events, "model_request", turn=2)
        output = next(item for item in request["body"]["input"] if item.get("type") == "function_call_output")
        del output["call_id"]

    copy_path = tampered(run_named("chain_run"), tmp_path / "nameless.jsonl", nameless)
    said = [f.message for f in verdict_of(copy_path).findings if f.check == "call_outputs" and not f.ok]
    stray = ("request 2 holds an output for None, but no earlier response has a function_call with that "
             "call_id")
    assert stray in said, said
