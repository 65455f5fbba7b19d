"""The transcript writer's durability: every event is on disk as it is written, except a
streamed answer's events, which are flushed together — by the next other event, or within
``FLUSH_INTERVAL`` — so a killed run loses at most the stream events of that interval. A
``grouped`` writer (a batch task's) holds what came in the same way, until the next line
that goes out: every request is on disk, with all before it, before it is sent."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from toolrelay.events import (
    CallOutcomeEvent,
    CallParsed,
    EventStream,
    McpMessage,
    ModelRequestEvent,
    ModelResponseEvent,
    ModelStreamEvent,
    Notice,
)
from toolrelay.transcript.writer import FLUSH_INTERVAL, TranscriptWriter


def on_disk(path: Path) -> list[str]:
    """The kinds of the complete lines another reader sees now (not the writer's buffer)."""
    return [json.loads(line)["kind"] for line in path.read_text(encoding="utf-8").split("\n")[:-1]]


def stream_event(index: int) -> ModelStreamEvent:
    data = json.dumps({"type": "response.output_text.delta", "sequence_number": index, "delta": "tok"})
    return ModelStreamEvent(turn=1, attempt=1, index=index, event="response.output_text.delta", data=data)


async def seconds_until_on_disk(path: Path, kinds: list[str], started: float, what: str) -> float:
    """Seconds from ``started`` until ``path`` holds events of ``kinds``; fails after 10 s."""
    deadline = started + 10
    while on_disk(path) != kinds:
        assert time.monotonic() < deadline, f"{what} never reached the disk"
        await asyncio.sleep(FLUSH_INTERVAL / 10)
    return time.monotonic() - started


def writer_on(path: Path, *, grouped: bool = False) -> tuple[EventStream, TranscriptWriter]:
    events = EventStream()
    writer = TranscriptWriter(path, "run-1", grouped=grouped)
    events.subscribe(writer)
    return events, writer


def mcp(role: str, direction: str, mcp_id: int) -> McpMessage:
    message = {"jsonrpc": "2.0", "id": mcp_id, "method": "tools/call", "params": {"name": "echo"}} \
        if direction == "out" else {"jsonrpc": "2.0", "id": mcp_id, "result": {"content": []}}
    return McpMessage(role=role, direction=direction, server="echo", connection=1, mcp_id=mcp_id,
                      method="tools/call", message=message, call_id="c1")


def what_came_in() -> list[McpMessage | ModelResponseEvent | CallParsed | CallOutcomeEvent]:
    return [ModelResponseEvent(turn=1, status=200, body={"output": []}, elapsed=0.1),
            CallParsed(call_id="c1", alias="echo__echo", arguments_text="{}", arguments={}),
            mcp("mcp_response", "in", 7), CallOutcomeEvent(call_id="c1", outcome={"status": "ok"})]


def test_outside_an_event_loop_every_event_is_on_disk_at_once(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    events, writer = writer_on(path)
    events.emit(stream_event(0))
    assert on_disk(path) == ["model_stream"]
    events.emit(Notice(level="info", text="hello"))
    assert on_disk(path) == ["model_stream", "notice"]
    writer.close()


def test_stream_events_wait_for_the_next_other_event_which_is_on_disk_at_once(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"

    async def scenario() -> tuple[list[str], list[str]]:
        events, writer = writer_on(path)
        for index in range(3):
            events.emit(stream_event(index))
        buffered = on_disk(path)
        events.emit(Notice(level="info", text="the stream ended"))
        flushed = on_disk(path)
        writer.close()
        return buffered, flushed

    buffered, flushed = asyncio.run(scenario())
    assert buffered == []  # hundreds a turn: not one write to disk each
    assert flushed == ["model_stream"] * 3 + ["notice"]


def test_stream_events_reach_the_disk_within_the_flush_interval_when_nothing_follows(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"

    async def scenario() -> float:
        events, writer = writer_on(path)
        events.emit(stream_event(0))
        started = time.monotonic()
        events.emit(stream_event(1))
        # a stalled stream: no other event comes
        waited = await seconds_until_on_disk(path, ["model_stream"] * 2, started, "the stream events")
        writer.close()
        return waited

    assert asyncio.run(scenario()) < FLUSH_INTERVAL + 1.0  # the interval, plus a loaded machine's delay


def test_closing_flushes_and_a_late_timer_does_no_harm(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"

    async def scenario() -> None:
        events, writer = writer_on(path)
        events.emit(stream_event(0))
        writer.close()
        await asyncio.sleep(FLUSH_INTERVAL * 2)  # the cancelled flush would have come by now

    asyncio.run(scenario())
    assert on_disk(path) == ["model_stream"]


def test_a_grouped_writer_holds_what_came_in_until_a_request_goes_out(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"

    async def scenario() -> tuple[list[str], list[str], list[str]]:
        events, writer = writer_on(path, grouped=True)
        for event in what_came_in():
            events.emit(event)
        held = on_disk(path)
        events.emit(mcp("mcp_request", "out", 8))
        after_call = on_disk(path)
        events.emit(ModelResponseEvent(turn=2, status=200, body={"output": []}, elapsed=0.1))
        events.emit(ModelRequestEvent(turn=2, url="http://127.0.0.1:1/v1/responses", body={"input": []}))
        after_request = on_disk(path)
        writer.close()
        return held, after_call, after_request

    held, after_call, after_request = asyncio.run(scenario())
    assert held == []
    assert after_call == ["model_response", "call_parsed", "mcp_response", "call_outcome", "mcp_request"]
    assert after_request == [*after_call, "model_response", "model_request"]


def test_a_grouped_writer_puts_what_came_in_on_disk_within_the_flush_interval(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"

    async def scenario() -> float:
        events, writer = writer_on(path, grouped=True)
        started = time.monotonic()
        events.emit(mcp("mcp_response", "in", 7))  # then nothing: a model that takes its time
        waited = await seconds_until_on_disk(path, ["mcp_response"], started, "the answer")
        writer.close()
        return waited

    assert asyncio.run(scenario()) < FLUSH_INTERVAL + 1.0  # the interval, plus a loaded machine's delay


def test_a_writer_not_grouped_puts_what_came_in_on_disk_at_once(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"

    async def scenario() -> list[str]:
        events, writer = writer_on(path)
        for event in what_came_in():
            events.emit(event)
        seen = on_disk(path)
        writer.close()
        return seen

    assert asyncio.run(scenario()) == ["model_response", "call_parsed", "mcp_response", "call_outcome"]
