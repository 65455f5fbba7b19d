"""Real recorded streams (tests/data/streams) replayed over loopback HTTP, through
``ResponsesClient.create(..., on_update=)``: what the client hands on, returns and records
must be what the recording holds."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from model_helpers import run
from stream_endpoint import Streamed, StreamEndpoint, split

from conftest import REPO
from responses_helpers import Recorder, recorded_stream
from toolrelay.model import ModelEndpoint, ModelReply, ResponsesClient
from toolrelay.protocol.stream import ItemAdded, ItemDone, StreamEnded, TextDelta, Update

STREAMS = REPO / "tests" / "data" / "streams"
BODY = {"model": "gpt-5.5", "input": "What is the capital of PotatoLand?", "stream": True}


def recorded(name: str) -> bytes:
    return (STREAMS / name).read_bytes()


def blocks(raw: bytes) -> list[tuple[str, str]]:
    """The recording's (event, data) pairs, read plainly (not with toolrelay's parser)."""
    found = []
    for block in raw.decode().split("\n\n"):
        if block.strip():
            event, data = block.split("\n")
            found.append((event.removeprefix("event: "), data.removeprefix("data: ")))
    return found


Replayed = tuple[list[ModelReply], Recorder, list[tuple[int, Update]]]


def replay(*answers: Streamed, bodies: list[dict[str, Any]] | None = None) -> Replayed:
    """Each request body in turn, answered by the endpoint; the replies, the records and
    every update with its turn."""
    updates: list[tuple[int, Update]] = []
    events, recorder = recorded_stream()

    async def scenario() -> list[ModelReply]:
        with StreamEndpoint(*answers) as endpoint:
            client_endpoint = ModelEndpoint(base_url=endpoint.base_url, api_key="sk-recorded")
            async with ResponsesClient(client_endpoint, events=events, timeout=10) as client:
                replies = []
                for turn, body in enumerate(bodies or [BODY], 1):
                    def on_update(update: Update, turn: int = turn) -> None:
                        updates.append((turn, update))
                    replies.append(await client.create(body, turn=turn, on_update=on_update))
                return replies

    return run(scenario()), recorder, updates


@pytest.mark.parametrize("piece", [7, 100, 1 << 20], ids=["7-byte-pieces", "100-byte-pieces", "whole"])
def test_gpt55_call_turn_replayed(piece: int) -> None:
    raw = recorded("phase_streamed_on_part_start.sse")
    (reply,), recorder, updates = replay(Streamed(split(raw, piece)))
    said = blocks(raw)
    completed = json.loads(said[-1][1])["response"]

    assert reply.streamed and reply.status == 200 and reply.raw == raw
    assert reply.body == completed  # its output is non-empty: the completed event's Response
    assert reply.assembled is not None
    assert reply.assembled.problems == [] and reply.assembled.differences == []
    # the recorded events, each exactly as received, one transcript record each
    streamed = recorder.records("model_stream")
    assert [(r["event"], r["data"]) for r in streamed] == said
    assert [r["index"] for r in streamed] == list(range(33)) and {r["attempt"] for r in streamed} == {1}
    (response,) = recorder.records("model_response")
    assert (response["streamed"], response["stream_events"], response["body"]) == (True, 33, completed)
    assert "differences" not in response and "cut" not in response  # defaults are left out
    # the updates: text as it came, the items as they closed
    kinds = [type(u).__name__ for _, u in updates]
    assert kinds == ["ItemAdded", "ItemDone", "ItemAdded", *["TextDelta"] * 13, "ItemDone", "ItemAdded",
                     "ItemDone", "StreamEnded"]
    text = "".join(u.delta for _, u in updates if isinstance(u, TextDelta))
    assert text == completed["output"][1]["content"][0]["text"]
    reasoning_added = next(u.item for _, u in updates if isinstance(u, ItemAdded))
    reasoning_done, _, call = (u.item for _, u in updates if isinstance(u, ItemDone))
    # the reasoning item to replay is the done one; the added one's content differs
    assert reasoning_done["encrypted_content"] == json.loads(said[3][1])["item"]["encrypted_content"]
    assert reasoning_added["encrypted_content"] != reasoning_done["encrypted_content"]
    # the call's name is the item's (arguments.done carries none)
    assert (call["name"], call["call_id"], call["arguments"]) == (
        "get_capital", "call_LabG58Uhrq9kZvR52BYKjToD", '{"country":"PotatoLand"}')
    assert isinstance(updates[-1][1], StreamEnded) and updates[-1][1].response == completed


def test_gpt5_call_with_usage_replayed() -> None:
    raw = recorded("streaming_usage.sse")
    (reply,), recorder, updates = replay(Streamed(split(raw, 64)))
    completed = json.loads(blocks(raw)[-1][1])["response"]
    assert reply.body == completed and reply.body["usage"]["total_tokens"] == 522
    assert [r["data"] for r in recorder.records("model_stream")] == [d for _, d in blocks(raw)]
    calls = [u.item for _, u in updates if isinstance(u, ItemDone) and u.item["type"] == "function_call"]
    assert [(c["name"], c["arguments"]) for c in calls] == [("final_result", '{"result":6666}')]


def test_a_two_turn_run_the_call_then_the_answer() -> None:
    first = recorded("phase_streamed_on_part_start.sse")
    second = recorded("phase_streamed_on_part_start_answer.sse")
    followed = {**BODY, "input": [BODY["input"], {"type": "function_call_output", "call_id": "call_Lab",
                                                  "output": "Potato City"}]}
    replies, recorder, updates = replay(Streamed(split(first, 512)), Streamed(split(second, 512)),
                                        bodies=[BODY, followed])
    assert [r.body["id"] for r in replies] == [json.loads(blocks(raw)[-1][1])["response"]["id"]
                                             for raw in (first, second)]
    answer = "".join(u.delta for turn, u in updates if turn == 2 and isinstance(u, TextDelta))
    assert answer == replies[1].body["output"][-1]["content"][0]["text"] and "Potato City" in answer
    assert [r["turn"] for r in recorder.records("model_response")] == [1, 2]


def test_updates_arrive_while_the_stream_is_still_open() -> None:
    """The last piece (response.completed) is held until the function call's ItemDone has
    been handed on: a client that waited for the whole answer would never get there."""
    raw = recorded("streaming_usage.sse")
    events = raw.split(b"\n\n")[:-1]
    released = threading.Event()
    answer = Streamed([b"\n\n".join(events[:-1]) + b"\n\n", events[-1] + b"\n\n"], before_last=released)
    seen: list[Update] = []

    def on_update(update: Update) -> None:
        seen.append(update)
        if isinstance(update, ItemDone) and update.item["type"] == "function_call":
            released.set()

    async def scenario() -> ModelReply:
        stream, _ = recorded_stream()
        with StreamEndpoint(answer) as endpoint:
            async with ResponsesClient(ModelEndpoint(base_url=endpoint.base_url), events=stream) as client:
                return await client.create(BODY, turn=1, on_update=on_update)

    reply = run(scenario())
    assert released.is_set() and isinstance(seen[-1], StreamEnded) and reply.body["status"] == "completed"
