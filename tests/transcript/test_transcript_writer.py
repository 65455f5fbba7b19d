"""The transcript writer's durability: every event is on disk as it is written, except a
streamed answer's events, which are flushed together — by the next other event, or within
``FLUSH_INTERVAL`` — so a killed run loses at most the stream events of that interval."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from toolrelay.events import EventStream, ModelStreamEvent, Notice
from toolrelay.transcript.writer import FLUSH_INTERVAL, TranscriptWriter


def on_disk(path: Path) -> list[str]:
    """The kinds of the complete lines another reader sees now (not the writer's buffer)."""
    return [json.loads(line)["kind"] for line in path.read_text(encoding="utf-8").split("\n")[:-1]]


def stream_event(index: int) -> ModelStreamEvent:
    data = json.dumps({"type": "response.output_text.delta", "sequence_number": index, "delta": "tok"})
    return ModelStreamEvent(turn=1, attempt=1, index=index, event="response.output_text.delta", data=data)


def writer_on(path: Path) -> tuple[EventStream, TranscriptWriter]:
    events = EventStream()
    writer = TranscriptWriter(path, "run-1")
    events.subscribe(writer)
    return events, writer


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
        deadline = started + 10
        while on_disk(path) != ["model_stream", "model_stream"]:  # a stalled stream: no other event comes
            assert time.monotonic() < deadline, "the stream events never reached the disk"
            await asyncio.sleep(FLUSH_INTERVAL / 10)
        waited = time.monotonic() - started
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
