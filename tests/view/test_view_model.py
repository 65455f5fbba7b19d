"""Transcript → diagram data, on real transcripts: lanes, arrows, sections, call frames, states."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from toolrelay.verify import load_run, verify
from toolrelay.verify.verdict import Finding, Verdict
from toolrelay.view.build import body_of, build_trace
from toolrelay.view.layout import CALLS_OPEN, ROW_BUDGET
from toolrelay.view.model import CallGroup, Row, Trace
from toolrelay.view.render import embed_json, render_html
from toolrelay.view.rows import describe

from .conftest import BIG_CALLS_PER_TURN, BIG_TURNS, LONG_TURNS
from .helpers import message_events, read_as_the_page_does, read_events


def _trace(path: Path, verdict: Verdict | None = None) -> tuple[Trace, list[dict[str, Any]]]:
    events = read_events(path)
    return build_trace(events, verdict, source=str(path)), events


def _call(trace: Trace, call_id: str) -> CallGroup:
    return next(c for g in trace.groups for c in g.calls() if c.call_id == call_id)


def test_lanes_are_user_app_model_and_one_per_server(seed_transcript: Path) -> None:
    trace, _ = _trace(seed_transcript)
    assert [(lane.key, lane.title) for lane in trace.lanes] == [
        ("user", "User"), ("app", "App"), ("model", "Model"), ("server:fs", "fs")]
    assert trace.lanes[2].note == "offline"
    assert trace.lanes[3].note == "toolrelay-files 0.1.0"


def test_every_wire_message_is_one_arrow_in_seq_order(seed_transcript: Path) -> None:
    trace, events = _trace(seed_transcript)
    arrows = [row for row in trace.rows() if row.message]
    assert [row.seq for row in arrows] == [e["seq"] for e in message_events(events)]
    assert all(row.source != row.target for row in arrows)
    assert len(trace.rows()) == len(events)  # nothing recorded is left out


def test_sections_follow_the_seed_order(seed_transcript: Path) -> None:
    trace, _ = _trace(seed_transcript)
    assert [g.title for g in trace.groups] == [
        "Setup · connect, discover, declare", "Turn 1", "Turn 2", "Shutdown"]
    setup = [(row.kind, row.label) for row in trace.groups[0].rows()]
    assert ("mcp_request", "initialize") in setup and ("mcp_request", "tools/list") in setup
    turn1 = trace.groups[1]
    assert [item.kind for item in turn1.items if isinstance(item, Row)] == [
        "run_start", "model_request", "model_response"]
    (call,) = turn1.calls()
    # the file server asks for toolrelay's roots before it reads: drawn inside the call
    assert [row.stage for row in call.rows] == ["parse", "route", "call", "ask", "reply", "result", "outcome",
                                                "feedback"]
    asked, replied = call.rows[3:5]
    assert (asked.label, asked.source, replied.label, replied.target) == (
        "roots/list", "server:fs", "reply · 1 root(s)", "server:fs")
    assert (call.alias, call.target, call.mcp_id, call.connection, call.status) == (
        "fs__read_text_file", "fs / read_text_file", 3, "fs#1", "ok")
    assert [row.kind for row in trace.groups[2].rows()] == ["model_request", "model_response", "run_end"]


def test_arrows_point_between_the_right_lanes_with_ids_and_durations(seed_transcript: Path) -> None:
    trace, events = _trace(seed_transcript)
    by_seq = {row.seq: row for row in trace.rows()}
    call_request = next(e for e in events if e["kind"] == "mcp_request" and e["method"] == "tools/call")
    call_response = next(e for e in events if e["kind"] == "mcp_response" and e["method"] == "tools/call")
    model_response = next(e for e in events if e["kind"] == "model_response")
    request_row = by_seq[call_request["seq"]]
    assert (request_row.source, request_row.target) == ("app", "server:fs")
    assert request_row.label == "tools/call read_text_file"
    assert {(b.kind, b.text) for b in request_row.badges} == {
        ("call", "call_offline_0001"), ("mcp", "id 3"), ("server", "fs#1")}
    assert (by_seq[call_response["seq"]].source, by_seq[call_response["seq"]].target) == ("server:fs", "app")
    assert by_seq[call_response["seq"]].elapsed == call_response["elapsed"]
    assert by_seq[model_response["seq"]].elapsed == model_response["elapsed"]
    assert (by_seq[model_response["seq"]].source, by_seq[model_response["seq"]].target) == ("model", "app")


def test_failures_are_marked_by_class(failing_transcript: Path) -> None:
    trace, events = _trace(failing_transcript)
    statuses = {c.call_id: (c.status, c.state) for g in trace.groups for c in g.calls()}
    assert statuses == {
        "call_offline_0001": ("ok", "ok"),
        "call_offline_0002": ("tool_error", "failed"),
        "call_offline_0003": ("invalid_arguments", "failed"),
        "call_offline_0004": ("unknown_tool", "failed"),
        "call_offline_0005": ("tool_error", "failed"),
    }
    by_seq = {row.seq: row for row in trace.rows()}
    error_result = next(e for e in events
                        if e["kind"] == "mcp_response" and e.get("call_id") == "call_offline_0002")
    assert by_seq[error_result["seq"]].state == "failed"
    assert by_seq[error_result["seq"]].label == "result · isError"
    http_500 = next(e for e in events if e["kind"] == "model_response" and e["status"] == 500)
    assert by_seq[http_500["seq"]].state == "failed"
    parsed = next(e for e in events if e["kind"] == "call_parsed" and e["call_id"] == "call_offline_0003")
    assert by_seq[parsed["seq"]].state == "failed"
    assert trace.run.calls == 5 and trace.run.failed_calls == 4


def test_a_json_rpc_error_response_is_a_failed_arrow() -> None:
    record = {"seq": 7, "time": 1.0, "kind": "mcp_response", "direction": "in", "server": "fs",
              "connection": 2, "mcp_id": 9, "method": "tools/call", "call_id": "call_1", "elapsed": 0.01,
              "message": {"jsonrpc": "2.0", "id": 9, "error": {"code": -32602, "message": "Unknown tool: x"}}}
    row = describe(record, 0.0)
    assert (row.state, row.label, row.detail) == ("failed", "error -32602", "Unknown tool: x")
    assert ("server", "fs#2") in {(b.kind, b.text) for b in row.badges}


def test_panel_bodies_are_the_exact_recorded_bodies(seed_transcript: Path) -> None:
    trace, events = _trace(seed_transcript)
    for event in events:
        shown = json.loads(trace.records[event["seq"]])
        if event["kind"] in ("model_request", "model_response"):
            assert shown == event["body"]
        elif event["kind"].startswith("mcp_"):
            assert shown == event["message"]
        elif event["kind"] == "feedback":
            assert shown == event["item"]
        assert shown == body_of(event)


def test_failed_findings_land_on_the_rows_they_name(seed_transcript: Path) -> None:
    _, events = _trace(seed_transcript)
    feedback = next(e for e in events if e["kind"] == "feedback")
    broken = Finding(link="feedback", ok=False, message="output differs", call_id=feedback["call_id"],
                     seqs=(feedback["seq"],))
    holds = Finding(link="parse", ok=True, message="parsed", seqs=(feedback["seq"] - 5,))
    trace = build_trace(events, Verdict(findings=[holds, broken], broken=broken, finished=True))
    noted = {row.seq: [(n.link, n.message) for n in row.links] for row in trace.rows() if row.links}
    assert noted == {feedback["seq"]: [("feedback", "output differs")]}
    assert trace.verdict is not None
    assert (trace.verdict.ok, trace.verdict.broken_link, trace.verdict.broken_seqs) == (
        False, "feedback", [feedback["seq"]])
    assert trace.groups[1].broken and trace.groups[1].calls()[0].broken


def test_a_large_run_starts_mostly_collapsed(big_transcript: Path) -> None:
    trace, _ = _trace(big_transcript)
    turns = [g for g in trace.groups if g.kind == "turn"]
    assert len(turns) == BIG_TURNS + 1
    assert sum(len(g.calls()) for g in turns) == BIG_TURNS * BIG_CALLS_PER_TURN
    assert trace.groups[0].expanded and turns[0].expanded
    assert not any(g.expanded for g in turns[1:])
    open_calls = [c for c in turns[0].calls() if c.expanded]
    assert len(open_calls) == CALLS_OPEN and open_calls == turns[0].calls()[:CALLS_OPEN]
    drawn = sum(len(c.rows) + 1 if isinstance(c, CallGroup) and c.expanded else 1
                for g in trace.groups if g.expanded for c in g.items)
    assert drawn <= ROW_BUDGET


def test_embedded_json_cannot_close_its_script_element() -> None:
    value = {"text": "</script><script>alert(1)</script> <!-- & \u2028"}
    embedded = embed_json(value)
    assert "<" not in embedded and ">" not in embedded and "&" not in embedded
    assert json.loads(embedded) == value


@pytest.mark.parametrize("fixture", ["seed_transcript", "failing_transcript"])
def test_the_page_inlines_everything(fixture: str, request: pytest.FixtureRequest) -> None:
    trace, _ = _trace(request.getfixturevalue(fixture))
    page = render_html(trace)
    assert page.count("<script") == 2 and page.count("</script>") == 2  # the data, the code
    head, _, rest = page.partition('<script type="application/json" id="trace-data">')
    data, _, tail = rest.partition("</script>")
    assert json.loads(data) == json.loads(json.dumps(trace.to_dict(), default=str))
    shell = head + tail
    assert "<link rel=\"stylesheet\"" not in shell and " src=" not in shell and "url(" not in shell
    assert "default-src 'none'" in shell


def test_the_embedded_data_is_every_field_of_the_trace(failing_transcript: Path) -> None:
    trace, _ = _trace(failing_transcript)
    whole = _without_streamed(dataclasses.asdict(trace))
    del whole["record_keys"]  # what the page shares records by, not shown
    assert read_as_the_page_does(trace.to_dict()) == whole  # the same data, without asdict's deep copy


def _without_streamed(value: Any) -> Any:
    """``value`` without the rows' ``streamed`` text, which the page reads from the records."""
    if isinstance(value, dict):
        return {key: _without_streamed(item) for key, item in value.items()
                if not (key == "streamed" and value.get("type") == "row")}
    return [_without_streamed(item) for item in value] if isinstance(value, list) else value


