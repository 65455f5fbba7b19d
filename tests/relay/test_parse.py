"""Stage 3, parse: output items read by type; a call_id reused within one response."""

from __future__ import annotations

from typing import Any

from toolrelay.relay.stages.parse import read_response


def function_call(call_id: str, name: str, arguments: str = "{}") -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}


def test_only_the_first_function_call_of_a_call_id_is_a_call_to_run() -> None:
    output = [
        function_call("a", "first"),
        {"type": "message", "content": [{"type": "output_text", "text": "hi"}]},
        function_call("b", "other"),
        function_call("a", "again", '{"x": 1}'),
        function_call("a", "third"),
    ]
    turn = read_response({"id": "resp_1", "status": "completed", "output": output})
    assert [(c.call_id, c.name) for c in turn.calls] == [("a", "first"), ("b", "other")]
    assert [(c.call_id, c.name, c.arguments_text) for c in turn.duplicates] == [
        ("a", "again", '{"x": 1}'), ("a", "third", "{}")
    ]
    assert turn.output == output  # every item is still replayed unchanged
