"""How the reader makes a line whole quickly, and that it reads what it read before: a
copy naming the string the copy before it named is not walked again (unless any step
differs, in value or in type, or the line it names is another), and a rebuilt message
takes its delta's place among the line's fields wherever the others stand."""

from __future__ import annotations

import copy
import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from toolrelay.errors import UsageError
from toolrelay.transcript import reader
from toolrelay.transcript.reader import read_transcript
from toolrelay.transcript.writer import TranscriptWriter

TEXT = "".join(f"line {n} of a text long enough to be copied\n" for n in range(1, 6))
FORMAT_2 = {"seq": 1, "run": "r", "transcript_format": 2, "kind": "notice", "text": "start"}
REF = [2, "message", "result", "content", 0, "text"]


def _answer(seq: int, text: str) -> dict[str, Any]:
    return {"seq": seq, "kind": "mcp_response", "server": "fs", "message": {
        "jsonrpc": "2.0", "id": seq, "result": {"content": [{"type": "text", "text": text}]}}}


def _feedback(seq: int, ref: list[Any]) -> dict[str, Any]:
    return {"seq": seq, "kind": "feedback", "call_id": "c", "item": {"type": "function_call_output",
            "call_id": "c", "output": None}, "copies": [[["item", "output"], ref]]}


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _said(path: Path) -> str:
    with pytest.raises(UsageError) as caught:
        read_transcript(path)
    return str(caught.value)


def test_a_copy_naming_what_the_one_before_named_reads_the_same(tmp_path: Path) -> None:
    lines = [FORMAT_2, _answer(2, TEXT), _feedback(3, REF), _feedback(4, list(REF))]
    events = read_transcript(_write(tmp_path / "t.jsonl", lines)).events
    assert events[2]["item"]["output"] == events[3]["item"]["output"] == TEXT


@pytest.mark.parametrize(("step", "shown"), [(False, "False"), (0.0, "0.0")])
def test_a_copy_equal_to_the_one_before_but_for_a_step_type_names_nothing(
    tmp_path: Path, step: Any, shown: str
) -> None:
    """``==`` takes False and 0.0 for 0; a step does not: the reference is walked, and fails."""
    odd = [*REF[:4], step, "text"]
    path = _write(tmp_path / "t.jsonl", [FORMAT_2, _answer(2, TEXT), _feedback(3, REF), _feedback(4, odd)])
    assert _said(path) == (f"{path}: event seq 4 (feedback) copies strings it cannot find: it refers to "
                           f"[2, 'message', 'result', 'content', {shown}, 'text'], which seq 2 does not hold")


def test_a_copy_naming_a_seq_a_later_line_holds_again_names_that_line(tmp_path: Path) -> None:
    other = TEXT.replace("line", "row")
    lines = [FORMAT_2, _answer(2, TEXT), _feedback(3, REF), _answer(2, other), _feedback(5, REF)]
    events = read_transcript(_write(tmp_path / "t.jsonl", lines)).events
    assert [events[2]["item"]["output"], events[4]["item"]["output"]] == [TEXT, other]


def test_a_copy_naming_its_own_line_is_walked_in_that_line(tmp_path: Path) -> None:
    """A line's copy may name a string of its own (rebuilt) message; the next line of that
    seq holds another, so the reference is never taken for the one before it."""
    def own(seq: int, text: str) -> dict[str, Any]:
        line = _answer(seq, text)
        line["message"]["result"]["structuredContent"] = {"content": None}
        line["copies"] = [[["message", "result", "structuredContent", "content"], [seq, *REF[1:]]]]
        return line
    lines = [FORMAT_2, own(2, TEXT), own(2, TEXT + "more")]
    events = read_transcript(_write(tmp_path / "t.jsonl", lines)).events
    copied = [event["message"]["result"]["structuredContent"]["content"] for event in events[1:]]
    assert copied == [TEXT, TEXT + "more"]


def _records() -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for n in range(1, 9):
        text = TEXT if n == 1 else TEXT.upper() if n % 2 else TEXT.title()  # one whole, then two in turn
        result = {"content": [{"type": "text", "text": text}], "structuredContent": {"content": text}}
        records.append({"seq": 2 * n, "time": 1.0 + n, "kind": "mcp_response", "direction": "in",
                        "server": "fs", "connection": 1, "mcp_id": n, "method": "tools/call",
                        "message": {"jsonrpc": "2.0", "id": n, "result": result}, "call_id": f"c{n}",
                        "elapsed": 0.5})
        records.append({"seq": 2 * n + 1, "time": 1.5 + n, "kind": "feedback", "call_id": f"c{n}",
                        "item": {"type": "function_call_output", "call_id": f"c{n}", "output": text},
                        "cut": []})
    return records