def test_a_long_replay_run_embeds_each_record_as_what_changed(long_replay_transcript: Path) -> None:
    """Each request repeats the context so far: whole, the page's records would grow with
    the square of the run; shared with the record before them, they stay near the
    transcript's size, and join back to the exact texts."""
    trace, events = _trace(long_replay_transcript)
    data = trace.to_dict()
    requests = [e["seq"] for e in events if e["kind"] == "model_request"]
    assert len(requests) == LONG_TURNS + 1
    assert all(isinstance(data["records"][seq], list) for seq in requests[1:])  # each shared
    whole = len(embed_json([trace.records[seq] for seq in requests]))
    assert len(embed_json([data["records"][seq] for seq in requests])) < whole / 5
    assert len(embed_json(data["records"])) < long_replay_transcript.stat().st_size
    assert read_as_the_page_does(data)["records"] == trace.records
    last = next(e for e in reversed(events) if e["kind"] == "model_request")
    assert json.loads(trace.records[last["seq"]]) == last["body"]
    assert len(last["body"]["input"]) == 1 + 4 * LONG_TURNS  # the task, then each turn's calls and outputs


@pytest.mark.parametrize("junk", [2**70, "lone \ud800 surrogate", float("nan")])
def test_values_the_fast_encoder_refuses_still_make_a_page(junk: Any, failing_transcript: Path) -> None:
    """orjson writes the page's data; an integer beyond 64 bits or a lone surrogate (a
    tampered transcript can hold either) takes json's way instead, and a NaN is written
    as null (json's NaN would stop the page's JSON.parse)."""
    events = read_events(failing_transcript)
    for event in events:
        if event["kind"] in ("mcp_request", "mcp_response"):
            event["mcp_id"], event["elapsed"] = junk, junk
    trace = build_trace(events)
    page = render_html(trace)
    page.encode("utf-8")  # what write_html writes
    data = page.partition('id="trace-data">')[2].partition("</script>")[0]
    drawn = json.loads(data)
    call = next(row for group in drawn["groups"] for item in group["items"] if item["type"] == "call"
                for row in item["rows"] if row["kind"] == "mcp_request")
    if isinstance(junk, float):
        assert call["elapsed"] is None and "NaN" not in data
    else:
        assert json.dumps(junk) in data  # as json writes it, escaped (the page is UTF-8)
        assert read_as_the_page_does(drawn) == read_as_the_page_does(json.loads(embed_json(trace.to_dict())))


