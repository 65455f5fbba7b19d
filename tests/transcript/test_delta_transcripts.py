"""Request bodies recorded as deltas: rebuilt exactly, checked by their digests, and a
tampered delta caught exactly as the same edit of a whole body is; transcripts written
before deltas (whole bodies) still read and verify."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from testkit.transcripts import read_call, replay_run, whole_copy
from toolrelay.client.config import builtin_file_server
from toolrelay.errors import UsageError
from toolrelay.relay.loop import RunLimits
from toolrelay.runner import RunOptions, run_async
from toolrelay.transcript.delta import BodyDigests, apply_delta, body_delta, wire_bytes, wire_digest
from toolrelay.transcript.reader import read_transcript
from toolrelay.transcript.shared import resolve
from toolrelay.transcript.writer import TranscriptWriter
from toolrelay.verify import load_run, verify

OLD = Path(__file__).resolve().parent.parent / "data" / "transcripts" / "full_bodies_before_deltas.jsonl"
"""Written by toolrelay before deltas (main at 116cd8e): three turns, three calls, whole bodies."""
Event = dict[str, Any]


_read = read_call


@pytest.fixture(scope="module")
def delta_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real replay-mode run of four turns (two, one and two calls, then the answer)."""
    return replay_run(tmp_path_factory.mktemp("delta-run"))


def _lines(path: Path) -> list[Event]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, events: list[Event]) -> Path:
    text = "".join(json.dumps(event, ensure_ascii=False) + "\n" for event in events)
    path.write_text(text, encoding="utf-8")
    return path


def _requests(events: list[Event]) -> list[Event]:
    return [event for event in events if event["kind"] == "model_request"]


def _full_copy(source: Path, target: Path, *, digests: bool = True) -> Path:
    """The same run with every body whole (``request_bodies="full"``), digests kept or not."""
    events = read_transcript(source).events
    whole_copy(source, target)
    if digests:
        whole = _lines(target)
        for event, original in zip(_requests(whole), _requests(events), strict=True):
            event["body_sha256"] = original["body_sha256"]
        _write(target, whole)
    return target


def test_a_run_records_its_first_body_whole_and_each_later_one_as_what_it_added(delta_run: Path) -> None:
    first, *later = _requests(_lines(delta_run))
    assert "body" in first and "body_delta" not in first
    for previous_seq, event in zip([first["seq"]] + [e["seq"] for e in later], later, strict=False):
        assert "body" not in event
        delta = event["body_delta"]
        assert delta["of"] == previous_seq
        # replay mode: only the new input items, each one a line before it holds (shared.py)
        assert set(delta) == {"of", "extend"}
        refs = delta["extend"]["input"]
        calls, *outputs = refs  # the calls: the response's output items; their outputs: feedback lines
        assert (calls.get("refs") or calls["ref"][:-1])[1:] == ["body", "output"]
        assert [entry["ref"][1:] for entry in outputs] == [["item"]] * len(outputs)
    rebuilt = _requests(read_transcript(delta_run).events)
    for event in rebuilt:  # each rebuilt body is byte for byte the one the client posted
        assert "body_delta" not in event
        assert wire_digest(wire_bytes(event["body"])) == event["body_sha256"]
    assert len(rebuilt[3]["body"]["input"]) == 1 + 2 * 5  # the task, then each call and its output


def test_the_delta_transcript_is_smaller_and_verifies_like_the_whole_body_one(
    delta_run: Path, tmp_path: Path
) -> None:
    full = _full_copy(delta_run, tmp_path / "full.jsonl", digests=False)
    assert "body_delta" not in full.read_text() and "body_sha256" not in full.read_text()
    assert delta_run.stat().st_size < full.stat().st_size
    on_deltas, on_full = verify(load_run(delta_run)), verify(load_run(full))
    assert on_deltas.ok and on_deltas.finished and on_full.ok
    assert [f.message for f in on_deltas.findings] == [f.message for f in on_full.findings]