def test_copies_read_with_or_without_the_last_reference_kept_are_the_lines_written_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compact, whole = TranscriptWriter(tmp_path / "c.jsonl", "r"), TranscriptWriter(tmp_path / "w.jsonl", "r",
                                                                                   request_bodies="full")
    for record in _records():
        compact.write_record(copy.deepcopy(record))
        whole.write_record(copy.deepcopy(record))
    compact.close()
    whole.close()
    written = [json.loads(line) for line in (tmp_path / "c.jsonl").read_text(encoding="utf-8").splitlines()]
    refs = [pair[1] for line in written for pair in line.get("copies", [])]
    assert len(refs) >= 10 and sum(a == b for a, b in pairwise(refs)) >= 4  # each names the last one's
    fast = _texts(tmp_path / "c.jsonl")
    monkeypatch.setattr(reader._LastReference, "names", lambda *_: False)
    assert fast == _texts(tmp_path / "c.jsonl") == _texts(tmp_path / "w.jsonl")


def _texts(path: Path) -> list[str]:
    """Each event as JSON, field order included, its run id left out (a whole line holds it first)."""
    events = read_transcript(path).events
    assert {event.pop("run") for event in events} == {"r"}
    return [json.dumps(event) for event in events]


BASE = {"seq": 2, "kind": "mcp_request", "server": "fs", "message": {
    "jsonrpc": "2.0", "id": 1, "params": {"arguments": {"head": 1}, "_meta": {"progressToken": "a"}}}}
CHANGES = [[["id"], 2], [["params", "arguments", "head"], 5]]


@pytest.mark.parametrize(
    ("fields", "order"),
    [
        (["kind", "message_delta", "call_id", "copies", "elapsed"],
         ["kind", "message", "call_id", "elapsed"]),
        (["kind", "copies", "message_delta", "call_id"], ["kind", "message", "call_id"]),
        (["kind", "message_delta", "call_id", "message", "elapsed"],
         ["kind", "call_id", "message", "elapsed"]),
        (["message", "kind", "message_delta", "elapsed"], ["message", "kind", "elapsed"]),
        (["kind", "message_delta"], ["kind", "message"]),
    ],
    ids=["copies after", "copies before", "a message after", "a message before", "last"],
)
def test_a_rebuilt_message_takes_its_deltas_place_wherever_the_other_fields_stand(
    tmp_path: Path, fields: list[str], order: list[str]
) -> None:
    values = {"kind": "mcp_request", "message_delta": {"of": 2, "set": CHANGES}, "call_id": "c",
              "elapsed": None, "message": None,
              "copies": [[["message", "params", "_meta", "progressToken"], [2, "server"]]]}
    line = {"seq": 3, **{field: values[field] for field in fields}}
    events = read_transcript(_write(tmp_path / "t.jsonl", [FORMAT_2, BASE, line])).events
    assert list(events[2]) == ["seq", *order, "run"]
    token = "fs" if "copies" in fields else "a"
    assert events[2]["message"] == {"jsonrpc": "2.0", "id": 2, "params": {"arguments": {"head": 5},
                                                                         "_meta": {"progressToken": token}}}
    assert events[1]["message"] == BASE["message"]  # the base is not changed


def _plain_lines(count: int) -> list[dict[str, Any]]:
    """Lines of many lengths, one far longer than the others (a chunk may end inside any)."""
    lines: list[dict[str, Any]] = [{"seq": 1, "run": "r", "kind": "notice", "text": "start"}]
    for seq in range(2, count + 2):
        lines.append({"seq": seq, "run": "r", "kind": "notice", "text": "é" * (seq * 7 % 50)})
    lines.insert(count // 2, {"seq": 0, "run": "r", "kind": "notice", "text": "x" * 5000})
    return lines


@pytest.mark.parametrize("chunk", [1, 13, 64, 4096, 1 << 20])
def test_the_lines_read_a_chunk_at_a_time_are_the_lines_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """Chunks of any size, one shorter than a line, one holding the whole file: each line
    read is the line written, a long one whole, none lost or split at a chunk's end (by the
    streamed path itself: the whole file's paths, which would read them too, are not asked)."""
    lines = _plain_lines(300)
    path = _write(tmp_path / "t.jsonl", lines)
    monkeypatch.setattr(reader, "_CHUNK", chunk)
    monkeypatch.setattr(reader, "_read_fast", None)
    monkeypatch.setattr(reader, "_read_text", None)
    assert read_transcript(path).events == lines


@pytest.mark.parametrize("chunk", [13, 1 << 20])
def test_a_bad_line_in_a_later_chunk_is_named_and_a_cut_tail_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(reader, "_CHUNK", chunk)
    lines = _plain_lines(200)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"seq": 999, "kin', encoding="utf-8")
    read = reader._read_streamed(cut)  # the cut tail spans two chunks of 13 bytes
    assert read is not None and read[2] and read[0] == lines
    assert read_transcript(cut).events == lines
    texts = [json.dumps(line) for line in lines]
    texts[150] = texts[150][:-1]  # line 151 loses its closing brace
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(text + "\n" for text in texts), encoding="utf-8")
    assert _said(bad).startswith(f"{bad}:151 is not a JSON line: ")