@pytest.mark.parametrize("junk", ["garbage", None, [1, "two"], {"odd": True}, 7, True])
def test_a_transcript_with_fields_of_the_wrong_type_still_draws(junk: Any, failing_transcript: Path) -> None:
    """A tampered transcript must render so the reader can see what is wrong with it."""
    events = read_events(failing_transcript)
    for event in events:
        for key in event:
            if key not in ("seq", "kind"):  # the reader itself insists on these two
                event[key] = junk
    trace = build_trace(events)
    assert len(trace.rows()) == len(events)
    assert "</script>" not in embed_json(trace.to_dict())
    render_html(trace)


def test_the_refused_fallback_initialize_of_a_healthy_run_is_expected_not_failed(
    late_start_transcript: Path,
) -> None:
    events = read_events(late_start_transcript)
    verdict = verify(load_run(late_start_transcript))
    assert verdict.ok and verdict.finished
    trace = build_trace(events, verdict, source=str(late_start_transcript))
    setup = trace.groups[0]
    assert setup.kind == "setup" and setup.state == "ok"
    fallback = [row for row in setup.rows() if row.state != "ok"]
    assert [(row.label, row.state) for row in fallback] == [
        ("fallback initialize (sent beside a server/discover not yet answered)", "expected"),
        ("fallback initialize refused (expected: the server speaks 2026-07-28)", "expected"),
    ]
    assert fallback[1].detail.startswith("error -32022: ")
    assert "failed" not in {row.state for group in trace.groups for row in group.rows()}


