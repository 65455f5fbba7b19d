"""Real streams the OpenAI API sent (tests/data/streams, byte for byte), through the SSE
parser and the assembler alone: what a client must take from where."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from conftest import REPO
from toolrelay.protocol.sse import SseParser, StreamEvent
from toolrelay.protocol.stream import ItemAdded, ItemDone, StreamAssembler, StreamEnded, TextDelta, Update

STREAMS = REPO / "tests" / "data" / "streams"


def read(name: str) -> list[StreamEvent]:
    parser = SseParser()
    events = parser.feed((STREAMS / name).read_bytes())
    assert parser.end() == []  # every event ended with its blank line
    return events


def feed(events: list[StreamEvent]) -> tuple[list[Update], StreamAssembler]:
    assembler = StreamAssembler()
    return [update for event in events for update in assembler.feed(event)], assembler


def payload(event: StreamEvent) -> dict:  # type: ignore[type-arg]
    assert event.payload is not None
    return event.payload


def test_the_files_are_the_recorded_bytes_the_readme_names() -> None:
    readme = (STREAMS / "README.md").read_text(encoding="utf-8")
    listed = {name: digest for digest, name in re.findall(r"^    ([0-9a-f]{64})  (\S+)$", readme, re.M)}
    files = sorted(path.name for path in STREAMS.glob("*.sse"))
    assert sorted(listed) == files and len(files) == 3
    for name in files:
        assert hashlib.sha256((STREAMS / name).read_bytes()).hexdigest() == listed[name], name


def test_gpt55_reasoning_commentary_and_call() -> None:
    events = read("phase_streamed_on_part_start.sse")
    updates, assembler = feed(events)
    completed = payload(events[-1])["response"]
    added_reasoning, done_reasoning = (payload(e)["item"] for e in events[2:4])
    assert added_reasoning["encrypted_content"] != done_reasoning["encrypted_content"]

    text = "".join(u.delta for u in updates if isinstance(u, TextDelta))
    assert text == "I’ll check the capital lookup tool for “PotatoLand.”"
    done = [u.item for u in updates if isinstance(u, ItemDone)]
    assert [item["type"] for item in done] == ["reasoning", "message", "function_call"]
    assert done[1]["phase"] == "commentary"
    # arguments.done has no name: it is the item's
    arguments_done = next(payload(e) for e in events if e.type == "response.function_call_arguments.done")
    assert "name" not in arguments_done
    assert {k: done[2][k] for k in ("name", "call_id", "arguments")} == {
        "name": "get_capital", "call_id": "call_LabG58Uhrq9kZvR52BYKjToD",
        "arguments": '{"country":"PotatoLand"}',
    }
    assert isinstance(updates[-1], StreamEnded) and updates[-1].status == "completed"

    result = assembler.finish()
    assert result.response == completed  # non-empty output: the terminal event's response is used
    assert result.problems == [] and result.differences == []  # encrypted_content: a known difference
    assert result.built is not None and result.built["usage"] == completed["usage"]
    # the reasoning item replayed later is the done one, never the added one
    assert result.built["output"][0]["encrypted_content"] == done_reasoning["encrypted_content"]
    assert result.built["output"][1:] == completed["output"][1:]


def test_gpt5_call_in_six_argument_deltas_with_usage() -> None:
    events = read("streaming_usage.sse")
    updates, assembler = feed(events)
    assert [type(u) for u in updates] == [ItemAdded, ItemDone, ItemAdded, ItemDone, StreamEnded]
    assert sum(e.type == "response.function_call_arguments.delta" for e in events) == 6
    result = assembler.finish()
    assert result.response is not None and result.response["usage"]["total_tokens"] == 522
    call = result.response["output"][1]
    assert (call["name"], call["arguments"]) == ("final_result", '{"result":6666}')
    assert result.problems == [] and result.differences == [] and not result.retry_safe


def test_the_answer_after_the_call() -> None:
    updates, assembler = feed(read("phase_streamed_on_part_start_answer.sse"))
    result = assembler.finish()
    assert result.terminal == "completed" and result.problems == []
    text = "".join(u.delta for u in updates if isinstance(u, TextDelta))
    assert result.response is not None
    assert result.response["output"][-1]["content"][0]["text"] == text and "Potato City" in text


@pytest.mark.parametrize("name", ["phase_streamed_on_part_start.sse", "streaming_usage.sse"])
def test_an_empty_completed_output_builds_the_same_items_from_the_done_events(name: str) -> None:
    events = read(name)
    emptied = payload(events[-1])
    emptied["response"]["output"] = []
    last = StreamEvent(index=events[-1].index, event=events[-1].event, data=json.dumps(emptied))
    result = feed([*events[:-1], last])[1].finish()
    original = payload(read(name)[-1])["response"]["output"]
    assert result.response is result.built and result.problems == []
    built = [_without_encrypted(item) for item in result.response["output"]]
    assert built == [_without_encrypted(item) for item in original]


def _without_encrypted(item: dict) -> dict:  # type: ignore[type-arg]
    return {key: value for key, value in item.items() if key != "encrypted_content"}


def test_the_recordings_split_anywhere_assemble_the_same() -> None:
    raw = (STREAMS / "phase_streamed_on_part_start.sse").read_bytes()
    whole = feed(read("phase_streamed_on_part_start.sse"))[1].finish()
    for size in (1, 7, 64, 1000):
        parser, assembler = SseParser(), StreamAssembler()
        for start in range(0, len(raw), size):
            for event in parser.feed(raw[start:start + size]):
                assembler.feed(event)
        assert assembler.finish() == whole, size
