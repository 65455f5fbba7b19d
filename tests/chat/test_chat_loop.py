"""The loop's main behaviours in both dialects, streamed and not: one shared suite.

Each test runs against the offline stand-in (real loopback HTTP: ``/v1/responses`` or
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


@EACH_MODE
def test_one_call_is_paired_fed_back_and_the_context_replayed(tmp_path: Path, api: str, stream: bool) -> None:
    script = {"turns": [{"calls": [call("fs__read_text_file", path="notes.txt", head=20)]}]}
    run = run_dialect(tmp_path, script, api=api, stream=stream)
    assert run.result.status == "completed", run.result.reason
    first, second = run.requests
    assert first["input"] == [{"role": "user", "content": "Read the first 20 lines of notes.txt"}]
    [called] = run.calls(1)
    [output] = run.outputs(1)
    assert output == {"type": "function_call_output", "call_id": called["call_id"], "output": FIRST_20}
    assert json.loads(called["arguments"]) == {"path": "notes.txt", "head": 20}
    [outcome] = run.result.calls
    assert outcome.call_id == called["call_id"] and outcome.status == "ok"
    assert outcome.request is not None
    assert outcome.request["params"]["arguments"] == {"path": "notes.txt", "head": 20}
    assert second["tools"] == first["tools"]
    assert run.result.final_text == "The tool returned:\n" + FIRST_20
    assert {e["dialect"] for e in run.records("model_request")} == {api}
    assert verified(run.transcript) == ""
    if api == "chat":
        wire = run.wire[1]
        assistant, tool = wire["messages"][-2:]
        assert assistant["role"] == "assistant" and tool["role"] == "tool"
        assert assistant["tool_calls"][0]["id"] == tool["tool_call_id"] == outcome.call_id
        assert assistant["tool_calls"][0]["function"]["arguments"] == called["arguments"]
        assert wire["tools"][0]["type"] == "function" and "name" in wire["tools"][0]["function"]
        assert (wire.get("stream_options") == {"include_usage": True}) is stream
        assert run.result.usage.get("total_tokens", 0) > 0  # from the usage chunk or the completion


@EACH_MODE
def test_parallel_calls_get_their_outputs_in_the_calls_order(tmp_path: Path, api: str, stream: bool) -> None:
    script = {"turns": [{"calls": [call("fs__read_text_file", path="notes.txt", head=2),
                                   call("fs__read_text_file", path="todo.md", tail=1)]},
                        {"message": "done"}]}
    run = run_dialect(tmp_path, script, api=api, stream=stream)
    calls, outputs = run.calls(1), run.outputs(1)
    assert [o["call_id"] for o in outputs] == [c["call_id"] for c in calls] and len(calls) == 2
    assert [o["output"] for o in outputs] == ["line 1\nline 2\n", "- ship\n"]
    assert len({c.mcp_id for c in run.result.calls}) == 2
    assert run.result.status == "completed" and run.result.final_text == "done"
    assert run.requests[0]["parallel_tool_calls"] is True
    assert verified(run.transcript) == ""
    if api == "chat":
        [assistant] = [m for m in run.wire[1]["messages"] if m["role"] == "assistant"]
        tools = [m for m in run.wire[1]["messages"] if m["role"] == "tool"]
        assert [c["id"] for c in assistant["tool_calls"]] == [m["tool_call_id"] for m in tools]


@EACH_MODE
def test_a_tool_error_goes_back_as_an_error(tmp_path: Path, api: str, stream: bool) -> None:
    script = {"turns": [{"calls": [call("fs__read_text_file", path="missing.txt")]}]}
    run = run_dialect(tmp_path, script, api=api, stream=stream)
    [outcome] = run.result.calls
    assert outcome.status == "tool_error"
    [output] = run.outputs(1)
    assert output["output"].startswith("Error (tool): ") and "missing.txt" in output["output"]
    assert run.result.status == "completed"
    assert verified(run.transcript) == ""


@EACH_MODE
def test_max_turns_and_max_tool_calls_stop_the_run(tmp_path: Path, api: str, stream: bool) -> None:
    again = {"calls": [call("fs__read_text_file", path="notes.txt", head=1)]}
    run = run_dialect(tmp_path / "turns", {"turns": [again, again, again]}, api=api, stream=stream,
                      limits=RunLimits(max_turns=2))
    assert run.result.status == "max_turns" and "--max-turns 2" in run.result.reason
    assert len(run.wire) == 2
    assert verified(run.transcript) == ""
    two = {"calls": [call("fs__read_text_file", path="notes.txt", head=1),
                     call("fs__read_text_file", path="todo.md", head=1)]}
    run = run_dialect(tmp_path / "calls", {"turns": [two]}, api=api, stream=stream,
                      limits=RunLimits(max_tool_calls=1))
    assert run.result.status == "max_tool_calls"
    assert len([e for e in run.records("mcp_request") if e.get("method") == "tools/call"]) <= 1
    assert verified(run.transcript) == ""


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