def test_a_transcript_written_before_deltas_still_reads_and_verifies() -> None:
    events = read_transcript(OLD).events
    assert len(_requests(events)) == 3 and all("body_sha256" not in e for e in _requests(events))
    verdict = verify(load_run(OLD))
    assert verdict.ok and verdict.finished
    assert not [f for f in verdict.findings if f.check == "body_digest"]


def _item_changed(body: dict[str, Any]) -> None:
    outputs = [item for item in body["input"] if item.get("type") == "function_call_output"]
    outputs[-1]["output"] = "line 1 (edited)\n"


def _delta_item_changed(delta: dict[str, Any], events: list[Event]) -> None:
    """The delta's referred items written out (as a delta may hold them), the last one edited."""
    by_seq = {event["seq"]: event for event in events}
    items = apply_delta({"input": []}, {"extend": delta.pop("extend")}, lambda path: resolve(by_seq, path))
    delta["append"] = copy.deepcopy(items)
    _item_changed(delta["append"])


def _tools_dropped(body: dict[str, Any]) -> None:
    del body["tools"]


def _delta_tools_dropped(delta: dict[str, Any], events: list[Event]) -> None:
    delta["drop"] = ["tools"]


def _reordered(body: dict[str, Any]) -> None:
    items = body["input"]
    items[-1], items[-2] = items[-2], items[-1]


def _delta_reordered(delta: dict[str, Any], events: list[Event]) -> None:
    _reordered(delta["extend"])  # its references swapped: the call and its output


@pytest.mark.parametrize(
    ("on_delta", "on_body"),
    [(_delta_item_changed, _item_changed), (_delta_tools_dropped, _tools_dropped),
     (_delta_reordered, _reordered)],
    ids=["an input item changed", "a field dropped", "outputs reordered"],
)
def test_a_tampered_delta_is_caught_exactly_as_the_same_edit_of_a_whole_body(
    delta_run: Path, tmp_path: Path,
    on_delta: Callable[[dict[str, Any], list[Event]], None], on_body: Callable[[dict[str, Any]], None],
) -> None:
    events = _lines(delta_run)
    on_delta(_requests(events)[2]["body_delta"], events)  # request 3 (its items are carried on to request 4)
    tampered_delta = _write(tmp_path / "delta.jsonl", events)
    whole = _lines(_full_copy(delta_run, tmp_path / "full.jsonl"))
    on_body(_requests(whole)[2]["body"])  # request 3 only, as the tamper tests edit a whole body
    tampered_full = _write(tmp_path / "full-tampered.jsonl", whole)
    by_delta, by_full = verify(load_run(tampered_delta)).broken, verify(load_run(tampered_full)).broken
    assert by_delta is not None and by_full is not None
    assert (by_delta.link, by_delta.check, by_delta.message) == (by_full.link, by_full.check, by_full.message)
    assert by_delta.link in ("feedback", "next_input")


def test_an_edit_no_other_check_sees_is_caught_by_the_body_digest(delta_run: Path, tmp_path: Path) -> None:
    events = _lines(delta_run)
    _requests(events)[1]["body_delta"]["set"] = {"parallel_tool_calls": False}
    verdict = verify(load_run(_write(tmp_path / "t.jsonl", events)))
    assert verdict.broken is not None and verdict.broken.check == "body_digest"
    assert verdict.broken.message.startswith("request 2 (attempt 1): its body is not the one sent: it does "
                                             "not serialise to the SHA-256 recorded with it")


def test_a_delta_whose_request_is_gone_or_that_cannot_apply_is_unreadable(
    delta_run: Path, tmp_path: Path
) -> None:
    events = _lines(delta_run)
    first, second = _requests(events)[:2]
    gone = [event for event in events if event is not first]
    gone_said = (rf"event seq {second['seq']} \(model_request\) records its body as changes to a request "
                 "the transcript does not hold before it")
    with pytest.raises(UsageError, match=gone_said):
        load_run(_write(tmp_path / "gone.jsonl", gone))
    second["body_delta"]["append"] = {"model": ["x"]}
    bad_said = ('changes that cannot be applied: it appends to "model", which the previous request holds '
                "no array in")
    with pytest.raises(UsageError, match=bad_said):
        load_run(_write(tmp_path / "bad.jsonl", events))


CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function"}]}


@pytest.mark.parametrize(
    "change",
    [
        lambda body: body["messages"].append({"role": "assistant", "content": "hello"}),  # any list field
        lambda body: body.update(temperature=0.5),  # a new field, at the end
        lambda body: body.pop("tools"),
        lambda body: body.update(messages=[{"role": "user", "content": "other"}]),  # no append: set whole
        lambda body: body.update({"stream": True, "model": "n"}),
    ],
    ids=["appended", "added", "dropped", "replaced", "changed"],
)
def test_any_body_is_rebuilt_from_its_delta_byte_for_byte(change: Callable[[dict[str, Any]], object]) -> None:
    body = copy.deepcopy(CHAT)
    change(body)
    delta = json.loads(json.dumps(body_delta(CHAT, body)))  # as read back from a line
    rebuilt = apply_delta(CHAT, delta)
    assert wire_bytes(rebuilt) == wire_bytes(body)
    assert BodyDigests().digest(rebuilt) == wire_digest(wire_bytes(body))


def test_a_new_field_order_is_recorded_and_kept() -> None:
    body = {"tools": CHAT["tools"], "model": "m", "messages": CHAT["messages"]}
    delta = body_delta(CHAT, body)
    assert delta == {"order": ["tools", "model", "messages"]}
    assert wire_bytes(apply_delta(CHAT, delta)) == wire_bytes(body)
    assert body_delta(CHAT, copy.deepcopy(CHAT)) == {}


def test_one_digester_over_a_chain_of_rebuilt_bodies_gives_each_body_its_own_digest() -> None:
    """BodyDigests resumes each hash where the previous body's shared part ended: every kind
    of change (a grown list, a field set before or after it, a list replaced, shrunk or
    emptied, a field dropped or reordered) still gives the digest of the body's own bytes."""
    changes: list[Callable[[dict[str, Any]], object]] = [
        lambda body: body["messages"].append({"role": "assistant", "content": "hello"}),
        lambda body: body["messages"].extend([{"role": "tool", "content": "x"}, {"role": "user"}]),
        lambda body: body.update(model="n"),  # before the grown list: nothing before it is shared
        lambda body: body["messages"].append({"role": "user", "content": "z"}),
        lambda body: body.update(temperature=0.5),  # after it
        lambda body: body["messages"].pop(),  # shrunk: no longer the previous list's items
        lambda body: body.update(messages=[]),
        lambda body: body["messages"].append({"role": "user", "content": "again"}),
        lambda body: body.pop("tools"),
        lambda body: body.update({"stream": True}),
    ]
    digests, previous, sent = BodyDigests(), copy.deepcopy(CHAT), copy.deepcopy(CHAT)
    assert digests.digest(previous) == wire_digest(wire_bytes(sent))
    for change in changes:
        change(sent)
        rebuilt = apply_delta(previous, json.loads(json.dumps(body_delta(previous, sent))))
        assert digests.digest(rebuilt) == wire_digest(wire_bytes(sent))
        previous, sent = rebuilt, copy.deepcopy(sent)
    assert digests.digest(copy.deepcopy(previous)) == wire_digest(wire_bytes(previous))  # shares nothing


def _mcp_record(kind: str, seq: int, message: dict[str, Any], server: str = "fs") -> dict[str, Any]:
    direction = "out" if kind == "mcp_request" else "in"
    return {"seq": seq, "time": 1.0 + seq, "kind": kind, "direction": direction, "server": server,
            "connection": 1, "mcp_id": message.get("id"), "method": "tools/call",
            "message": message, "call_id": None}


def _call(n: int, value: Any, meta: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": "read", "arguments": {"head": value}, "_meta": meta}}


def _answer(n: int, text: str, structured: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": n, "result": {"content": [{"type": "text", "text": text}],
                                                  "structuredContent": {"content": structured}}}


