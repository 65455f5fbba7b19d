"""How a run ended, in words: every status a run can end with reads as a sentence, never
as a status word used as a verb (``run max_turns after 1 turn(s)``)."""

from __future__ import annotations

import pytest

from toolrelay.relay.stages.endings import RUN_STATUSES, ending_line, ending_sentence

SENTENCES = {
    "completed": "completed after 2 turns",
    "refused": "ended after 2 turns: the model refused",
    "max_turns": "stopped at the turn limit (2)",
    "max_tool_calls": "stopped at the tool call limit after 2 turns",
    "timeout": "stopped at its time limit during turn 2",
    "aborted": "was interrupted during turn 2",
    "incomplete": "ended after 2 turns with an incomplete response",
    "failed": "ended after 2 turns with a failed response",
    "cancelled": "ended after 2 turns with a cancelled response",
    "error": "ended in turn 2: the model endpoint failed",
    "uncertain": "stopped in turn 2: a call was sent but its answer was never recorded",  # a resumed task
}


def test_the_statuses_are_the_ones_a_run_can_end_with() -> None:
    assert set(RUN_STATUSES) == set(SENTENCES)


@pytest.mark.parametrize(("status", "sentence"), SENTENCES.items())
def test_each_status_reads_as_a_sentence(status: str, sentence: str) -> None:
    assert ending_sentence(status, 2) == sentence
    assert "_" not in sentence


def test_one_turn_is_singular() -> None:
    assert ending_sentence("completed", 1) == "completed after 1 turn"
    assert ending_sentence("max_turns", 1) == "stopped at the turn limit (1)"


def test_a_status_of_the_model_toolrelay_does_not_know_is_quoted() -> None:
    assert ending_sentence("in_progress", 1) == "ended after 1 turn with the response status 'in_progress'"


def test_the_line_adds_the_reason_unless_the_sentence_says_it_already() -> None:
    assert ending_line("max_turns", 1, "reached --max-turns 1") == (
        "stopped at the turn limit (1): reached --max-turns 1"
    )
    assert ending_line("refused", 1, "the model refused") == "ended after 1 turn: the model refused"
    assert ending_line("completed", 1, "") == "completed after 1 turn"
