"""A chat transcript is proven as a Responses one is: every tampered copy is rejected.

Each copy changes one recorded value of a real chat run (the stand-in over loopback HTTP,
the file service): the chain ``tool_calls[].id`` ↔ the tool message's ``tool_call_id`` ↔ the
MCP id, the arguments text ↔ ``params.arguments``, the next request carrying the assistant
message and every tool message, and the stream chunks ↔ the completion they make.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import run_dialect, verified

from testkit.transcripts import transcript_events
from toolrelay.verify import load_run, verify

Event = dict[str, Any]
SCRIPT = {"turns": [{"calls": [{"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 2}},
                               {"name": "fs__read_text_file", "arguments": {"path": "todo.md", "tail": 1}}]},
                    {"message": "done"}]}


@pytest.fixture(scope="module", params=[False, True], ids=["whole", "stream"])
def chat_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("stream" if request.param else "whole")
    run = run_dialect(folder, SCRIPT, api="chat", stream=request.param)
    assert run.result.status == "completed" and verified(run.transcript) == ""
    return run.transcript


def _events(path: Path) -> list[Event]:
    return transcript_events(path)  # request bodies whole: each later one is recorded as a delta


def _request(events: list[Event], turn: int) -> dict[str, Any]:
    return [e for e in events if e["kind"] == "model_request" and e["turn"] == turn][-1]["body"]


def _completion(events: list[Event], turn: int) -> dict[str, Any]:
    return [e for e in events if e["kind"] == "model_response" and e["turn"] == turn][-1]["body"]


def _tools(events: list[Event]) -> list[dict[str, Any]]:
    return [m for m in _request(events, 2)["messages"] if m["role"] == "tool"]


def _assistant(events: list[Event]) -> dict[str, Any]:
    return next(m for m in _request(events, 2)["messages"] if m["role"] == "assistant")


def other_tool_call_id(events: list[Event]) -> None:
    _tools(events)[0]["tool_call_id"] = "call_forged"


def swapped_tool_messages(events: list[Event]) -> None:
    messages = _request(events, 2)["messages"]
    first, second = (i for i, m in enumerate(messages) if m["role"] == "tool")
    messages[first], messages[second] = messages[second], messages[first]


def other_tool_content(events: list[Event]) -> None:
    _tools(events)[1]["content"] = "- nothing to do\n"


def dropped_tool_message(events: list[Event]) -> None:
    messages = _request(events, 2)["messages"]
    messages.remove(_tools(events)[1])


def dropped_assistant_message(events: list[Event]) -> None:
    _request(events, 2)["messages"].remove(_assistant(events))


def other_replayed_arguments(events: list[Event]) -> None:
    _assistant(events)["tool_calls"][0]["function"]["arguments"] = '{"path":"secret.txt","head":2}'


def other_answered_arguments(events: list[Event]) -> None:
    call = _completion(events, 1)["choices"][0]["message"]["tool_calls"][0]
    call["function"]["arguments"] = '{"path":"notes.txt","head":3}'


def other_answered_id(events: list[Event]) -> None:
    _completion(events, 1)["choices"][0]["message"]["tool_calls"][1]["id"] = "call_other"


def other_mcp_arguments(events: list[Event]) -> None:
    request = next(e for e in events if e["kind"] == "mcp_request" and e.get("method") == "tools/call")
    request["message"]["params"]["arguments"]["head"] = 5


CHANGES: list[Callable[[list[Event]], None]] = [
    other_tool_call_id, swapped_tool_messages, other_tool_content, dropped_tool_message,
    dropped_assistant_message, other_replayed_arguments, other_answered_arguments, other_answered_id,
    other_mcp_arguments,
]


LINKS = {
    "other_tool_call_id": "correlation", "swapped_tool_messages": "next_input",
    "other_tool_content": "feedback", "dropped_tool_message": "correlation",
    "dropped_assistant_message": "next_input", "other_replayed_arguments": "next_input",
    "other_answered_arguments": "parse", "other_answered_id": "parse", "other_mcp_arguments": "routing",
}
"""The first link each change breaks (a whole answer; a streamed one breaks at its chunks)."""


@pytest.mark.parametrize("change", CHANGES, ids=[c.__name__ for c in CHANGES])
def test_a_tampered_chat_transcript_is_rejected(chat_run: Path, tmp_path: Path,
                                                change: Callable[[list[Event]], None]) -> None:
    events = copy.deepcopy(_events(chat_run))
    change(events)
    target = tmp_path / "tampered.jsonl"
    target.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    verdict = verify(load_run(target))
    assert not verdict.ok and verdict.broken is not None
    expected = LINKS[change.__name__]
    if "stream" in chat_run.parent.name and change.__name__.startswith("other_answered"):
        expected = "model_response"  # the completion is no longer what its chunks make
    assert verdict.broken.link == expected, verdict.broken.message


def test_a_changed_stream_chunk_breaks_the_model_response_link(tmp_path: Path) -> None:
    run = run_dialect(tmp_path / "run", SCRIPT, api="chat", stream=True)
    events = _events(run.transcript)
    chunk = next(e for e in events if e["kind"] == "model_stream" and '"index":0,"function"' in e["data"])
    chunk["data"] = chunk["data"].replace('"arguments":"', '"arguments":"x', 1)
    target = tmp_path / "tampered.jsonl"
    target.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    verdict = verify(load_run(target))
    assert verdict.broken is not None and verdict.broken.link == "model_response"
    assert "stream events assemble to" in verdict.broken.message
