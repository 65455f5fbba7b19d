"""Transcripts and attachments nested deeper than json_depth allows: ``verify``,
``explain`` and ``view`` exit 2 naming the line (as for any line that is not JSON), never
with a RecursionError; a line at the limit is read and checked like any other."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolrelay.events import EventStream, McpMessage, Notice
from toolrelay.protocol.json_depth import MAX_DEPTH, RECORD_DEPTH
from toolrelay.transcript.reader import read_transcript
from toolrelay.transcript.writer import TranscriptWriter

from .helpers import read_events, run_cli, write_events


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def _with_deep_meta(seed_run: Path, target: Path, line_depth: int) -> tuple[Path, int]:
    """The seed run with the first MCP result's ``result._meta`` nested so that its line
    is ``line_depth`` deep; the path and that line's number."""
    events = read_events(seed_run)
    index = next(i for i, event in enumerate(events)
                 if event["kind"] == "mcp_response" and "result" in event["message"])
    # the line, "message" and "result" are three levels around _meta's value
    events[index]["message"]["result"]["_meta"] = {"deep": _nested(line_depth - 4)}
    return write_events(target, events), index + 1


def _dumps_deep(value: Any) -> str:
    """json.dumps without recursion limits: the nesting is written by hand."""
    depth = 0
    while isinstance(value, dict) and list(value) == ["a"]:
        value, depth = value["a"], depth + 1
    return '{"a":' * depth + json.dumps(value) + "}" * depth


@pytest.mark.parametrize("depth", [RECORD_DEPTH + 1, 5000])
def test_a_line_nested_too_deep_is_a_usage_error(seed_run: Path, tmp_path: Path, depth: int) -> None:
    events = read_events(seed_run)
    run = json.dumps(events[0]["run"])
    head = '{"seq": 999, "run": ' + run + ', "kind": "notice", "level": "info", "text": '
    deep_line = head + _dumps_deep(_nested(depth - 1)) + "}"
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events[:3]) + deep_line + "\n", encoding="utf-8")
    column = len(head) + len('{"a":') * (RECORD_DEPTH - 1) + 1
    said = f"t.jsonl:4 is not a JSON line: nested deeper than {RECORD_DEPTH} levels (column {column})"
    for verb in ("verify", "explain", "view"):
        proc = run_cli(verb, str(path))
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr
        assert said in proc.stderr


def test_a_line_at_the_limit_is_read_and_checked(seed_run: Path, tmp_path: Path) -> None:
    path, _ = _with_deep_meta(seed_run, tmp_path / "t.jsonl", RECORD_DEPTH)
    for verb in ("verify", "explain", "view"):
        proc = run_cli(verb, str(path))
        assert proc.returncode == 0, (verb, proc.stdout + proc.stderr)
    assert (tmp_path / "t.html").is_file()


def test_an_attachment_nested_too_deep_is_a_usage_error(seed_run: Path, tmp_path: Path) -> None:
    write_events(tmp_path / "transcript.jsonl", read_events(seed_run))
    (tmp_path / "request_2.json").write_text("[" * 5000 + "]" * 5000)
    proc = run_cli("verify", str(tmp_path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    where = f"(line 1, column {RECORD_DEPTH + 1})"
    said = f"request_2.json is not JSON: nested deeper than {RECORD_DEPTH} levels {where}"
    assert said in proc.stderr


def test_the_writer_records_a_value_too_deep_to_encode_cut_short_and_readable(tmp_path: Path) -> None:
    """A value no reader accepts (a library caller's, never one decoded by toolrelay) is
    recorded with its too-deep part replaced by a note; the run's record goes on."""
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    path = tmp_path / "t.jsonl"
    writer = TranscriptWriter(path, "run-1")
    events = EventStream()
    events.subscribe(writer)
    message = {"jsonrpc": "2.0", "id": 1, "result": {"deep": deep}}
    events.emit(McpMessage(role="mcp_response", direction="in", server="s", connection=1, mcp_id=1,
                           method=None, message=message))
    events.emit(Notice(level="info", text="after"))
    writer.close()
    recorded = read_transcript(path).events
    assert [event["kind"] for event in recorded] == ["mcp_response", "notice"]
    kept = recorded[0]["message"]["result"]["deep"]
    for _ in range(MAX_DEPTH - 4):  # the line, message, result and deep are four levels
        kept = kept[0]
    assert kept == [f"[nested deeper than {MAX_DEPTH} levels: not kept]"]
