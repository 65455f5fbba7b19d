"""Chat streams as real servers send them (tests/data/chat_streams): assembled by index or
without one, whole or in pieces, with or without usage and ``[DONE]``; replayed over real
HTTP into real runs, where each call starts as soon as its arguments are complete (the
next call began) and the transcript verifies.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from chat_helpers import chat_stream, check_wire, verified

from testkit.recorded_streams import ReplayEndpoint, events_of
from testkit.servers import CAPITAL_SERVER
from toolrelay.client.config import ServerConfig
from toolrelay.protocol.chat_stream import ChatStreamAssembler, assemble_chat
from toolrelay.protocol.sse import StreamEvent
from toolrelay.protocol.stream import ItemDone, StreamEnded, TextDelta
from toolrelay.relay.loop import RunLimits
from toolrelay.runner import RunOptions, run_async

CALLS = [("capitals__get_capital", {"country": "PotatoLand"}), ("capitals__final_result", {"result": 1})]
QUIRKY = ["openai_two_calls.sse", "llamacpp_whole_arguments.sse", "no_index_stop_no_usage.sse"]


def events(name: str) -> list[StreamEvent]:
    return [StreamEvent(index=i, event=None, data=block.decode().strip().removeprefix("data: "))
            for i, block in enumerate(events_of(chat_stream(name)))]


@pytest.mark.parametrize("name", QUIRKY)
def test_each_server_shape_assembles_to_its_two_calls(name: str) -> None:
    assembled = assemble_chat(events(name))
    assert assembled.response is not None and assembled.terminal == "completed"
    message = assembled.response["choices"][0]["message"]
    said = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message["tool_calls"]]
    assert said == CALLS
    assert all(c["id"] for c in message["tool_calls"]) and assembled.problems == []


@pytest.mark.parametrize("name", QUIRKY)
def test_a_call_closes_when_the_next_one_starts_and_the_last_at_the_finish(name: str) -> None:
    assembler = ChatStreamAssembler()
    closed: list[tuple[int, str]] = []
    for event in events(name):
        for update in assembler.feed(event):
            if isinstance(update, ItemDone):
                closed.append((event.index, update.item["name"]))
    first_start = next(e.index for e in events(name) if "capitals__final_result" in e.data)
    assert closed[0] == (first_start, "capitals__get_capital")  # the next call's first delta closed it
    assert closed[1][1] == "capitals__final_result" and closed[1][0] > first_start


def test_the_usage_chunk_and_unknown_fields_are_kept_verbatim() -> None:
    response = assemble_chat(events("openai_two_calls.sse")).response
    assert response is not None
    assert response["usage"]["completion_tokens_details"]["accepted_prediction_tokens"] == 0
    assert response["system_fingerprint"] == "fp_4c2851f862" and response["service_tier"] == "default"
    llama = assemble_chat(events("llamacpp_whole_arguments.sse")).response
    assert llama is not None and "usage" not in llama and llama["timings"]["predicted_n"] == 37


def test_text_arrives_as_deltas_and_the_stream_ends_once() -> None:
    assembler = ChatStreamAssembler()
    updates = [u for e in events("openai_answer.sse") for u in assembler.feed(e)]
    text = "".join(u.delta for u in updates if isinstance(u, TextDelta))
    assert text == "The capital of PotatoLand is Potato City."
    assert len([u for u in updates if isinstance(u, StreamEnded)]) == 1


def test_a_stream_cut_before_its_finish_has_no_terminal() -> None:
    assembled = assemble_chat(events("openai_two_calls.sse")[:4])
    assert assembled.terminal is None and not assembled.retry_safe


def test_an_error_chunk_fails_the_stream_with_its_message() -> None:
    error = StreamEvent(index=0, event=None, data='{"error":{"message":"context too long","code":"400"}}')
    assembled = assemble_chat([error])
    assert assembled.terminal == "error"
    assert assembled.response is not None and assembled.response["error"]["message"] == "context too long"


def _run(tmp_path: Path, replay: ReplayEndpoint, touch: Path, **options: object) -> object:
    server = ServerConfig(name="capitals", transport="stdio", command=sys.executable,
                          args=(str(CAPITAL_SERVER), "--touch", str(touch)))
    opts = RunOptions(model="qwen", base_url=replay.base_url, api="chat", config=[server], environ={},
                      transcript=tmp_path / "run.jsonl", limits=RunLimits(timeout=60), **options)  # type: ignore[arg-type]
    return asyncio.run(run_async("What is the capital of PotatoLand?", opts))


@pytest.mark.parametrize("name", QUIRKY)
def test_a_recorded_stream_runs_its_calls_early_and_verifies(tmp_path: Path, name: str) -> None:
    touch = tmp_path / "called"
    first = chat_stream(name)
    start = next(i for i, block in enumerate(events_of(first)) if b"capitals__final_result" in block)
    # the stream stops after the second call's first delta until the first call has reached the server
    answers = (first, chat_stream("openai_answer.sse"))
    with ReplayEndpoint(*answers, hold_at=start + 1, hold_first_until=touch) as replay:
        result = _run(tmp_path, replay, touch)
    assert replay.held, "the first call did not start while the stream was held"
    assert result.status == "completed", result.reason  # type: ignore[attr-defined]
    assert result.final_text == "The capital of PotatoLand is Potato City."  # type: ignore[attr-defined]
    assert replay.paths == ["/v1/chat/completions"] * 2
    for body in replay.bodies:
        check_wire("chat", body)
    second = replay.bodies[1]["messages"]
    assistant, *tools = second[-3:]
    assert [c["id"] for c in assistant["tool_calls"]] == [t["tool_call_id"] for t in tools]
    assert tools[0]["content"] == "Potato City"
    assert verified(tmp_path / "run.jsonl") == ""
