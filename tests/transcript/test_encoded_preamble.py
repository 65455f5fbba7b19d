"""Lines encoded once for many transcripts (a batch's shared servers' start-up records):
a writer started from them writes, byte for byte, the file writing the records makes, and
goes on from what they left (a later message of a preamble message's shape is a delta
against it); a writer that would write other bytes never starts from them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolrelay.events import Event, McpMessage, ServerStarting
from toolrelay.transcript.preamble import EncodedPreamble
from toolrelay.transcript.reader import read_transcript
from toolrelay.transcript.writer import TranscriptWriter

SECRET = "sk-batch-secret-0123456789"
TOOLS = {"tools": [{"name": "echo", "description": "Return the text.", "inputSchema": {"type": "object"}}]}


def stamped(event: Event, seq: int) -> dict[str, Any]:
    event.seq, event.time = seq, 1_700_000_000.0 + seq / 8
    return event.to_record()


def mcp(role: str, mcp_id: int, method: str, message: dict[str, Any], call_id: str | None = None) -> Event:
    return McpMessage(role=role, direction="out" if role == "mcp_request" else "in", server="echo",
                      connection=1, mcp_id=mcp_id, method=method,
                      message={"jsonrpc": "2.0", "id": mcp_id, **message}, call_id=call_id)


def preamble_records() -> list[dict[str, Any]]:
    """What a batch's router keeps before its first task: a server starting (its command
    line quotes a secret), its tool list asked for and answered."""
    events: list[Event] = [
        ServerStarting(server="echo", connection=1, transport="stdio",
                       target=f"python echo.py --key {SECRET}"),
        mcp("mcp_request", 1, "tools/list", {"method": "tools/list"}),
        mcp("mcp_response", 1, "tools/list", {"result": TOOLS}),
    ]
    return [stamped(event, seq) for seq, event in enumerate(events, 1)]


def task_records(task: int) -> list[dict[str, Any]]:
    """A task's own lines after the preamble: the tool list again (the preamble's shape) and a call."""
    events: list[Event] = [
        mcp("mcp_request", 10 + task, "tools/list", {"method": "tools/list"}),
        mcp("mcp_response", 10 + task, "tools/list", {"result": TOOLS}),
        mcp("mcp_request", 20 + task, "tools/call", {"method": "tools/call", "params": {
            "name": "echo", "arguments": {"text": f"task {task}"}}}, "call_1"),
    ]
    return [stamped(event, seq) for seq, event in enumerate(events, 100)]


def written(path: Path, run_id: str, task: int, preamble: EncodedPreamble | None) -> bytes:
    """A task transcript: the preamble (from ``preamble``, or its records written), then the task's lines."""
    writer = TranscriptWriter(path, run_id, [SECRET], first_seq=1)
    if preamble is None:
        for record in preamble_records():
            writer.write_record(record)
    else:
        assert preamble.made_for(writer, len(preamble_records())) and preamble.usable
        preamble.start(writer)
    for record in task_records(task):
        writer.write_record(record)
    writer.close()
    return path.read_bytes()


def test_a_writer_started_from_the_encoded_lines_writes_the_same_bytes(tmp_path: Path) -> None:
    encoded = EncodedPreamble.of(preamble_records(), secrets=[SECRET])
    for task, run_id in enumerate(["run-aaaa", "run-bbbb", "run-aaaa"]):  # each its own copy of the state
        plain = written(tmp_path / f"plain-{task}.jsonl", run_id, task, None)
        started = written(tmp_path / f"started-{task}.jsonl", run_id, task, encoded)
        assert started == plain
    lines = [json.loads(line) for line in started.decode().splitlines()]
    assert lines[0]["run"] == "run-aaaa" and SECRET not in started.decode()
    assert "[redacted]" in lines[0]["target"]
    # the task's tool list is recorded as the preamble's, changed: the state went on from there
    assert [line.get("message_delta", {}).get("of") for line in lines[3:5]] == [2, 3]
    read = read_transcript(tmp_path / "started-2.jsonl")
    assert [event["run"] for event in read.events] == ["run-aaaa"] * 6


def test_lines_encoded_for_other_secrets_or_seqs_are_not_made_for_a_writer(tmp_path: Path) -> None:
    encoded = EncodedPreamble.of(preamble_records(), secrets=[SECRET])
    records = len(preamble_records())

    def made_for(*secrets: str, count: int = records, **options: Any) -> bool:
        writer = TranscriptWriter(tmp_path / "t.jsonl", "r", secrets, **options)
        writer.close()
        return encoded.made_for(writer, count)

    assert made_for(SECRET, first_seq=1)
    assert not made_for(first_seq=1)  # its secret would not be redacted
    assert not made_for(SECRET, first_seq=5)
    assert not made_for(SECRET, first_seq=1, count=records + 1)  # a record more since
    assert not made_for(SECRET, first_seq=1, request_bodies="full")


@pytest.mark.parametrize("stand_in", ["toolrelay-preamble-run-a", "toolrelay-preamble-run-b"])
def test_records_that_quote_a_stand_in_run_id_are_never_started_from(stand_in: str) -> None:
    records = preamble_records()
    records[0] = {**records[0], "target": f"python echo.py --name {stand_in}"}
    records[1] = {**records[1], "run": stand_in}  # the run id a record names itself is written as it is
    assert not EncodedPreamble.of(records, secrets=[SECRET]).usable
