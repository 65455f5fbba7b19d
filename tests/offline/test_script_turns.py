"""The script entry a request gets follows from the request (its context), not from how
many requests the stand-in has answered: resumed, re-sent and interleaved runs each get
their own turn's entry."""

from __future__ import annotations

from typing import Any

from offline_helpers import post_json

from responses_helpers import read_tool
from toolrelay.offline import OfflineModel, parse_script
from toolrelay.offline.turns import context_turn, entry_turns

USER = {"role": "user", "content": "go"}
SCRIPT = {"turns": [
    {"calls": [{"name": "fs__read_text_file", "arguments": {"path": "a.txt"}}]},
    {"http_status": 429, "retry_after": 0},
    {"calls": [{"name": "fs__read_text_file", "arguments": {"path": "b.txt"}},
               {"name": "fs__read_text_file", "arguments": {"path": "c.txt"}}]},
    {"message": "all read"},
]}


def ask(model: OfflineModel, items: list[dict[str, Any]], **body: Any) -> tuple[int, dict[str, Any]]:
    status, answer, _ = post_json(
        f"{model.base_url}/responses", {"model": "offline", "input": items, "tools": [read_tool()], **body}
    )
    assert isinstance(answer, dict)
    return status, answer


def outputs_for(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The response's items and an output for each of its calls: what a replayed turn adds."""
    items = list(response["output"])
    calls = [item for item in items if item["type"] == "function_call"]
    return items + [{"type": "function_call_output", "call_id": c["call_id"], "output": "x"} for c in calls]


def paths(response: dict[str, Any]) -> list[str]:
    return [item["arguments"] for item in response["output"] if item["type"] == "function_call"]


def test_a_turn_is_one_more_than_the_blocks_of_outputs_in_the_context() -> None:
    call = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "x"}
    assert context_turn([USER]) == 1
    assert context_turn([USER, call, output]) == 2
    assert context_turn([USER, call, call, output, output]) == 2  # parallel calls: one turn
    assert context_turn([USER, call, output, call, output]) == 3
    # a fault shares its turn with the entry after it; a final message does not move on
    assert entry_turns(parse_script(SCRIPT)) == (1, 2, 2, 3)


def test_a_conversation_resumed_on_a_fresh_stand_in_continues_its_script() -> None:
    script = parse_script(SCRIPT)
    with OfflineModel(script) as first:
        _, turn_1 = ask(first, [USER])
    history = [USER, *outputs_for(turn_1)]
    with OfflineModel(script) as second:  # knows nothing of the first: only the request says where
        status, turn_2 = ask(second, history)  # jumping to a turn skips its faults
        _, turn_3 = ask(second, [*history, *outputs_for(turn_2)])
    assert status == 200 and paths(turn_1) == ['{"path":"a.txt"}']
    assert paths(turn_2) == ['{"path":"b.txt"}', '{"path":"c.txt"}']
    assert turn_3["output"][0]["content"][0]["text"] == "all read"
    # the new stand-in's ids continue past the ones the conversation already holds
    first_ids = {item["call_id"] for item in turn_1["output"]}
    assert first_ids.isdisjoint(item["call_id"] for item in turn_2["output"])


def test_interleaved_conversations_each_get_their_own_turn() -> None:
    with OfflineModel(parse_script(SCRIPT)) as model:
        _, a_1 = ask(model, [USER])
        _, b_1 = ask(model, [USER])  # a second run starting while the first is at turn 2
        a_history = [USER, *outputs_for(a_1)]
        statuses = [ask(model, a_history)[0] for _ in range(2)]
        _, a_2 = ask(model, a_history)
        _, b_2 = ask(model, [USER, *outputs_for(b_1)])
    assert paths(a_1) == paths(b_1) == ['{"path":"a.txt"}']
    assert statuses == [429, 200]
    assert paths(a_2) == paths(b_2) == ['{"path":"b.txt"}', '{"path":"c.txt"}']


def test_chain_mode_reads_the_turn_from_the_chained_history() -> None:
    with OfflineModel(parse_script(SCRIPT)) as model:
        _, turn_1 = ask(model, [USER])
        call = turn_1["output"][0]
        output = {"type": "function_call_output", "call_id": call["call_id"], "output": "x"}
        ask(model, [output], previous_response_id=turn_1["id"])  # the 429 of turn 2
        _, turn_2 = ask(model, [output], previous_response_id=turn_1["id"])
    assert paths(turn_2) == ['{"path":"b.txt"}', '{"path":"c.txt"}']