TEXT = "".join(f"line {n}\n" for n in range(1, 20))
META = {"progressToken": "t", "io.modelcontextprotocol/clientInfo": {"name": "toolrelay", "version": "1"}}
RECORDS: list[dict[str, Any]] = [
    _mcp_record("mcp_request", 1, _call(1, 1, META)),
    _mcp_record("mcp_request", 2, _call(2, 1.0, META)),  # 1.0 is not 1: written apart
    _mcp_record("mcp_request", 3, _call(3, -0.0, META)),
    _mcp_record("mcp_request", 4, _call(4, 0.0, {**META, "progressToken": "u"})),
    _mcp_record("mcp_request", 5, _call(5, [1, 2], dict(reversed(META.items())))),  # other key order
    _mcp_record("mcp_request", 6, _call(6, list(range(40)), META), server="other"),
    _mcp_record("mcp_request", 7, _call(7, list(range(1, 41)), META), server="other"),  # 40 changes: whole
    _mcp_record("mcp_response", 8, _answer(1, "x", "x")),
    _mcp_record("mcp_response", 9, _answer(2, TEXT, TEXT)),
    {"seq": 10, "time": 11.0, "kind": "feedback", "call_id": "c",
     "item": {"type": "function_call_output", "call_id": "c", "output": TEXT}, "cut": []},
    _mcp_record("mcp_response", 11, _answer(3, TEXT, "y")),
]


def test_messages_recorded_as_changes_read_back_as_the_messages_written_whole(tmp_path: Path) -> None:
    compact, whole = TranscriptWriter(tmp_path / "c.jsonl", "r"), TranscriptWriter(tmp_path / "w.jsonl", "r",
                                                                                   request_bodies="full")
    for record in RECORDS:
        compact.write_record(copy.deepcopy(record))
        whole.write_record(copy.deepcopy(record))
    compact.close()
    whole.close()
    lines = _lines(tmp_path / "c.jsonl")
    assert lines[0]["run"] == "r" and lines[0]["transcript_format"] == 2
    assert not any("run" in line or "transcript_format" in line for line in lines[1:])
    deltas = {line["seq"]: line["message_delta"] for line in lines if "message_delta" in line}
    assert deltas[2] == {"of": 1, "set": [[["id"], 2], [["params", "arguments", "head"], 1.0]]}
    assert deltas[4]["set"][-1] == [["params", "_meta", "progressToken"], "u"]
    assert deltas[5]["set"][-2:] == [[["params", "arguments", "head"], [1, 2]],
                                     [["params", "_meta"], dict(reversed(META.items()))]]
    assert set(deltas) == {2, 3, 4, 5, 9, 11}  # 1, 6 and 8: the first of their shapes; 7: too many changes
    by_seq = {line["seq"]: line for line in lines}
    assert by_seq[9]["copies"] == [[["message", "result", "structuredContent", "content"],
                                    [9, "message", "result", "content", 0, "text"]]]
    assert by_seq[10]["item"]["output"] is None and by_seq[10]["copies"][0][1][0] == 9
    assert by_seq[11]["copies"][0][1][0] == 9  # the same text read again: copied from the line before
    read = read_transcript(tmp_path / "c.jsonl").events
    expected = read_transcript(tmp_path / "w.jsonl").events
    assert [event.pop("run") for event in read] == [event.pop("run") for event in expected] == ["r"] * 11
    assert [json.dumps(event) for event in read] == [json.dumps(event) for event in expected]  # order too
    assert read[2]["message"]["params"]["arguments"]["head"].hex() == (-0.0).hex()


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda lines: lines[1]["message_delta"].update({"of": 99}),
         "event seq 2 (mcp_request) records its message as changes to a message the transcript does not "
         "hold before it"),
        (lambda lines: lines[1]["message_delta"]["set"].append([["params", "nope"], 1]),
         "event seq 2 (mcp_request) records its message as changes that cannot be applied: it changes "
         ".params.nope, which the value it is based on does not hold"),
        (lambda lines: lines[8]["copies"][0][1].__setitem__(0, 99),
         "event seq 9 (mcp_response) copies strings it cannot find: it refers to seq 99, which the "
         "transcript does not hold before it"),
        (lambda lines: lines[0].update({"transcript_format": 3}),
         "is written in transcript format 3, newer than this toolrelay reads (2)"),
    ],
    ids=["no base", "no such place", "no such string", "a newer format"],
)
def test_a_message_delta_or_copy_that_cannot_apply_is_unreadable(
    tmp_path: Path, edit: Callable[[list[Event]], object], said: str
) -> None:
    writer = TranscriptWriter(tmp_path / "c.jsonl", "r")
    for record in RECORDS:
        writer.write_record(copy.deepcopy(record))
    writer.close()
    lines = _lines(tmp_path / "c.jsonl")
    edit(lines)
    with pytest.raises(UsageError, match=re.escape(said)):
        read_transcript(_write(tmp_path / "bad.jsonl", lines))


