"""What only the chat wire says, streamed and not, and early execution in both dialects.

The loop's behaviours shared by both dialects are tested once, over the ``dialect`` fixture
(tests/loop/test_loop_e2e.py, test_loop_failures.py, the host and batch tests). Each test
here runs against the offline stand-in (real loopback HTTP: ``/v1/responses`` or
``/v1/chat/completions``, the same script), checks every request body against the openai
package's types of its dialect, reads the bodies back in the loop's vocabulary for the
shared assertions, and verifies the run's transcript. The chat-only assertions say what
the chat wire carries: ``tool_calls[].id`` ↔ the ``tool`` message's ``tool_call_id``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import MODE_IDS, MODES, run_dialect, verified

from toolrelay.relay.loop import RunLimits

EACH_MODE = pytest.mark.parametrize(("api", "stream"), MODES, ids=MODE_IDS)
FIRST_20 = "".join(f"line {i}\n" for i in range(1, 21))


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_the_chat_wire_pairs_each_tool_call_with_its_tool_message(tmp_path: Path, stream: bool) -> None:
    script = {"turns": [{"calls": [call("fs__read_text_file", path="notes.txt", head=20),
                                   call("fs__read_text_file", path="todo.md", tail=1)]},
                        {"message": "done"}]}
    run = run_dialect(tmp_path, script, api="chat", stream=stream)
    assert run.result.status == "completed", run.result.reason
    assert [o["output"] for o in run.outputs(1)] == [FIRST_20, "- ship\n"]
    assert verified(run.transcript) == ""
    assert {e["dialect"] for e in run.records("model_request")} == {"chat"}
    wire = run.wire[1]
    [assistant] = [m for m in wire["messages"] if m["role"] == "assistant"]
    tools = [m for m in wire["messages"] if m["role"] == "tool"]
    assert [c["id"] for c in assistant["tool_calls"]] == [m["tool_call_id"] for m in tools] \
        == [c.call_id for c in run.result.calls]
    sent = [c["function"]["arguments"] for c in assistant["tool_calls"]]
    assert sent == [c["arguments"] for c in run.calls(1)]
    assert json.loads(sent[0]) == {"path": "notes.txt", "head": 20}
    assert wire["tools"][0]["type"] == "function" and "name" in wire["tools"][0]["function"]
    assert (wire.get("stream_options") == {"include_usage": True}) is stream
    assert run.result.usage.get("total_tokens", 0) > 0  # from the usage chunk or the completion


@EACH_MODE
def test_early_calls_start_while_the_answer_streams_and_are_proven(
    tmp_path: Path, api: str, stream: bool
) -> None:
    script = {"turns": [{"calls": [call("fs__read_text_file", path="notes.txt", head=2),
                                   call("fs__read_text_file", path="todo.md", tail=1)], "pause": 0.3},
                        {"message": "done"}]}
    run = run_dialect(tmp_path, script, api=api, stream=stream, limits=RunLimits(early="all"))
    assert run.result.status == "completed"
    response = next(e["seq"] for e in run.records("model_response") if e["turn"] == 1)
    parsed = [e["seq"] for e in run.records("call_parsed")]
    assert len(parsed) == 2
    if stream:  # the first call closed as the second began: it was read before the response
        assert parsed[0] < response
    else:
        assert min(parsed) > response
    assert verified(run.transcript) == ""


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_the_instructions_are_a_system_message_and_the_task_a_user_one(tmp_path: Path, stream: bool) -> None:
    run = run_dialect(tmp_path, {"turns": [{"message": "hi"}]}, api="chat", stream=stream,
                      instructions="Be brief.", server_instructions=False)
    [body] = run.wire
    assert body["messages"] == [{"role": "system", "content": "Be brief."},
                                {"role": "user", "content": "Read the first 20 lines of notes.txt"}]
    assert body["tool_choice"] == "auto"
    assert run.result.final_text == "hi"
    assert verified(run.transcript) == ""


def test_a_tool_choice_naming_a_tool_is_the_chat_function_choice(tmp_path: Path) -> None:
    script = {"turns": [{"calls": [call("fs__read_text_file", path="notes.txt", head=1)]}, {"message": "ok"}]}
    run = run_dialect(tmp_path, script, api="chat", stream=False, tool_choice="fs__read_text_file",
                      parallel_tool_calls=False)
    assert run.wire[0]["tool_choice"] == {"type": "function", "function": {"name": "fs__read_text_file"}}
    assert run.wire[0]["parallel_tool_calls"] is False
    assert verified(run.transcript) == ""
