"""Model events name their dialect; verify reads each answer by the reader of its dialect.

A transcript written before model events named one (no ``dialect`` field) is a Responses
one and still verifies; a dialect verify has no reader for is a broken model_response
link that says so, from ``toolrelay verify`` as a user runs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .helpers import Event, broken_link, read_events, run_cli, tampered, verdict_of

MODEL_KINDS = ("model_request", "model_response", "model_stream")
UNKNOWN = ("turn 1: the model dialect 'chat_completions' has no reader in this toolrelay (it reads: "
           "chat, responses), so its answer cannot be checked")


def _without_dialect(events: list[Event]) -> None:
    for event in events:
        event.pop("dialect", None)


def _chat_answer(events: list[Event]) -> None:
    for event in events:
        if event["kind"] in MODEL_KINDS and event.get("turn") == 1:
            event["dialect"] = "chat_completions"


@pytest.mark.parametrize("run", ["seed_run", "streamed_run"])
def test_every_model_event_records_its_dialect(run: str, run_named: Any) -> None:
    events = [e for e in read_events(run_named(run)) if e["kind"] in MODEL_KINDS]
    assert {e["kind"] for e in events} >= {"model_request", "model_response"}
    assert {e["dialect"] for e in events} == {"responses"}


@pytest.mark.parametrize("run", ["seed_run", "streamed_run", "tool_error_run"])
def test_a_transcript_from_before_dialects_were_recorded_still_verifies(
    run: str, run_named: Any, tmp_path: Path
) -> None:
    copy = tampered(run_named(run), tmp_path / "old.jsonl", _without_dialect)
    assert "dialect" not in copy.read_text()
    assert verdict_of(copy).ok, broken_link(copy)


def test_an_answer_in_a_dialect_without_a_reader_fails_verify_naming_it(
    run_named: Any, tmp_path: Path
) -> None:
    copy = tampered(run_named("seed_run"), tmp_path / "chat.jsonl", _chat_answer)
    assert broken_link(copy) == ("model_response", UNKNOWN)
    proc = run_cli("verify", str(copy))
    assert proc.returncode == 1
    assert UNKNOWN in proc.stdout
