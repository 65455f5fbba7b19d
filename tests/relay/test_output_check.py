"""A result against its tool's outputSchema (relay.output_check, through the call stage's
classifier): a broken promise is ``invalid_output`` and the model reads it as an error."""

from __future__ import annotations

from typing import Any

import pytest

from toolrelay.protocol import jsonrpc
from toolrelay.protocol.exchange import Exchange
from toolrelay.relay.stages.feedback import render_output
from toolrelay.relay.stages.outcomes import outcome_from_exchange
from toolrelay.relay.stages.output_check import output_problem
from toolrelay.relay.stages.parse import FunctionCall
from toolrelay.relay.stages.result import CallRoute

SCHEMA = {
    "type": "object",
    "properties": {"temperature": {"type": "number"}, "unit": {"enum": ["C", "F"]}},
    "required": ["temperature", "unit"],
    "additionalProperties": False,
}


def classify(result: dict[str, Any], schema: Any = SCHEMA) -> Any:
    request = jsonrpc.request(4, "tools/call", {"name": "weather", "arguments": {}})
    exchange = Exchange(mcp_id=4, method="tools/call", request=request)
    exchange.settle(jsonrpc.classify({"jsonrpc": "2.0", "id": 4, "result": result}))
    call = FunctionCall(call_id="c1", name="w__weather", arguments_text="{}")
    return outcome_from_exchange(
        exchange, call=call, route=CallRoute(server="w", tool="weather", connection=1), output_schema=schema,
    )


def test_a_result_keeping_its_schema_is_a_success() -> None:
    outcome = classify({"content": [], "structuredContent": {"temperature": 21.5, "unit": "C"}})
    assert (outcome.status, outcome.message) == ("ok", "")


def test_a_field_of_the_wrong_type_is_invalid_output_naming_the_field() -> None:
    outcome = classify({"content": [{"type": "text", "text": "warm"}],
                        "structuredContent": {"temperature": "warm", "unit": "C"}})
    assert outcome.status == "invalid_output"
    assert outcome.message == (
        "structuredContent does not match the tool's outputSchema: "
        'temperature: expected number, got "warm" (string)'
    )
    assert render_output(outcome) == "Error (invalid output): " + outcome.message


def test_a_missing_structured_result_is_invalid_output() -> None:
    outcome = classify({"content": [{"type": "text", "text": "21 C"}]})
    assert outcome.status == "invalid_output"
    assert outcome.message == "the tool declares an outputSchema but its result has no structuredContent"


def test_a_structured_result_that_is_not_an_object_names_the_whole_value() -> None:
    outcome = classify({"content": [], "structuredContent": [1, 2]})
    assert outcome.message.endswith("(structuredContent): expected object, got [1, 2] (array)")


def test_a_tool_error_is_not_held_to_the_schema() -> None:
    outcome = classify({"content": [{"type": "text", "text": "no such city"}], "isError": True})
    assert outcome.status == "tool_error"


def test_a_tool_without_an_output_schema_is_not_checked() -> None:
    assert classify({"content": [], "structuredContent": {"anything": 1}}, schema=None).status == "ok"


@pytest.mark.parametrize(
    ("schema", "said"),
    [
        ("not a schema", "the tool's outputSchema is not a JSON object, so its result cannot be checked"),
        ({"type": 12}, "the tool's outputSchema is invalid, so its result cannot be checked: "),
    ],
)
def test_an_unusable_output_schema_is_the_servers_fault_and_never_a_success(schema: Any, said: str) -> None:
    problem = output_problem({"content": [], "structuredContent": {}}, schema, key="w/bad")
    assert problem is not None and problem.startswith(said)
