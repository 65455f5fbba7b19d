"""The offline model rejects what the real Responses API rejects, with the same 400 body.

Each case is a relay mistake the hosted API would refuse; the stand-in must refuse it too,
or offline runs would pass what real runs fail (spec.md §C1, §C4)."""

from __future__ import annotations

from typing import Any

import pytest
from offline_helpers import post_json

from responses_helpers import read_tool
from toolrelay.offline import OfflineModel, parse_script
from toolrelay.offline.state import encrypted_reasoning

USER = {"role": "user", "content": "first 2 lines of notes.txt"}
REASONING_SCRIPT = parse_script(
    {
        "turns": [
            {
                "reasoning": "I should read it",
                "calls": [{"name": "fs__read_text_file", "arguments": {"path": "a"}}],
            },
        ]
    }
)


def ask(model: OfflineModel, body: dict[str, Any]) -> tuple[int, Any]:
    status, answer, _ = post_json(f"{model.base_url}/responses", {"model": "offline", **body})
    return status, answer


def rejected(model: OfflineModel, body: dict[str, Any]) -> dict[str, Any]:
    status, answer = ask(model, body)
    assert status == 400, answer
    assert set(answer) == {"error"} and answer["error"]["type"] == "invalid_request_error"
    return dict(answer["error"])


def first_call(model: OfflineModel, **extra: Any) -> dict[str, Any]:
    status, answer = ask(model, {"input": [USER], "tools": [read_tool()], **extra})
    assert status == 200, answer
    return dict(answer)


def output(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def test_an_output_without_its_call_replay() -> None:
    with OfflineModel() as model:
        error = rejected(model, {"input": [USER, output("call_zzz")]})
    assert error == {
        "message": "No tool call found for function call output with call_id call_zzz.",
        "type": "invalid_request_error",
        "param": "input",
        "code": None,
    }


def test_an_output_without_its_call_chain() -> None:
    with OfflineModel() as model:
        first_call(model)
        error = rejected(
            model,
            {
                "previous_response_id": "resp_offline_0001",
                "input": [output("call_offline_0001"), output("call_other")],
            },
        )
    assert error["message"] == "No tool call found for function call output with call_id call_other."


def test_a_call_without_its_output_replay() -> None:
    with OfflineModel() as model:
        response = first_call(model)
        error = rejected(model, {"input": [USER, *response["output"]]})
    assert error["message"] == "No tool output found for function call call_offline_0001."
    assert error["param"] == "input"


def test_a_call_without_its_output_chain() -> None:
    with OfflineModel() as model:
        first_call(model)
        error = rejected(
            model,
            {"previous_response_id": "resp_offline_0001", "input": [{"role": "user", "content": "and now?"}]},
        )
    assert error["message"] == "No tool output found for function call call_offline_0001."


def test_two_outputs_for_one_call_are_rejected_in_replay_and_chain_mode() -> None:
    with OfflineModel() as model:
        response = first_call(model)
        replayed = rejected(model, {"input": [USER, *response["output"], output("call_offline_0001"),
                                              output("call_offline_0001", "again")]})
        chained = rejected(model, {"previous_response_id": "resp_offline_0001",
                                   "input": [output("call_offline_0001"), output("call_offline_0001")]})
    expected = {
        "message": "Duplicate function_call_output for call_id 'call_offline_0001'. Each function_call must "
        "have exactly one matching function_call_output.",
        "type": "invalid_request_error",
        "param": "input",
        "code": None,
    }
    assert replayed == expected and chained == expected


def test_two_calls_sharing_a_call_id_with_one_output_pass() -> None:
    call = {"type": "function_call", "call_id": "call_same", "name": "fs__read_text_file", "arguments": "{}"}
    with OfflineModel() as model:
        status, answer = ask(model, {"input": [USER, call, {**call, "arguments": '{"path":"b"}'},
                                               output("call_same")], "tools": [read_tool()]})
    assert status == 200, answer
    assert answer["output"][0]["type"] == "message"


def test_a_replayed_call_needs_its_reasoning_item() -> None:
    with OfflineModel(REASONING_SCRIPT) as model:
        response = first_call(model)
        reasoning, call = response["output"]
        error = rejected(model, {"input": [USER, call, output(call["call_id"])]})
        assert model.requests[-1]["input"][1] == call
    assert reasoning["id"] == "rs_offline_0001" and call["id"] == "fc_offline_0001"
    assert error["message"] == (
        "Item 'fc_offline_0001' of type 'function_call' was provided without its required 'reasoning' item: "
        "'rs_offline_0001'."
    )


def test_a_replayed_reasoning_item_needs_its_following_item() -> None:
    with OfflineModel(REASONING_SCRIPT) as model:
        reasoning, _call = first_call(model)["output"]
        error = rejected(model, {"input": [USER, reasoning]})
    assert error["message"] == (
        "Item 'rs_offline_0001' of type 'reasoning' was provided without its required following item."
    )


def test_reasoning_replayed_with_store_false_needs_its_encrypted_content() -> None:
    with OfflineModel(REASONING_SCRIPT) as model:
        reasoning, call = first_call(model, store=False)["output"]
        assert "encrypted_content" not in reasoning
        error = rejected(model, {"store": False, "input": [USER, reasoning, call, output(call["call_id"])]})
    assert error["message"] == (
        "Item with id 'rs_offline_0001' not found. Items are not persisted when `store` is set to false. "
        "Try again with `store` set to true, or remove this item from your input."
    )


def test_encrypted_reasoning_is_returned_when_asked_and_checked_on_replay() -> None:
    with OfflineModel(REASONING_SCRIPT) as model:
        include = ["reasoning.encrypted_content"]
        reasoning, call = first_call(model, store=False, include=include)["output"]
        assert reasoning["encrypted_content"] == encrypted_reasoning("rs_offline_0001")
        tampered = {**reasoning, "encrypted_content": "gAAAAB-forged"}
        error = rejected(model, {"store": False, "input": [USER, tampered, call, output(call["call_id"])]})
        status, answer = ask(
            model,
            {"store": False, "include": include, "input": [USER, reasoning, call, output(call["call_id"])]},
        )
    assert error == {
        "message": "The encrypted content for item rs_offline_0001 could not be verified.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_encrypted_content",
    }
    assert status == 200 and answer["output"][0]["content"][0]["text"] == "The tool returned:\nok"


@pytest.mark.parametrize("store", [True, False])
def test_previous_response_id_must_name_a_stored_response(store: bool) -> None:
    with OfflineModel() as model:
        first_call(model, store=store)
        error = rejected(
            model,
            {
                "previous_response_id": "resp_offline_0001" if not store else "resp_nope",
                "input": [output("call_offline_0001")],
            },
        )
    missing = "resp_nope" if store else "resp_offline_0001"
    assert error == {
        "message": f"Previous response with id '{missing}' not found.",
        "type": "invalid_request_error",
        "param": "previous_response_id",
        "code": "previous_response_not_found",
    }


def test_arguments_turned_into_an_object_are_rejected() -> None:
    with OfflineModel() as model:
        call = first_call(model)["output"][0]
        tampered = {**call, "arguments": {"path": "notes.txt", "head": 2, "tail": None}}
        error = rejected(model, {"input": [USER, tampered, output(call["call_id"])]})
    assert error == {
        "message": "Invalid type for 'input[1].arguments': expected a string, but got an object instead.",
        "type": "invalid_request_error",
        "param": "input[1].arguments",
        "code": "invalid_type",
    }


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        (
            {
                "type": "object",
                "properties": {"path": {"type": "string"}, "head": {"type": "number"}},
                "required": ["path"],
                "additionalProperties": False,
            },
            "In context=(), 'required' is required to be supplied and to be an array including every key in "
            "properties. Missing 'head'.",
        ),
        (
            {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            "In context=(), 'additionalProperties' is required to be supplied and to be false.",
        ),
        (
            {
                "type": "object",
                "properties": {
                    "opts": {
                        "type": "object",
                        "properties": {"a": {"type": "string"}},
                        "required": [],
                        "additionalProperties": False,
                    }
                },
                "required": ["opts"],
                "additionalProperties": False,
            },
            "In context=('properties', 'opts'), 'required' is required to be supplied and to be an array "
            "including "
            "every key in properties. Missing 'a'.",
        ),
        ({"type": "object"}, "In context=(), object schema missing properties."),
    ],
    ids=["not-all-required", "no-additional-properties", "nested", "bare-object"],
)
def test_strict_schemas_must_be_strict_compatible(parameters: dict[str, Any], message: str) -> None:
    tool = {"type": "function", "name": "fs__read_text_file", "strict": True, "parameters": parameters}
    with OfflineModel() as model:
        error = rejected(model, {"input": [USER], "tools": [tool]})
        assert ask(model, {"input": [USER], "tools": [{**tool, "strict": False}]})[0] == 200
    assert error == {
        "message": f"Invalid schema for function 'fs__read_text_file': {message}",
        "type": "invalid_request_error",
        "param": "tools[0].parameters",
        "code": "invalid_function_parameters",
    }


