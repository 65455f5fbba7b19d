"""Chat streams recorded from the live OpenAI API (tests/data/chat_streams/README.md: the
openai-python test fixtures, byte for byte), assembled and replayed into real runs.

The calls toolrelay assembles are the ones openai-python's own tests expect of the same
bytes (ids, names, argument text). Their tools (``GetWeatherArgs``, ``get_stock_price``)
are no alias of a configured server, so each is fed back as an unknown tool: the replay
proves the reading and the pairing (each recorded ``tool_calls[].id`` answered by its
``tool`` message in the next request) and the transcript verifies.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import chat_stream, make_workspace, verified

from testkit.dialect import Dialect
from testkit.recorded_streams import ReplayEndpoint, events_of
from testkit.transcripts import transcript_events
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.protocol.chat_stream import assemble_chat
from toolrelay.protocol.sse import StreamEvent
from toolrelay.relay.loop import RunLimits
from toolrelay.runner import RunOptions, run_async

RECORDED = {
    "openai_python_one_call.sse": [
        ("call_c91SqDXlYFuETYv8mUHzz6pp", "GetWeatherArgs",
         '{"city":"Edinburgh","country":"UK","units":"c"}'),
    ],
    "openai_python_two_calls.sse": [
        ("call_JMW1whyEaYG438VE1OIflxA2", "GetWeatherArgs",
         '{"city": "Edinburgh", "country": "GB", "units": "c"}'),
        ("call_DNYTawLBoN8fj3KN6qU9N1Ou", "get_stock_price", '{"ticker": "AAPL", "exchange": "NASDAQ"}'),
    ],
}
"""Each recording's calls as openai-python's snapshot tests assert them (id, name, arguments)."""
EACH = pytest.mark.parametrize("name", sorted(RECORDED))


def stream_events(name: str) -> list[StreamEvent]:
    return [StreamEvent(index=i, event=None, data=block.decode().strip().removeprefix("data: "))
            for i, block in enumerate(events_of(chat_stream(name)))]


def said(call: dict[str, Any]) -> tuple[str, str, str]:
    """A chat tool call's (id, name, arguments)."""
    return call["id"], call["function"]["name"], call["function"]["arguments"]


@EACH
def test_a_recorded_stream_assembles_to_the_calls_openai_python_expects(name: str) -> None:
    assembled = assemble_chat(stream_events(name))
    assert assembled.terminal == "completed" and assembled.problems == []
    assert assembled.response is not None
    [choice] = assembled.response["choices"]
    assert choice["finish_reason"] == "tool_calls"
    assert [said(call) for call in choice["message"]["tool_calls"]] == RECORDED[name]
    assert assembled.response["usage"]["total_tokens"] > 0


@EACH
def test_a_recorded_stream_replayed_into_a_run_pairs_each_call_with_its_tool_message(
    tmp_path: Path, name: str
) -> None:
    workspace = make_workspace(tmp_path / "workspace")
    transcript = tmp_path / "run.jsonl"
    with ReplayEndpoint(chat_stream(name), chat_stream("openai_answer.sse")) as replay:
        options = RunOptions(model="gpt-4o-2024-08-06", base_url=replay.base_url, api="chat", environ={},
                             config=[in_process_file_server(workspace)], transcript=transcript,
                             limits=RunLimits(timeout=60))
        result = asyncio.run(run_async("What's the weather like in Edinburgh?", options))
    assert result.status == "completed", result.reason
    for body in replay.bodies:
        Dialect("chat").check(body)
    parsed = [(e["call_id"], e["alias"], e["arguments_text"])
              for e in transcript_events(transcript) if e["kind"] == "call_parsed"]
    assert parsed == RECORDED[name]  # the recorded bytes, read as the recording's calls
    ids = [call_id for call_id, _, _ in RECORDED[name]]
    assert [(c.call_id, c.status) for c in result.calls] == [(call_id, "unknown_tool") for call_id in ids]
    messages = replay.bodies[1]["messages"]
    [assistant] = [m for m in messages if m["role"] == "assistant"]
    tools = [m for m in messages if m["role"] == "tool"]
    assert [said(call) for call in assistant["tool_calls"]] == RECORDED[name]
    assert [m["tool_call_id"] for m in tools] == ids
    assert all(m["content"].startswith("Error (unknown tool): unknown tool ") for m in tools)
    assert verified(transcript) == ""
