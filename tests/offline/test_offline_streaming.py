"""The stand-in's streams on the wire: the event sequence the live API sends (obfuscation,
no name on arguments.done, a reasoning item whose added content does not verify), its
script keys, and a held stream that does not hold up other requests."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from offline_helpers import after_turns, post_json

from responses_helpers import read_tool
from toolrelay.errors import UsageError
from toolrelay.offline import OfflineModel, parse_script

CALL = {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 3, "tail": None}}


def streamed(model: OfflineModel, **extra: Any) -> list[dict[str, Any]]:
    """The data of every event of one streamed answer (checked against its event line)."""
    body = {"model": "offline", "input": "go", "tools": [read_tool()], "stream": True, **extra}
    status, text, headers = post_json(f"{model.base_url}/responses", body)
    assert status == 200 and headers["Content-Type"] == "text/event-stream", text
    found = []
    for block in text.strip().split("\n\n"):
        event, data = block.split("\n")
        payload = json.loads(data.removeprefix("data: "))
        assert event == f"event: {payload['type']}"
        found.append(payload)
    return found


def test_deltas_carry_obfuscation_and_arguments_done_no_name() -> None:
    turn = {"preamble": "I will read it.", "calls": [CALL], "tokens_per_second": 1e6}
    script = parse_script({"turns": [turn]})
    with OfflineModel(script) as model:
        events = streamed(model)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    deltas = [e for e in events if e["type"].endswith(".delta")]
    assert "".join(e["delta"] for e in deltas if "output_text" in e["type"]) == "I will read it."
    assert len(deltas) == 4 + 11  # four text tokens; 41 characters of arguments, four at a time
    assert all(len(e["delta"]) + len(e["obfuscation"]) == 16 for e in deltas)
    assert not any("obfuscation" in e for e in events if not e["type"].endswith(".delta"))
    (arguments_done,) = [e for e in events if e["type"] == "response.function_call_arguments.done"]
    assert "name" not in arguments_done
    assert arguments_done["arguments"] == '{"path":"notes.txt","head":3,"tail":null}'
    message_added = events[2]["item"]
    assert message_added["phase"] == "commentary" and message_added["content"] == []


def test_a_reasoning_summary_streams_and_only_the_done_item_verifies_on_replay() -> None:
    script = parse_script({"turns": [{"reasoning": "Read it first.", "calls": [CALL]}, {"message": "done"}]})
    include = {"include": ["reasoning.encrypted_content"], "store": False}
    with OfflineModel(script) as model:
        events = streamed(model, **include)
        kinds = [e["type"] for e in events]
        added = events[2]["item"]
        done = next(e["item"] for e in events if e["type"] == "response.output_item.done")
        call = events[-1]["response"]["output"][1]
        output = {"type": "function_call_output", "call_id": call["call_id"], "output": "x"}

        def replay(reasoning: dict[str, Any]) -> tuple[int, Any]:
            items = [{"role": "user", "content": "go"}, reasoning, call, output]
            body = {"model": "offline", "input": items, "tools": [read_tool()], **include}
            status, answer, _ = post_json(f"{model.base_url}/responses", body)
            return status, answer

        refused = replay(added)
        accepted = replay(done)
    assert kinds[2:8] == ["response.output_item.added", "response.reasoning_summary_part.added",
                          "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done",
                          "response.reasoning_summary_part.done", "response.output_item.done"]
    assert added["summary"] == [] and done["summary"] == [{"type": "summary_text", "text": "Read it first."}]
    assert added["encrypted_content"] != done["encrypted_content"]
    assert refused[0] == 400 and refused[1]["error"]["code"] == "invalid_encrypted_content"
    assert accepted[0] == 200, accepted[1]


def test_two_runs_send_the_same_bytes() -> None:
    turns = [{"reasoning": True, "preamble": "Checking.", "calls": [CALL], "tokens_per_second": 1e6}]

    def one_run() -> str:
        with OfflineModel(parse_script({"turns": turns})) as model:
            return json.dumps(streamed(model))

    assert one_run() == one_run()


def test_stream_keys_do_not_touch_a_request_that_does_not_stream(tmp_path: Path) -> None:
    turn = {"message": "hi", "hold_completed_until_file": str(tmp_path / "never"),
            "stream_fault": {"cut_after": 1}, "tokens_per_second": 1, "pause": 5}
    with OfflineModel(parse_script({"turns": [turn]})) as model:
        status, answer, _ = post_json(f"{model.base_url}/responses", {"model": "offline", "input": "go"})
    assert status == 200 and answer["status"] == "completed"
    assert answer["output"][0]["content"][0]["text"] == "hi"


def test_a_held_stream_does_not_hold_up_other_requests(tmp_path: Path) -> None:
    release = tmp_path / "release"
    script = parse_script({"turns": [{"message": "held", "hold_completed_until_file": str(release)},
                                     {"message": "meanwhile"}]})
    with OfflineModel(script) as model:
        held: list[list[dict[str, Any]]] = []
        reader = threading.Thread(target=lambda: held.append(streamed(model)))
        reader.start()
        deadline = time.monotonic() + 10
        while not model.requests and time.monotonic() < deadline:  # the held request has arrived
            time.sleep(0.005)
        later = {"model": "offline", "input": after_turns(1)}  # turn 2's request
        status, answer, _ = post_json(f"{model.base_url}/responses", later)
        assert held == []  # still held
        release.write_text("go")
        reader.join(10)
    assert status == 200 and answer["output"][0]["content"][0]["text"] == "meanwhile"
    assert held[0][-1]["type"] == "response.completed"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"message": "x", "tokens_per_second": 0}, "tokens_per_second must be a number > 0"),
        ({"message": "x", "pause": -1}, "pause must be a number >= 0"),
        ({"message": "x", "pause": True}, "pause must be a number >= 0"),
        ({"message": "x", "stream_fault": {"cut_after": -1}},
         "turns[0].stream_fault: cut_after must be an integer >= 0 (a number of events)"),
        ({"message": "x", "stream_fault": {"boom": 1}},
         "turns[0].stream_fault: expected an object with one of: error_after, cut_after, failed_after_call, "
         "no_completed"),
        ({"message": "x", "stream_fault": {"cut_after": 1, "no_completed": True}},
         "turns[0].stream_fault: expected an object with one of"),
        ({"message": "x", "stream_fault": {"no_completed": False}},
         "turns[0].stream_fault: no_completed must be true"),
        ({"message": "x", "hold_timeout": 3}, '"hold_timeout" goes with "hold_completed_until_file" only'),
        ({"message": "x", "hold_completed_until_file": ""}, "hold_completed_until_file must be a file path"),
        ({"tokens_per_second": 5}, "turns[0]: empty entry; give calls, message, refusal, status"),
        ({"http_status": 500, "pause": 1}, "turns[0]: 'pause' cannot go with http_status"),
        ({"message": "x", "preamble": 3}, "turns[0]: preamble must be a string"),
    ],
)
def test_bad_stream_keys_are_usage_errors_naming_the_place(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError) as failed:
        parse_script({"turns": [entry]}, source="s.json")
    assert message in str(failed.value) and str(failed.value).startswith("script s.json: turns[0]")


def test_stream_keys_are_read() -> None:
    (turn,) = parse_script({"turns": [{
        "preamble": "p", "calls": [CALL], "after_calls": "a", "tokens_per_second": 40, "pause": 0.5,
        "stream_fault": {"error_after": 3}, "hold_completed_until_file": "/tmp/x", "hold_timeout": 2,
    }]}).turns
    assert (turn.preamble, turn.after_calls) == ("p", "a")
    settings = turn.stream
    assert (settings.tokens_per_second, settings.pause, settings.hold_file, settings.hold_timeout) == (
        40.0, 0.5, "/tmp/x", 2.0)
    assert settings.fault is not None and settings.fault.error_after == 3
