"""The progress lines on stderr: a call whose output the model did not get whole is marked
on its own line and warned about, verbose or not."""

from __future__ import annotations

import io

from toolrelay.cli.progress import ProgressPrinter
from toolrelay.events import CallOutcomeEvent, FeedbackEvent, Notice, RunEndEvent, RunStartEvent

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
