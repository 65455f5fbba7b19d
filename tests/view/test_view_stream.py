"""A streamed run in the trace: its events folded, and a call that started mid-stream drawn
inside the model response's span (from its request to its response).

The run is a real run of the loop against a stream that waits until the tool call has
reached the server (``verify/stream_runs.py``), with hundreds of text deltas after it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolrelay.verify import load_run, verify
from toolrelay.view import build_trace
from toolrelay.view.model import CallGroup, Row, StreamGroup
from verify.stream_runs import call_item, held_run, message_item, sse_turn

from .helpers import open_trace, read_events, view

LONG_TEXT = "I am reading the file while I write this. " * 60  # 630 deltas of four characters


@pytest.fixture(scope="module")
def streamed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("streamed")
    look = call_item("call_look", "box__look", {"n": 1})
    turns = [sse_turn("resp_1", [look, message_item(LONG_TEXT, "msg_1")], hold_after=0),
             sse_turn("resp_2", [message_item("all done", "msg_2")])]
    transcript, result = held_run(folder, turns)
    assert result.completed
    return transcript


def _turn_one(transcript: Path) -> list[Row | CallGroup | StreamGroup]:
    run = load_run(transcript)
    trace = build_trace(run.events, verify(run), source=str(transcript))
    return next(g for g in trace.groups if g.turn == 1).items


def test_the_early_call_sits_between_its_responses_request_and_response(streamed: Path) -> None:
    items = _turn_one(streamed)
    kinds = [item.kind if isinstance(item, Row) else item.type for item in items]
    request, response = kinds.index("model_request"), kinds.index("model_response")
    call = next(i for i, item in enumerate(items) if isinstance(item, CallGroup))
    assert request < call < response
    assert kinds[request + 1] == "stream" and kinds[call + 1] == "stream"  # streamed before and after it
    assert [items[request].during, items[call].during, items[response].during] == ["start", "inside", "end"]


def test_hundreds_of_stream_events_fold_into_a_few_closed_lines(streamed: Path) -> None:
    items = _turn_one(streamed)
    streams = [item for item in items if isinstance(item, StreamGroup)]
    assert sum(len(s.rows) for s in streams) > 600
    assert len(streams) == 2 and not any(s.expanded for s in streams)
    assert streams[1].summary.startswith(f"{len(streams[1].rows)} stream events · #")
    assert streams[1].text.startswith("I am reading the file while I write this.")


def test_the_page_draws_the_call_inside_the_span_and_opens_a_stream_on_click(
    browser: Any, streamed: Path, tmp_path: Path
) -> None:
    html = tmp_path / "streamed.html"
    assert view(str(streamed), "-o", str(html)).returncode == 0
    opened = open_trace(browser, html)
    page = opened.page
    turn = page.locator('section[data-group="turn-1"]')
    assert turn.locator(".row").count() < 20  # 600+ events, a few lines until opened
    request = turn.locator('.row[data-kind="model_request"]').bounding_box()
    response = turn.locator('.row[data-kind="model_response"]').bounding_box()
    call = turn.locator('.call[data-call-id="call_look"]')
    box = call.bounding_box()
    assert request is not None and response is not None and box is not None
    assert request["y"] < box["y"] < response["y"]
    assert "during-inside" in (call.get_attribute("class") or "")
    span = call.evaluate("f => getComputedStyle(f, '::before').width")
    assert span == "10px"  # the response's span is drawn beside the call
    stream = turn.locator(".stream").nth(1)
    stream.locator(".stream-head").click()
    events = len([e for e in read_events(streamed) if e["kind"] == "model_stream" and e["turn"] == 1])
    assert turn.locator(".stream .row").count() > 600 and events > 600
    assert opened.errors == []