def test_tool_names_must_match_the_pattern() -> None:
    with OfflineModel() as model:
        error = rejected(model, {"input": [USER], "tools": [read_tool("fs.read_text_file")]})
    assert error == {
        "message": "Invalid 'tools[0].name': string does not match pattern. Expected a string that "
        "matches the pattern '^[a-zA-Z0-9_-]+$'.",
        "type": "invalid_request_error",
        "param": "tools[0].name",
        "code": "invalid_value",
    }


@pytest.mark.parametrize(("namespace", "param", "message"), [
    ({"name": "f s"}, "tools[0].name", "Invalid 'tools[0].name': string does not match pattern."),
    ({"description": None}, "tools[0].description", "Missing required parameter: 'tools[0].description'."),
    ({"tools": [read_tool("read.text")]}, "tools[0].tools[0].name",
     "Invalid 'tools[0].tools[0].name': string does not match pattern."),
], ids=["name", "description", "inner-name"])
def test_a_namespace_is_checked_as_the_api_checks_it(
    namespace: dict[str, Any], param: str, message: str
) -> None:
    tool = {"type": "namespace", "name": "fs", "description": "the files", "tools": [read_tool("read")],
            **namespace}
    tool = {key: value for key, value in tool.items() if value is not None}
    with OfflineModel() as model:
        error = rejected(model, {"input": [USER], "tools": [tool]})
    assert error["param"] == param and error["message"].startswith(message)


def test_model_is_required() -> None:
    with OfflineModel() as model:
        status, answer, _ = post_json(f"{model.base_url}/responses", {"input": "hi"})
    assert status == 400
    assert answer["error"]["message"] == "Missing required parameter: 'model'."


def test_a_rejected_request_does_not_use_up_a_script_turn() -> None:
    script = parse_script({"turns": [{"message": "first"}, {"message": "second"}]})
    with OfflineModel(script) as model:
        rejected(model, {"input": [USER, output("call_zzz")]})
        status, answer = ask(model, {"input": [USER]})
    assert status == 200 and answer["output"][0]["content"][0]["text"] == "first"
    assert len(model.requests) == 2
