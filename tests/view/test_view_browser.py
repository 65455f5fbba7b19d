"""The trace page in headless Chromium: what a reader sees and clicks, on real runs.

Every page here is written by the real ``toolrelay view`` command from a real run's
transcript and opened from disk; the tests watch every request the page makes.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from toolrelay.verify import load_run, verify

from .conftest import BIG_CALLS_PER_TURN, BIG_TURNS, EVIL_TEXT, WIDE_TEXT
from .helpers import (
    ARTIFACTS,
    OpenedPage,
    message_events,
    open_trace,
    read_events,
    screenshot,
    view,
    write_events,
)

FAILED_RED = "rgb(207, 34, 46)"  # --failed in trace.css


def _page(browser: Any, transcript: Path, html: Path) -> OpenedPage:
    proc = view(str(transcript), "-o", str(html))
    assert proc.returncode == 0, proc.stderr
    return open_trace(browser, html)


def _panel_json(opened: OpenedPage, seq: int) -> Any:
    opened.page.click(f'.row[data-seq="{seq}"]')
    opened.page.wait_for_selector("#panel:not([hidden])")
    return json.loads(opened.page.text_content("#panel-json") or "")


def _assert_clean(opened: OpenedPage) -> None:
    assert opened.foreign_requests() == [], "the page fetched something"
    assert opened.errors == [], "the page logged errors (a CSP violation would show here)"


def test_seed_run_draws_lanes_and_one_arrow_per_message(browser: Any, seed_transcript: Path,
                                                        tmp_path: Path) -> None:
    opened = _page(browser, seed_transcript, tmp_path / "seed.html")
    page = opened.page
    assert page.locator(".lanes .lane-title").all_text_contents() == ["User", "App", "Model", "fs"]
    events = read_events(seed_transcript)
    drawn = [int(s) for s in page.locator(".row.msg").evaluate_all("rows => rows.map(r => r.dataset.seq)")]
    assert drawn == [e["seq"] for e in message_events(events)]
    assert page.locator(".row").count() == len(events)
    assert page.locator(".group-title").all_text_contents() == [
        "Setup · connect, discover, declare", "Turn 1", "Turn 2", "Shutdown"]
    call = page.locator('.call[data-call-id="call_offline_0001"] .call-head')
    assert call.locator(".badge").all_text_contents() == ["call_offline_0001", "id 3", "fs#1"]
    assert page.locator(".verdict.ok").count() == 1
    screenshot(page, ARTIFACTS / "trace.png")
    _assert_clean(opened)


def test_clicking_an_arrow_shows_that_messages_exact_json(browser: Any, seed_transcript: Path,
                                                         tmp_path: Path) -> None:
    opened = _page(browser, seed_transcript, tmp_path / "seed.html")
    events = read_events(seed_transcript)
    for event in message_events(events):
        expected = event["body"] if event["kind"].startswith("model_") else event["message"]
        assert _panel_json(opened, event["seq"]) == expected, event["kind"]
        assert opened.page.text_content("#panel-kind") == event["kind"]
        # indented in the page from the exact text, as json.dumps(indent=2) lays it out
        shown = opened.page.text_content("#panel-json")
        assert shown == json.dumps(expected, indent=2, ensure_ascii=False), event["kind"]
    assert opened.page.locator(".row.selected").count() == 1
    opened.page.keyboard.press("Escape")
    assert opened.page.locator("#panel").is_hidden()
    call = next(e for e in events if e["kind"] == "mcp_request" and e["method"] == "tools/call")
    opened.page.focus(f'.row[data-seq="{call["seq"]}"]')
    opened.page.keyboard.press("Enter")  # rows are reachable from the keyboard too
    assert json.loads(opened.page.text_content("#panel-json") or "") == call["message"]
    assert opened.page.text_content("#panel-where") == (
        f" · App → fs · #{call['seq']} · +{call['time'] - events[0]['time']:.3f} s")
    _assert_clean(opened)


def test_a_long_replay_runs_records_join_back_to_their_exact_json(browser: Any, long_replay_transcript: Path,
                                                                 tmp_path: Path) -> None:
    """The page holds each request as what changed against the one before it: opened last
    to first (a cold chain each time) and first to last, every arrow shows its whole
    message, characters beyond the BMP in place."""
    opened = _page(browser, long_replay_transcript, tmp_path / "long.html")
    events = read_events(long_replay_transcript)
    shown = [e for e in message_events(events) if e["kind"] in ("model_request", "mcp_response")]
    assert any(WIDE_TEXT.strip() in json.dumps(e.get("message"), ensure_ascii=False) for e in shown)
    for event in [*reversed(shown), *shown]:
        expected = event["body"] if event["kind"] == "model_request" else event["message"]
        assert _panel_json(opened, event["seq"]) == expected, event["seq"]
        assert opened.page.text_content("#panel-json") == json.dumps(expected, indent=2, ensure_ascii=False)
    _assert_clean(opened)


def test_a_run_cut_short_renders_as_unfinished(browser: Any, seed_transcript: Path, tmp_path: Path) -> None:
    events = read_events(seed_transcript)
    cut = next(i for i, e in enumerate(events) if e["kind"] == "mcp_request" and e["method"] == "tools/call")
    prefix = write_events(tmp_path / "killed.jsonl", events[: cut + 1])  # killed while the tool ran
    verdict = verify(load_run(prefix))
    assert not verdict.finished
    opened = _page(browser, prefix, tmp_path / "killed.html")
    page = opened.page
    assert page.locator(".facts .status dd").text_content() == "unfinished"
    unfinished = "unfinished: " + "; ".join(verdict.unfinished)
    assert page.locator(".verdict .unfinished").text_content() == unfinished
    assert page.locator(".row.msg").count() == len(message_events(events[: cut + 1]))
    assert page.locator('.call[data-call-id="call_offline_0001"] .outcome').text_content() == "no outcome"
    _assert_clean(opened)


def test_failed_calls_and_error_responses_are_red(browser: Any, failing_transcript: Path,
                                                 tmp_path: Path) -> None:
    opened = _page(browser, failing_transcript, tmp_path / "failing.html")
    page = opened.page
    frames = page.locator(".call")
    states = frames.evaluate_all(
        "fs => fs.map(f => [f.dataset.callId, f.classList.contains('state-failed'),"
        " f.querySelector('.outcome').textContent])")
    assert states == [
        ["call_offline_0001", False, "ok"],
        ["call_offline_0002", True, "tool_error"],
        ["call_offline_0003", True, "invalid_arguments"],
        ["call_offline_0004", True, "unknown_tool"],
        ["call_offline_0005", True, "tool_error"],
    ]
    events = read_events(failing_transcript)
    is_error = next(e for e in events if e["kind"] == "mcp_response" and e["call_id"] == "call_offline_0002")
    http_500 = next(e for e in events if e["kind"] == "model_response" and e["status"] == 500)
    ok_result = next(e for e in events if e["kind"] == "mcp_response" and e["call_id"] == "call_offline_0001")
    colour = "s => getComputedStyle(document.querySelector(`.row[data-seq='${s}'] .arrow`)).color"
    assert page.evaluate(colour, is_error["seq"]) == FAILED_RED
    assert page.evaluate(colour, http_500["seq"]) == FAILED_RED
    assert page.evaluate(colour, ok_result["seq"]) != FAILED_RED
    assert page.locator(".facts .has-failed dd").text_content() == "5 · 4 failed"
    _assert_clean(opened)


def test_markup_in_tool_output_is_shown_as_text_and_never_run(browser: Any, failing_transcript: Path,
                                                             tmp_path: Path) -> None:
    opened = _page(browser, failing_transcript, tmp_path / "failing.html")
    page = opened.page
    assert page.evaluate("window.__pwned") is None
    assert page.locator("script").count() == 2 and page.locator("img").count() == 0
    result = next(e for e in read_events(failing_transcript)
                  if e["kind"] == "mcp_response" and e["call_id"] == "call_offline_0001")
    detail = page.locator(f'.row[data-seq="{result["seq"]}"] .detail').text_content() or ""
    assert "</script><script>window.__pwned = 1</script>" in detail
    shown = _panel_json(opened, result["seq"])
    assert shown["result"]["content"][0]["text"] == EVIL_TEXT
    assert page.evaluate("window.__pwned") is None and page.locator("img").count() == 0
    _assert_clean(opened)


def test_a_thousand_calls_render_collapsed_and_expand_on_click(browser: Any, big_transcript: Path,
                                                              tmp_path: Path) -> None:
    html = tmp_path / "big.html"
    started = time.monotonic()
    opened = _page(browser, big_transcript, html)
    page = opened.page
    assert time.monotonic() - started < 30
    assert page.locator(".group.g-turn").count() == BIG_TURNS + 1
    assert page.evaluate("document.getElementsByTagName('*').length") < 5000
    turn5 = page.locator('section[data-group="turn-5"]')
    assert turn5.locator(".row").count() == 0
    turn5.locator(".group-head").click()
    assert turn5.locator(".group-head").get_attribute("aria-expanded") == "true"
    assert turn5.locator(".call").count() == BIG_CALLS_PER_TURN
    open_frames = turn5.locator(".call.open").count()
    assert 0 < open_frames < BIG_CALLS_PER_TURN
    shut_id = turn5.locator(".call:not(.open)").first.get_attribute("data-call-id")
    shut = turn5.locator(f'.call[data-call-id="{shut_id}"]')
    assert shut.locator(".row").count() == 0
    shut.locator(".call-head").click()
    assert shut.locator(".row.msg").count() == 2  # its tools/call request and response
    assert shut.locator(".row").count() == 6
    turn5.locator(".group-head").click()
    assert turn5.locator(".row").count() == 0
    _assert_clean(opened)


def _tampered_copy(demo: Path, target: Path, change: str) -> Path:
    """A copy of the demo's transcript (or, for ``attachment``, of its whole folder) with one lie."""
    if change == "attachment":  # the folder's mcp_response.json answers with another id
        folder = Path(shutil.copytree(demo, target.with_suffix("")))
        answer = json.loads((folder / "mcp_response.json").read_text(encoding="utf-8"))
        answer["id"] = 99
        (folder / "mcp_response.json").write_text(json.dumps(answer, indent=2), encoding="utf-8")
        return folder
    events = read_events(demo / "transcript.jsonl")
    if change == "feedback":
        feedback = next(e for e in events if e["kind"] == "feedback")
        feedback["item"]["output"] = "line 1\nthe tool never said this\n"
    else:  # a wrong MCP id on the tools/call response
        response = next(e for e in events if e["kind"] == "mcp_response" and e["method"] == "tools/call")
        response["message"]["id"] = 99
    return write_events(target, events)


