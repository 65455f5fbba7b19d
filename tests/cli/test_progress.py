"""The progress lines on stderr: a call whose output the model did not get whole is marked
on its own line and warned about, verbose or not; a call of a run is said as it starts and
as it ends, marked early when it started while its response streamed."""

from __future__ import annotations

import io

from toolrelay.cli.progress import ProgressPrinter
from toolrelay.events import (
    CallOutcomeEvent,
    CallParsed,
    FeedbackEvent,
    ModelRequestEvent,
    ModelResponseEvent,
    Notice,
    RunEndEvent,
    RunStartEvent,
)

CUT = "image (image/png, 300000 bytes) dropped: over --media-budget 100000 bytes"


def outcome(call_id: str, alias: str) -> CallOutcomeEvent:
    record = {"status": "ok", "alias": alias, "call_id": call_id, "server": "media", "tool": alias[7:],
              "mcp_id": 3, "elapsed": 0.012}
    return CallOutcomeEvent(call_id=call_id, outcome=record)


def feedback(call_id: str, *cut: str) -> FeedbackEvent:
    return FeedbackEvent(call_id=call_id, item={"call_id": call_id}, cut=list(cut))


def printed(*events: object, verbose: bool = True) -> list[str]:
    stream = io.StringIO()
    printer = ProgressPrinter(stream, verbose=verbose)
    printer(RunStartEvent(run_id="r", model="m", endpoint="e", context_mode="replay", strict=False, task="t"))
    for event in events:
        printer(event)  # type: ignore[arg-type]
    printer(RunEndEvent(status="completed", reason="done", turns=2))
    return stream.getvalue().splitlines()


def test_a_cut_output_marks_its_call_line_and_is_warned_about() -> None:
    lines = printed(
        outcome("c1", "media__photo"), feedback("c1", CUT), outcome("c2", "media__note"), feedback("c2")
    )
    assert lines[:3] == [
        "  call media__photo → media/photo · mcp id 3 · 12 ms · ok · the model did not get all of it",
        f"! media__photo: {CUT}",
        "  call media__note → media/note · mcp id 3 · 12 ms · ok",
    ]


def test_the_warning_is_printed_without_verbose_progress_too() -> None:
    assert printed(outcome("c1", "media__photo"), feedback("c1", CUT), verbose=False) == [
        f"! media__photo: {CUT}"
    ]


def test_a_call_line_without_feedback_is_still_printed() -> None:
    """A call cancelled mid-run gets no feedback: its line must not wait forever."""
    lines = printed(outcome("c1", "media__photo"))
    assert lines[:-1] == ["  call media__photo → media/photo · mcp id 3 · 12 ms · ok"]  # then the run's end


def test_an_info_notice_is_progress_not_a_warning() -> None:
    loud, quiet = io.StringIO(), io.StringIO()
    notice = Notice(level="info", text="server h: the stream of request 3 was resumed", server="h")
    ProgressPrinter(loud, verbose=True)(notice)
    ProgressPrinter(quiet, verbose=False)(notice)
    assert loud.getvalue() == "· server h: the stream of request 3 was resumed\n"
    assert quiet.getvalue() == ""


def parsed(call_id: str, alias: str) -> CallParsed:
    return CallParsed(call_id=call_id, alias=alias, arguments_text="{}", arguments={})


REQUEST = ModelRequestEvent(turn=1, url="u", body={"model": "m"})
RESPONSE = ModelResponseEvent(turn=1, status=200, body={}, elapsed=0.5, streamed=True)


def test_a_call_ending_while_its_response_streams_is_said_at_once_marked_early() -> None:
    """Its feedback comes only once the response is whole: the end line does not wait for
    it, and the cut is marked on a line of the call's own when it comes."""
    lines = printed(REQUEST, parsed("c1", "media__photo"), outcome("c1", "media__photo"), RESPONSE,
                    feedback("c1", CUT))
    assert lines[:-1] == [
        "turn 1 → model m",
        "  call media__photo started early, while the response streams",
        "  call media__photo → media/photo · early · mcp id 3 · 12 ms · ok",
        "turn 1 ← HTTP 200 in 500 ms",
        "  call media__photo · the model did not get all of it",
        f"! media__photo: {CUT}",
    ]


def test_an_early_call_ending_after_its_response_waits_for_its_feedback() -> None:
    lines = printed(REQUEST, parsed("c1", "media__photo"), RESPONSE, parsed("c2", "media__note"),
                    outcome("c2", "media__note"), outcome("c1", "media__photo"),
                    feedback("c1"), feedback("c2"))
    assert lines[:-1] == [
        "turn 1 → model m",
        "  call media__photo started early, while the response streams",
        "turn 1 ← HTTP 200 in 500 ms",
        "  call media__note started",
        "  call media__photo → media/photo · early · mcp id 3 · 12 ms · ok",
        "  call media__note → media/note · mcp id 3 · 12 ms · ok",
    ]
