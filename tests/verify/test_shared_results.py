"""Calls with equal results share one classification and one rendering (``RunFacts.verdict``,
``RunFacts.expected``): a tampered call among them is still judged on its own record.

The run reads the same lines three times and a missing file twice, so each group's answers
are equal by content: the first call of a group is classified and rendered by the live
path's functions, the later ones are given that verdict and that text. Each tampered copy
changes one later call of a group and must be rejected with the words a call judged on its
own gets (the same as before results were shared).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolrelay.verify import load_run
from toolrelay.verify.facts import RunFacts
from toolrelay.verify.outcomes import result_key

from .helpers import Event, broken_link, iter_events, real_run, tampered, verdict_of

_SAME_LINES = {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 3}}
_MISSING = {"name": "fs__read_text_file", "arguments": {"path": "missing.txt"}}
TURNS = [{"calls": [_SAME_LINES, _SAME_LINES, _SAME_LINES, _MISSING, _MISSING]}, {"message": "read"}]
LINES = "line 1\\nline 2\\nline 3\\n"
"""The three lines as a finding quotes them (JSON text)."""


@pytest.fixture(scope="module")
def same_reads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    transcript, result = real_run(tmp_path_factory.mktemp("same_reads"), TURNS)
    assert result.status == "completed"
    assert [c.status for c in result.calls] == ["ok"] * 3 + ["tool_error"] * 2
    return transcript


def _call_ids(events: list[Event]) -> list[str]:
    return [str(e["call_id"]) for e in iter_events(events, "call_parsed")]


def _of_call(events: list[Event], kind: str, n: int) -> Event:
    call_id = _call_ids(events)[n]
    return next(e for e in iter_events(events, kind) if e.get("call_id") == call_id)


def _answer(events: list[Event], n: int) -> Event:
    call_id = _call_ids(events)[n]
    answers = iter_events(events, "mcp_response", method="tools/call")
    return next(e for e in answers if e.get("call_id") == call_id)


def third_read_fed_back_edited(events: list[Event]) -> None:
    _of_call(events, "feedback", 2)["item"]["output"] = "line 1\nline 2\n"


def third_answer_made_a_tool_error(events: list[Event]) -> None:
    _answer(events, 2)["message"]["result"]["isError"] = True


def second_outcome_says_tool_error(events: list[Event]) -> None:
    _of_call(events, "call_outcome", 1)["outcome"]["status"] = "tool_error"


def second_failure_fed_back_as_success(events: list[Event]) -> None:
    _of_call(events, "feedback", 4)["item"]["output"] = "line 1\nline 2\nline 3\n"


def second_failure_answer_changed(events: list[Event]) -> None:
    result = _answer(events, 4)["message"]["result"]
    result["content"][0]["text"] = "a different failure"


CASES: list[tuple[Callable[[list[Event]], None], str, Callable[[list[str]], str]]] = [
    (third_read_fed_back_edited, "feedback", lambda ids: (
        f'{ids[2]}: the feedback event holds "line 1\\nline 2\\n"; render_output gives "{LINES}" for the '
        "recorded answer, a success (no isError) (differs at output)")),
    (third_answer_made_a_tool_error, "feedback", lambda ids: (
        f"{ids[2]}: call_outcome records ok, but the recorded answer is a tool error (isError: true)")),
    (second_outcome_says_tool_error, "feedback", lambda ids: (
        f"{ids[1]}: call_outcome records tool_error, but the recorded answer is a success (no isError)")),
    (second_failure_fed_back_as_success, "feedback", lambda ids: (
        f"{ids[4]}: the feedback event feeds a failure (a tool error (isError: true)) back as success: "
        f'"{LINES}" has no "Error (…): " marker')),
    (second_failure_answer_changed, "feedback", lambda ids: (
        f'{ids[4]}: call_outcome records the message "No such file or directory: missing.txt"'
        ', but the recorded answer gives "a different failure"')),
]


def test_the_untouched_run_verifies_and_each_call_holds_on_its_own(same_reads: Path) -> None:
    verdict = verdict_of(same_reads)
    assert verdict.ok and verdict.finished
    rendered = [f for f in verdict.findings if f.check == "rendering"]
    assert [f.ok for f in rendered] == [True] * 5
    assert len({f.call_id for f in rendered}) == 5
    assert rendered[0].message == ("the output is the tool's own result (21 characters, as render_output "
                                   "gives it), sent 1 time(s)")
    assert rendered[2].message == rendered[0].message
    kept = "the output keeps the failure (a tool error (isError: true)), sent 1"
    assert rendered[4].message.startswith(kept)


def test_equal_results_are_classified_and_rendered_once(same_reads: Path) -> None:
    run = load_run(same_reads)
    facts = RunFacts(run)
    verdicts = [facts.verdict(call) for call in run.calls]
    assert verdicts[0] is verdicts[1] is verdicts[2]
    # a tool error of a tool with an outputSchema is classified with the schema, call by call
    assert verdicts[3] == verdicts[4] and verdicts[3] is not verdicts[4]
    assert verdicts[0] is not None and verdicts[0].status == "ok"
    expected = [facts.expected(call) for call in run.calls]
    assert [item["call_id"] for item in expected if item] == [call.call_id for call in run.calls]
    assert expected[0] is not None and expected[2] is not None
    assert expected[2]["output"] is expected[0]["output"] == "line 1\nline 2\nline 3\n"
    assert expected[3] is not None and expected[4] is not None
    assert expected[4]["output"] is expected[3]["output"]  # the same failure, rendered once


@pytest.mark.parametrize(("change", "link", "said"), CASES, ids=[case[0].__name__ for case in CASES])
def test_a_tampered_call_among_equal_ones_is_named(
    same_reads: Path, tmp_path: Path, change: Callable[[list[Event]], None], link: str,
    said: Callable[[list[str]], str],
) -> None:
    copy = tampered(same_reads, tmp_path / "run.jsonl", change)
    ids = [call.call_id for call in load_run(copy).calls]
    assert broken_link(copy) == (link, said(ids))


def test_results_equal_by_content_only_share_a_key() -> None:
    # a JSON true is not a 1, nor a 1 a 1.0: their results are told apart
    keys: list[Any] = [result_key({"structuredContent": {"n": value}}) for value in (1, True, 1.0)]
    assert len(set(keys)) == 3
    assert result_key({"a": [1, "x"]}) == result_key({"a": [1, "x"]})
    assert result_key({"a": object()}) is None  # no JSON value: judged on its own