@pytest.mark.parametrize("change", ["feedback", "mcp_id", "attachment"])
def test_a_tampered_run_shows_its_broken_link(change: str, browser: Any, seed_demo: Path,
                                              tmp_path: Path) -> None:
    tampered = _tampered_copy(seed_demo, tmp_path / f"tampered-{change}.jsonl", change)
    verdict = verify(load_run(tampered))
    assert verdict.broken is not None
    opened = _page(browser, tampered, tmp_path / "tampered.html")
    page = opened.page
    assert page.locator(".verdict.broken > .link-name").text_content() == verdict.broken.link
    assert verdict.broken.message in (page.locator(".verdict-message").text_content() or "")
    marked = page.locator(".row.broken").evaluate_all("rows => rows.map(r => Number(r.dataset.seq))")
    assert set(verdict.broken.seqs) <= set(marked)
    for seq in verdict.broken.seqs:
        notes = page.locator(f'.row[data-seq="{seq}"] .link-note .link-name').all_text_contents()
        assert verdict.broken.link in notes
    failures = verdict.broken_findings()
    listed = page.locator(".verdict .failures li").all_text_contents()
    assert listed == [f"{f.link}{f.message}" for f in failures[1:]]
    page.click(".show-link")
    assert page.locator(".row.selected").get_attribute("data-seq") == str(verdict.broken.seqs[0])
    screenshot(page, ARTIFACTS / f"trace-tampered-{change}.png")
    _assert_clean(opened)


def test_a_healthy_run_with_a_refused_fallback_initialize_has_no_red_in_setup(
    browser: Any, late_start_transcript: Path, tmp_path: Path
) -> None:
    opened = _page(browser, late_start_transcript, tmp_path / "late.html")
    page = opened.page
    setup = page.locator("section.g-setup")
    assert "state-failed" not in (setup.get_attribute("class") or "")
    assert setup.locator(".row.state-failed").count() == 0
    summary = "getComputedStyle(document.querySelector('section.g-setup .group-summary')).color"
    assert page.evaluate(summary) != FAILED_RED
    refused = setup.locator(".row.state-expected", has_text="fallback initialize refused")
    assert refused.count() == 1
    assert "(expected: the server speaks 2026-07-28)" in (refused.text_content() or "")
    assert refused.locator(".arrow").evaluate("a => getComputedStyle(a).color") != FAILED_RED
    assert float(refused.evaluate("r => getComputedStyle(r).opacity")) < 1  # dimmed, not hidden
    assert page.locator(".facts dt", has_text="tokens").count() == 1  # the run's usage, in the header
    _assert_clean(opened)
