"""The transcript reader parses lines with orjson (``json_fast``) and reads exactly what
``json.loads`` reads, case by case where orjson alone would not; a file it cannot take
that way is read as text as before, and says what it said before: the same bad line, the
same message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from testkit.json_cases import DEPARTURES
from toolrelay.errors import UsageError
from toolrelay.protocol.json_depth import RECORD_DEPTH
from toolrelay.transcript.reader import read_transcript

HEAD = '{"seq": 1, "run": "r", "kind": "notice", "text": "start"}'


def _line(seq: int, value: str) -> str:
    return '{"seq": ' + str(seq) + ', "run": "r", "kind": "notice", "value": ' + value + "}"


def _write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "t.jsonl"
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogatepass")
    path.write_bytes(text)
    return path


def _same(ours: Any, theirs: Any) -> bool:
    """Equal type for type (1 is not 1.0, -0.0 is not 0.0, NaN is NaN)."""
    return repr(ours) == repr(theirs)


def _said(path: Path) -> str:
    with pytest.raises(UsageError) as caught:
        read_transcript(path)
    return str(caught.value)


@pytest.mark.parametrize("value", [v.strip() for v in DEPARTURES.values() if v.strip()[:1] == "{"],
                         ids=[k for k, v in DEPARTURES.items() if v.strip()[:1] == "{"])
def test_each_departure_reads_as_json_loads(tmp_path: Path, value: str) -> None:
    lines = [HEAD, _line(2, value), _line(3, "[1, 2.5]")]
    events = read_transcript(_write(tmp_path, "\n".join(lines) + "\n")).events
    assert _same(events, [json.loads(line) for line in lines])


def test_long_integers_on_many_lines_read_as_json_loads(tmp_path: Path) -> None:
    values = ["99999999999999999999", "1.5", '"id 12345678901234567890"', "-18446744073709551617",
              "18446744073709551615", "[" + "7" * 60 + "]", "0.00012345678901234567890"]
    lines = [HEAD] + [_line(seq, value) for seq, value in enumerate(values * 3, 2)]
    events = read_transcript(_write(tmp_path, "\n".join(lines) + "\n")).events
    assert _same(events, [json.loads(line) for line in lines])
    assert events[1]["value"] == 99999999999999999999 and events[4]["value"] == -18446744073709551617


def test_a_long_integer_seq_reads_as_json_loads(tmp_path: Path) -> None:
    lines = [HEAD, '{"seq": 123456789012345678901234, "run": "r", "kind": "notice"}']
    events = read_transcript(_write(tmp_path, "\n".join(lines) + "\n")).events
    assert events[1]["seq"] == 123456789012345678901234


def test_duplicate_keys_keep_the_last_as_json_loads(tmp_path: Path) -> None:
    line = '{"seq": 2, "kind": "x", "run": "r", "kind": "notice", "seq": 3}'
    events = read_transcript(_write(tmp_path, HEAD + "\n" + line + "\n")).events
    assert list(events[1].items()) == list(json.loads(line).items())


def test_a_cut_tail_is_dropped_whether_it_is_json_or_not(tmp_path: Path) -> None:
    text = HEAD + "\n" + _line(2, "1") + "\n" + '{"seq": 3, "kind": "no'
    transcript = read_transcript(_write(tmp_path, text))
    assert transcript.cut_tail and [e["seq"] for e in transcript.events] == [1, 2]
    whole = read_transcript(_write(tmp_path, HEAD + "\n"))
    assert not whole.cut_tail


def test_a_cut_tail_that_is_not_utf8_makes_the_file_unreadable(tmp_path: Path) -> None:
    path = _write(tmp_path, (HEAD + "\n" + '{"seq": 2, "text": "caf').encode() + "é".encode()[:1])
    assert _said(path) == f"cannot read transcript {path}: not UTF-8 text"


def test_a_byte_that_is_not_utf8_makes_the_file_unreadable(tmp_path: Path) -> None:
    path = _write(tmp_path, (HEAD + "\n").encode() + b'{"seq": 2, "kind": "notice", "t": "\xff"}\n')
    assert _said(path) == f"cannot read transcript {path}: not UTF-8 text"


def test_a_lone_carriage_return_ends_a_line_as_before(tmp_path: Path) -> None:
    """Read as text, a CR is a line break (universal newlines), where orjson would take it
    as mere whitespace: two events apart by a CR are two events, and one with a CR inside
    reads as json.loads reads it across a line break."""
    second, third = _line(2, "[1,\r2]"), _line(3, '"x"')
    events = read_transcript(_write(tmp_path, HEAD + "\r" + second + "\n" + third + "\n")).events
    assert events == [json.loads(HEAD), json.loads(second.replace("\r", "\n")), json.loads(third)]


def test_a_byte_order_mark_names_the_first_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "\ufeff" + HEAD + "\n")
    said = f"{path}:1 is not a JSON line: Unexpected UTF-8 BOM (decode using utf-8-sig) (column 1)"
    assert _said(path) == said


@pytest.mark.parametrize("value", ["NaN", "1e400", '"\\ud800"'])
def test_values_orjson_refuses_are_read_on_every_line_as_json_loads(tmp_path: Path, value: str) -> None:
    lines = [HEAD, *(_line(seq, value) for seq in range(2, 50))]
    events = read_transcript(_write(tmp_path, "\n".join(lines) + "\n")).events
    assert _same(events, [json.loads(line) for line in lines])


@pytest.mark.parametrize("depth", [RECORD_DEPTH, RECORD_DEPTH + 1, 1024, 1025, 3000])
def test_the_nesting_limit_holds_on_both_sides_of_orjson_own(tmp_path: Path, depth: int) -> None:
    head = '{"seq": 2, "run": "r", "kind": "notice", "deep": '
    line = head + "[" * (depth - 1) + "]" * (depth - 1) + "}"
    path = _write(tmp_path, HEAD + "\n" + line + "\n")
    if depth <= RECORD_DEPTH:
        assert read_transcript(path).events[1] == json.loads(line)
        return
    column = len(head) + RECORD_DEPTH
    said = f"{path}:2 is not a JSON line: nested deeper than {RECORD_DEPTH} levels (column {column})"
    assert _said(path) == said


def test_an_integer_too_long_for_python_names_its_line(tmp_path: Path) -> None:
    # past int_max_str_digits json.loads raises a bare ValueError: a usage error, not a traceback
    path = _write(tmp_path, "\n".join([HEAD, _line(2, "9" * 5000)]) + "\n")
    said = _said(path)
    assert said.startswith(f"{path}:2 is not a JSON line: a number too long to read")
    assert "4300 digits" in said


# Each line is made whole (message deltas, copies, the run id) right after it is parsed, in
# one pass: a line that cannot be made whole must still not hide a later line that is no
# JSON (or too deep), which the reading line by line names first, as it always did.
BASE = ('{"seq": 2, "kind": "mcp_request", "server": "fs", "message": {"jsonrpc": "2.0", "id": 1, '
        '"params": {"arguments": {"head": 1}, "_meta": {"progressToken": "a"}}}, "call_id": null}')


def _delta(seq: int, of: int, changes: str) -> str:
    return ('{"seq": ' + str(seq) + ', "kind": "mcp_request", "server": "fs", "message_delta": {"of": '
            + str(of) + ', "set": ' + changes + '}, "call_id": "c", "elapsed": null}')


FORMAT_2 = '{"seq": 1, "run": "r", "transcript_format": 2, "kind": "notice", "text": "start"}'


def test_a_delta_that_cannot_apply_before_a_line_that_is_no_json_names_the_later_line(tmp_path: Path) -> None:
    lines = [FORMAT_2, BASE, _delta(3, 9, "[]"), "not json"]
    path = _write(tmp_path, "\n".join(lines) + "\n")
    assert _said(path).startswith(f"{path}:4 is not a JSON line: ")
    deep = '{"seq": 4, "kind": "notice", "deep": ' + "[" * RECORD_DEPTH + "]" * RECORD_DEPTH + "}"
    path = _write(tmp_path, "\n".join([*lines[:3], deep]) + "\n")
    assert _said(path).startswith(f"{path}:4 is not a JSON line: nested deeper than {RECORD_DEPTH} levels")
    path = _write(tmp_path, "\n".join(lines[:3]) + "\n")  # alone, the delta is what is wrong
    assert _said(path) == (f"{path}: event seq 3 (mcp_request) records its message as changes to a message "
                           "the transcript does not hold before it")


def test_a_long_integer_in_a_message_delta_and_its_base_reads_as_json_loads(tmp_path: Path) -> None:
    big = "123456789012345678901234567890"
    lines = [FORMAT_2, BASE.replace('"id": 1', '"id": ' + big),
             _delta(3, 2, '[[["params", "arguments", "head"], ' + big + "]]")]
    events = read_transcript(_write(tmp_path, "\n".join(lines) + "\n")).events
    assert events[2]["message"]["id"] == events[2]["message"]["params"]["arguments"]["head"] == int(big)
    assert events[1]["message"]["params"]["arguments"]["head"] == 1  # the base is not changed


def test_a_rebuilt_message_takes_the_place_of_its_delta_among_the_fields(tmp_path: Path) -> None:
    changes = '[[["id"], 2], [["params", "_meta", "progressToken"], "b"]]'
    both = _delta(4, 2, "[]").replace('"message_delta"', '"message": null, "message_delta"')
    lines = [FORMAT_2, BASE, _delta(3, 2, changes), both]
    events = read_transcript(_write(tmp_path, "\n".join(lines) + "\n")).events
    assert list(events[2]) == ["seq", "kind", "server", "message", "call_id", "elapsed", "run"]
    assert events[2]["message"] == {"jsonrpc": "2.0", "id": 2, "params": {"arguments": {"head": 1},
                                                                         "_meta": {"progressToken": "b"}}}
    assert list(events[3]) == list(events[2])  # in the place of the message it held already
    assert events[3]["message"] is events[1]["message"]  # no change: the base's, shared


def test_a_file_read_line_by_line_closer_is_made_whole_the_same(tmp_path: Path) -> None:
    """Brackets in a string (a line that may nest too deep, and is not) send every line
    through the closer look; the deltas are rebuilt as in the usual file."""
    changes = '[[["id"], 2], [["params", "arguments", "head"], 5]]'
    long_text = '{"seq": 4, "kind": "notice", "text": "' + "x" * 2000 + '"}'
    usual = [FORMAT_2, BASE, _delta(3, 2, changes), long_text]
    closer = [*usual[:3], usual[3].replace("x" * 2000, "[" * 2000)]
    events = read_transcript(_write(tmp_path, "\n".join(usual) + "\n")).events
    looked_closer = read_transcript(_write(tmp_path, "\n".join(closer) + "\n")).events
    assert looked_closer[:3] == events[:3] and looked_closer[3]["text"] == "[" * 2000
    assert events[2]["message"]["params"]["arguments"] == {"head": 5} and events[2]["run"] == "r"