def test_a_refused_initialize_on_a_connection_that_never_went_modern_stays_failed(
    late_start_transcript: Path,
) -> None:
    events = read_events(late_start_transcript)
    for event in events:  # the same refusal, on a connection the record says spoke 2025-11-25
        if event["kind"] == "server_ready":
            event["protocol_version"] = "2025-11-25"
    refused = next(e for e in events if e["kind"] == "mcp_response" and e.get("method") == "initialize")
    row = next(r for g in build_trace(events).groups for r in g.rows() if r.seq == refused["seq"])
    assert (row.label, row.state) == ("error -32022", "failed")


def test_the_header_shows_the_runs_token_usage_and_nothing_for_a_run_without(
    late_start_transcript: Path,
) -> None:
    events = read_events(late_start_transcript)
    used = [e["body"]["usage"] for e in events if e["kind"] == "model_response"]
    total = {key: sum(u[key] for u in used) for key in ("input_tokens", "output_tokens", "total_tokens")}
    cached = sum(u["input_tokens_details"]["cached_tokens"] for u in used)
    reasoning = sum(u["output_tokens_details"]["reasoning_tokens"] for u in used)
    assert build_trace(events).run.tokens == (
        f"{total['input_tokens']} in ({cached} cached), "
        f"{total['output_tokens']} out ({reasoning} reasoning), {total['total_tokens']} total")
    for event in events:  # a transcript from before usage was recorded
        event.pop("usage", None)
    assert build_trace(events).run.tokens == ""


def test_a_transcript_without_dialects_draws_as_responses_and_an_unknown_one_says_so(
    seed_transcript: Path,
) -> None:
    events = read_events(seed_transcript)
    drawn = [(r.kind, r.label, r.detail, r.state) for r in build_trace(events, None, source="t").rows()]
    old = [{k: v for k, v in e.items() if k != "dialect"} for e in events]
    assert [(r.kind, r.label, r.detail, r.state) for r in build_trace(old, None, source="t").rows()] == drawn
    answer = next(e for e in events if e["kind"] == "model_response")
    row = describe({**answer, "dialect": "chat_completions"}, 0.0)
    assert (row.label, row.state) == ("HTTP 200", "failed")
    assert row.detail.startswith("the model dialect 'chat_completions' has no reader in this toolrelay")
