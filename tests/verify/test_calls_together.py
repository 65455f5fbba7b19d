"""The per-call checks run together, call by call (``RunFacts.judge_together``): the same
verdict as each check over every call in turn, edited records and refusals included.

``verify`` judges each call by the parse, routing, definition, server, feedback and
call-link steps one after the other (its events are then read from memory once, not six
times). Every step is a pure function of the record and the cached facts, so the verdict
must be the one the checks give run one by one: same findings, same order, same words,
and a check that meets a value it cannot judge still names it as its own finding.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from toolrelay.errors import ToolrelayError
from toolrelay.verify import load_run, verify
from toolrelay.verify.facts import RunFacts
from toolrelay.verify.record import CallTrace
from toolrelay.verify.verdict import Finding

from .helpers import Event, edited_copies, model_body, odd_edit, tampered

CALL_KINDS = ("call_parsed", "call_routed", "mcp_request", "mcp_response", "call_outcome", "feedback")
ODD: list[Any] = [None, 0, 1.5, "", "x", [], {}, True, {"a": 1}, "call_offline_0002"]
EDITS = 60
UNJUDGEABLE = "the record cannot be checked here"


def _one_by_one(run: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    with monkeypatch.context() as patched:
        # each check over all calls
        patched.setattr(RunFacts, "judge_together", lambda facts, steps, common=None: None)
        return verify(run).to_dict()


_edit = odd_edit(CALL_KINDS, ODD)
"""A value inside one of a call's events replaced with an odd one, or removed."""


@pytest.mark.parametrize("name", ["many_calls_run", "errors_run", "chain_run", "duplicate_call_id_run"])
def test_the_untouched_runs_get_the_verdict_of_the_checks_one_by_one(
    name: str, run_named: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = load_run(run_named(name))
    together = verify(run).to_dict()
    assert together == _one_by_one(run, monkeypatch)
    assert together["ok"] and len(together["findings"]) > 6  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["many_calls_run", "errors_run"])
def test_edited_calls_get_the_verdict_of_the_checks_one_by_one(
    name: str, run_named: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(f"together-{name}")  # seeded: the same edits on every machine
    broken = 0
    for number, path in edited_copies(run_named(name), tmp_path, EDITS, rng, _edit):
        try:
            run = load_run(path)
        except ToolrelayError:
            continue  # an envelope field of the wrong type: refused before any check
        together = verify(run).to_dict()
        assert together == _one_by_one(run, monkeypatch), f"edit {number}"
        broken += not together["ok"]
    assert broken > EDITS // 4, broken


def test_a_call_one_check_cannot_judge_is_named_by_it_as_one_by_one(
    run_named: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def name_made_a_list(events: list[Event]) -> None:
        output = model_body(events, "model_response", 1)["output"]
        calls = [item for item in output if item.get("type") == "function_call"]
        calls[2]["name"] = [calls[2]["name"]]  # the third call's alias: no key to look a route up by

    run = load_run(tampered(run_named("many_calls_run"), tmp_path / "run.jsonl", name_made_a_list))
    together = verify(run).to_dict()
    assert together == _one_by_one(run, monkeypatch)
    unjudged = [(f["link"], f["check"], f["message"]) for f in together["findings"]  # type: ignore[attr-defined]
                if UNJUDGEABLE in f["message"]]
    said = (f"{UNJUDGEABLE}: it holds a value in a shape toolrelay never writes "
            "(TypeError: unhashable type: 'list')")
    assert unjudged == [("routing", "definitions", said)]  # its digests are looked up by the alias
    assert together["broken"]["message"] == (  # type: ignore[index]
        f"{run.calls[2].call_id}: call_parsed names 'fs__read_text_file', the model called ''")
    checks = [f["check"] for f in together["findings"]]  # type: ignore[attr-defined]
    assert checks.count("route") == checks.count("exchange") == checks.count("call_links") == 7  # each call


def test_a_step_that_raises_is_raised_again_where_its_check_runs(run_named: Any) -> None:
    run = load_run(run_named("many_calls_run"))
    seen: list[str] = []

    def first(call: CallTrace, facts: RunFacts) -> Finding | None:
        seen.append(f"first {call.call_id}")
        return Finding(link="parse", ok=True, message=call.call_id, call_id=call.call_id)

    def fails_at_the_third(call: CallTrace, facts: RunFacts) -> Finding | None:
        seen.append(f"fails {call.call_id}")
        if call is run.calls[2]:
            raise KeyError("its message")
        return None

    facts = RunFacts(run)
    facts.judge_together([first, fails_at_the_third])
    with pytest.raises(KeyError, match="its message"):
        facts.judged(fails_at_the_third)
    assert [f.message for f in facts.judged(first)] == [call.call_id for call in run.calls]
    ids = [call.call_id for call in run.calls]
    # call by call, both steps; the failed one is not asked again after it raised
    assert seen == [f"{step} {call_id}" for call_id in ids[:3] for step in ("first", "fails")] + [
        f"first {call_id}" for call_id in ids[3:]]
    assert facts.judged(first) is not facts.judged(first)  # each check gets its own list
