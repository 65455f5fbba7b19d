"""Which script entry answers a request: the turn its context has reached, not a counter.

A request's turn is 1 + the number of times tool outputs came back in its context (the
chained history of ``previous_response_id`` plus the input; a run of consecutive
``function_call_output`` items counts once), so a retried or resumed request gets the
same entry as the first try. An ``http_status`` entry answers one request of the turn
after it, once; a ``stream_fault`` happens on the first answer of its turn only.
"""

from __future__ import annotations

import json
from typing import Any

from offline_helpers import post_json, raw_exchange

from responses_helpers import read_tool
from toolrelay.offline import OfflineModel, parse_script
from toolrelay.offline.turns import request_turn

USER = {"role": "user", "content": "go"}
READ = "fs__read_text_file"


def call(path: str) -> dict[str, Any]:
    return {"name": READ, "arguments": {"path": path, "head": 1, "tail": None}}


def post(model: OfflineModel, items: list[dict[str, Any]], **extra: Any) -> tuple[int, Any]:
    body = {"model": "offline", "input": items, "tools": [read_tool()], **extra}
    status, answer, _ = post_json(f"{model.base_url}/responses", body)
    return status, answer


def answered(model: OfflineModel, items: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    status, answer = post(model, items, **extra)
    assert status == 200, answer
    assert isinstance(answer, dict)
    return answer


def fed_back(items: list[dict[str, Any]], response: dict[str, Any]) -> list[dict[str, Any]]:
    """The next request's input (replay mode): the items so far, the response's output, its outputs."""
    calls = [item for item in response["output"] if item["type"] == "function_call"]
    outputs = [{"type": "function_call_output", "call_id": c["call_id"], "output": "ok"} for c in calls]
    return [*items, *response["output"], *outputs]


def paths(response: dict[str, Any]) -> list[str]:
    calls = [item for item in response["output"] if item["type"] == "function_call"]
    return [json.loads(item["arguments"])["path"] for item in calls]


def text(response: dict[str, Any]) -> str:
    return str(response["output"][-1]["content"][0]["text"])


SCRIPT = parse_script({"turns": [{"calls": [call("a")]}, {"calls": [call("b"), call("c")]},
                                 {"message": "done"}]})


def test_the_turn_is_one_more_than_the_outputs_that_came_back() -> None:
    output = {"type": "function_call_output", "call_id": "x", "output": "ok"}
    fc = {"type": "function_call", "call_id": "x", "name": READ, "arguments": "{}"}
    assert request_turn([USER]) == 1
    assert request_turn([USER, fc, output]) == 2
    assert request_turn([USER, fc, fc, output, output]) == 2  # one turn's two outputs count once
    assert request_turn([USER, fc, output, fc, output]) == 3


def test_each_request_gets_the_entry_of_its_turn_however_often_it_is_sent() -> None:
    with OfflineModel(SCRIPT) as model:
        first = answered(model, [USER])
        again = answered(model, [USER])  # a retry, or a resumed run: the same turn
        second = answered(model, fed_back([USER], first))
        third = answered(model, fed_back(fed_back([USER], first), second))
    assert paths(first) == paths(again) == ["a"]
    assert paths(second) == ["b", "c"]
    assert text(third) == "done"


def test_the_order_of_requests_does_not_matter() -> None:
    with OfflineModel(SCRIPT) as model:
        first = answered(model, [USER])
        later = fed_back([USER], first)
        model.reset()
        assert paths(answered(model, later)) == ["b", "c"]  # turn 2 first, on a fresh stand-in
        assert paths(answered(model, [USER])) == ["a"]


def test_in_chain_mode_the_chained_history_counts() -> None:
    with OfflineModel(SCRIPT) as model:
        first = answered(model, [USER])
        outputs = fed_back([], first)[len(first["output"]):]
        second = answered(model, outputs, previous_response_id=first["id"])
        outputs = fed_back([], second)[len(second["output"]):]
        third = answered(model, outputs, previous_response_id=second["id"])
    assert paths(second) == ["b", "c"] and text(third) == "done"


def test_an_http_fault_answers_one_request_of_the_turn_after_it_and_the_retry_gets_the_turn() -> None:
    script = parse_script({"turns": [{"calls": [call("a")]}, {"http_status": 500}, {"http_status": 429},
                                     {"message": "done"}]})
    with OfflineModel(script) as model:
        first = answered(model, [USER])
        again = answered(model, [USER])  # the faults wait for turn 2
        following = fed_back([USER], first)
        statuses = [post(model, following)[0] for _ in range(3)]
        final = answered(model, following)
    assert paths(first) == paths(again) == ["a"]
    assert statuses == [500, 429, 200] and text(final) == "done"


def test_a_stream_fault_happens_on_the_first_answer_of_its_turn_only() -> None:
    script = parse_script({"turns": [{"calls": [call("a")], "stream_fault": {"cut_after": 2}}]})
    with OfflineModel(script) as model:
        cut = _event_types(model)
        whole = _event_types(model)
    assert cut == ["response.created", "response.in_progress"]
    assert whole[:2] == cut and whole[-1] == "response.completed"


def _event_types(model: OfflineModel) -> list[str]:
    """The event types of one streamed answer to turn 1 (read until the server ends or cuts it)."""
    body = json.dumps({"model": "offline", "input": [USER], "tools": [read_tool()], "stream": True}).encode()
    request = (b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    raw = raw_exchange(model.base_url, request).decode()
    return [json.loads(line[6:])["type"] for line in raw.splitlines() if line.startswith("data: ")]