def test_a_run_records_its_repeated_messages_as_changes_and_an_edited_one_is_caught(
    delta_run: Path, tmp_path: Path
) -> None:
    """The real run's tools/call lines after the first hold only what changed; an edit of
    the arguments there is caught as the same edit of the whole message is."""
    lines = _lines(delta_run)
    calls = [line for line in lines if line["kind"] == "mcp_request" and line.get("method") == "tools/call"]
    whole = [line for line in calls if "message" in line]
    assert len(whole) == 2 and whole[0] is calls[0]  # the first call and the first retry with roots
    assert all(set(line["message_delta"]) == {"of", "set"} for line in calls if line not in whole)
    rebuilt = [e for e in read_transcript(delta_run).events
               if e["kind"] == "mcp_request" and e["method"] == "tools/call"]
    assert [e["message"]["params"]["arguments"] for e in rebuilt][-2:] == [{"path": "notes.txt", "head": 1},
                                                                          {"path": "notes.txt", "head": 3}]
    last = calls[-1]["message_delta"]["set"]
    next(change for change in last if change[0] == ["params", "arguments", "head"])[1] = 2
    full = _lines(_full_copy(delta_run, tmp_path / "full.jsonl"))
    [e for e in full if e["kind"] == "mcp_request" and e.get("method") == "tools/call"][-1][
        "message"]["params"]["arguments"]["head"] = 2
    by_delta = verify(load_run(_write(tmp_path / "delta.jsonl", lines))).broken
    by_full = verify(load_run(_write(tmp_path / "full-tampered.jsonl", full))).broken
    assert by_delta is not None and by_full is not None
    assert (by_delta.link, by_delta.check, by_delta.message) == (by_full.link, by_full.check, by_full.message)


def test_a_chained_request_refers_to_the_outputs_its_feedback_lines_hold(tmp_path: Path) -> None:
    """previous_response_id: each request sets its input whole (the new outputs only); those
    items are the feedback lines' own, recorded as references (set_items)."""
    (tmp_path / "notes.txt").write_text("line 1\nline 2\n", encoding="utf-8")
    turns = [{"calls": [_read(1), _read(2)]}, {"calls": [_read(2)]}, {"message": "Done."}]
    (tmp_path / "script.json").write_text(json.dumps({"turns": turns}), encoding="utf-8")
    options = RunOptions(model="offline", script=tmp_path / "script.json",
                         config=[builtin_file_server(tmp_path)], transcript=tmp_path / "run.jsonl",
                         stream=False, chain=True,
                         limits=RunLimits(max_turns=4))
    assert asyncio.run(run_async("Read notes.txt", options)).status == "completed"
    later = _requests(_lines(tmp_path / "run.jsonl"))[1:]
    assert [[entry["ref"][1:] for entry in e["body_delta"]["set_items"]["input"]] for e in later] == [
        [["item"], ["item"]], [["item"]]]
    assert all("input" not in e["body_delta"].get("set", {}) for e in later)
    verdict = verify(load_run(tmp_path / "run.jsonl"))
    assert verdict.ok and verdict.finished
    rebuilt = _requests(read_transcript(tmp_path / "run.jsonl").events)
    assert [item["output"] for item in rebuilt[2]["body"]["input"]] == ["line 1\nline 2\n"]
