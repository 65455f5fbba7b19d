"""classify_failure / check_reply: error bodies in the shapes real endpoints send, and the
message a user reads for each (pure functions, no HTTP)."""

from __future__ import annotations

from typing import Any

import pytest
from model_helpers import read_tool, valid_response

from toolrelay.errors import ModelError, ModelFeatureUnsupported
from toolrelay.model.failures import (
    CHAIN_ADVICE,
    NO_RESPONSES_ADVICE,
    STRICT_ADVICE,
    ApiError,
    check_reply,
    classify_failure,
    read_api_error,
)

PLAIN: dict[str, Any] = {"model": "m", "input": "hi"}
CHAIN: dict[str, Any] = {"model": "m", "input": [], "previous_response_id": "resp_9"}
STRICT: dict[str, Any] = {"model": "m", "input": "hi", "tools": [read_tool(strict=True)]}
NOT_STRICT: dict[str, Any] = {"model": "m", "input": "hi", "tools": [read_tool(strict=False)]}


def openai_error(message: str, *, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            openai_error("Bad thing", param="input", code="x"),
            ApiError("Bad thing", "invalid_request_error", "input", "x"),
        ),
        (
            {"error": {"code": 400, "message": "llama says no", "type": "invalid_request_error"}},
            ApiError("llama says no", "invalid_request_error", None, "400"),
        ),
        (
            {"object": "error", "message": "old vllm", "type": "BadRequestError", "param": None, "code": 400},
            ApiError("old vllm", "BadRequestError", None, "400"),
        ),
        (
            {"error": "Unexpected endpoint or method. (POST /v1/responses)"},
            ApiError("Unexpected endpoint or method. (POST /v1/responses)"),
        ),
        ({"detail": "Not Found"}, ApiError("Not Found")),
        (
            {"detail": [{"loc": ["body", "tools", 0, "strict"], "msg": "Extra inputs are not permitted"}]},
            ApiError("body.tools.0.strict: Extra inputs are not permitted"),
        ),
        ("404 page not found\n", ApiError("404 page not found")),
        ({"unrelated": 1}, ApiError("")),
    ],
    ids=["openai", "llama-server", "vllm-old", "lmstudio", "fastapi", "pydantic", "text", "unknown"],
)
def test_read_api_error_understands_each_shape(body: Any, expected: ApiError) -> None:
    assert read_api_error(body) == expected


def test_plain_errors_carry_the_api_message_and_status() -> None:
    error = classify_failure(
        400, openai_error("No tool call found for function call output with call_id c1."), PLAIN
    )
    assert type(error) is ModelError
    assert str(error) == (
        "model endpoint answered 400 Bad Request: "
        "No tool call found for function call output with call_id c1."
    )
    assert error.status == 400


def test_an_error_without_message_names_the_status() -> None:
    assert str(classify_failure(502, "", PLAIN)) == "model endpoint answered 502 Bad Gateway"


def test_long_messages_are_cut() -> None:
    message = str(classify_failure(400, openai_error("x" * 2000), PLAIN))
    assert message.endswith("x…") and len(message) < 560


CHAIN_CASES = [
    (
        400,
        {
            "error": {
                "code": 400,
                "message": "llama.cpp does not support 'previous_response_id'.",
                "type": "invalid_request_error",
            }
        },
    ),
    (
        404,
        {
            "error": {
                "message": "Response with id 'resp_9' not found.",
                "type": "invalid_request_error",
                "param": "response_id",
                "code": 404,
            }
        },
    ),
    (
        400,
        openai_error(
            "Previous response with id 'resp_9' not found.",
            param="previous_response_id",
            code="previous_response_not_found",
        ),
    ),
    (400, {"detail": "Unsupported parameter: previous_response_id"}),
    (
        400,
        openai_error(
            "`store=True` (default) is not supported. Please set `store=False` in Responses API or set "
            "`VLLM_ENABLE_RESPONSES_API_STORE=1` in the env var when starting the vLLM server.",
            param="store",
        ),
    ),
]


@pytest.mark.parametrize(
    ("status", "body"), CHAIN_CASES, ids=["llama", "vllm", "openai", "proxy", "vllm-store"]
)
def test_previous_response_id_unsupported(status: int, body: Any) -> None:
    error = classify_failure(status, body, CHAIN)
    assert isinstance(error, ModelFeatureUnsupported)
    assert str(error).startswith(CHAIN_ADVICE + " (answered ")
    assert str(error).endswith(f"{read_api_error(body).message})")


def test_chain_rule_needs_a_chained_request() -> None:
    body = openai_error("Previous response with id 'resp_9' not found.", param="previous_response_id")
    assert type(classify_failure(400, body, PLAIN)) is ModelError


@pytest.mark.parametrize(
    "body",
    [
        openai_error(
            "Invalid schema for function 'f': In context=(), 'additionalProperties' is required to be "
            "supplied and to be false.",
            param="tools[0].parameters",
            code="invalid_function_parameters",
        ),
        {"detail": [{"loc": ["body", "tools", 0, "strict"], "msg": "Extra inputs are not permitted"}]},
        openai_error("strict mode is not supported by this backend"),
    ],
    ids=["openai-schema", "pydantic-extra", "proxy"],
)
def test_strict_rejected(body: Any) -> None:
    error = classify_failure(400, body, STRICT)
    assert isinstance(error, ModelFeatureUnsupported)
    assert str(error).startswith(STRICT_ADVICE)
    assert type(classify_failure(400, body, NOT_STRICT)) is ModelError


@pytest.mark.parametrize(
    ("status", "body", "choice", "shown"),
    [
        (
            501,
            {
                "error": {
                    "message": "Only 'auto' or 'none' tool_choice is supported in response API with Harmony",
                    "type": "NotImplementedError",
                    "param": None,
                    "code": 501,
                }
            },
            "required",
            "'required'",
        ),
        (
            400,
            {
                "object": "error",
                "message": "[{'type': 'extra_forbidden', 'loc': ('body', 'tool_choice'), "
                "'msg': 'Extra inputs are not permitted'}]",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            },
            {"type": "function", "name": "fs__x"},
            "'function fs__x'",
        ),
        (
            400,
            openai_error(
                "Invalid value: 'requird'. Supported values are: 'none', 'auto', and 'required'.",
                param="tool_choice",
                code="invalid_value",
            ),
            "requird",
            "'requird'",
        ),
    ],
    ids=["vllm-harmony", "vllm-extra", "openai"],
)
def test_tool_choice_rejected(status: int, body: Any, choice: Any, shown: str) -> None:
    error = classify_failure(status, body, {**PLAIN, "tool_choice": choice})
    assert isinstance(error, ModelFeatureUnsupported)
    assert str(error).startswith(f"this endpoint does not support tool_choice {shown}; drop --tool-choice (")


def test_include_rejected_names_it() -> None:
    body = openai_error("Encrypted content is not supported with this model.", param="include")
    request = {**PLAIN, "store": False, "include": ["reasoning.encrypted_content"]}
    error = classify_failure(400, body, request)
    assert isinstance(error, ModelFeatureUnsupported)
    assert str(error) == (
        "this endpoint or model does not support include [reasoning.encrypted_content] "
        "(encrypted reasoning items, "
        "asked for because store is false); run without --no-store, or with a model that supports it "
        "(answered 400 Bad Request: Encrypted content is not supported with this model.)"
    )


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (404, "404 page not found"),
        (404, {"detail": "Not Found"}),
        (404, {"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}}),
        (404, openai_error("Invalid URL (POST /v1/responses)")),
        (405, "Method Not Allowed"),
    ],
    ids=["ollama-old", "fastapi", "llama-server-old", "openai-wrong-url", "405"],
)
def test_no_responses_route(status: int, body: Any) -> None:
    error = classify_failure(status, body, PLAIN, url="http://127.0.0.1:11434/v1/responses")
    assert isinstance(error, ModelFeatureUnsupported)
    assert str(error).startswith(
        f"{NO_RESPONSES_ADVICE} (POST http://127.0.0.1:11434/v1/responses answered {status}"
    )


def test_a_missing_model_is_not_a_missing_route() -> None:
    body = {
        "error": {
            "message": 'model "llama9" not found, try pulling it first',
            "type": "not_found_error",
            "param": None,
            "code": None,
        }
    }
    error = classify_failure(404, body, PLAIN)
    assert type(error) is ModelError
    assert (
        str(error) == 'model endpoint answered 404 Not Found: model "llama9" not found, try pulling it first'
    )


# -- check_reply ----------------------------------------------------------------------------------


def test_a_responses_object_passes() -> None:
    assert check_reply(valid_response(), PLAIN) is None
    assert check_reply({**valid_response(), "previous_response_id": "resp_9"}, CHAIN) is None


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([1, 2], "the model endpoint answered 200 with JSON list, not a Responses object"),
        (
            {"id": "x", "object": "thread"},
            "the model endpoint answered 200 with JSON that is not a Responses "
            "object: no 'output' list (keys: id, object)",
        ),
        (
            {**valid_response(), "object": "chat.completion"},
            "the model endpoint answered 200 with object 'chat.completion', not 'response'",
        ),
        (
            {**valid_response(), "output": [{"text": "no type"}]},
            "the model endpoint answered 200 with output[0] that has no 'type': {'text': 'no type'}",
        ),
        (
            {"error": {"message": "quota exceeded"}},
            "the model endpoint answered 200 with an error instead of a response: quota exceeded",
        ),
    ],
    ids=["list", "no-output", "wrong-object", "untyped-item", "error-body"],
)
def test_replies_that_are_not_responses(body: Any, message: str) -> None:
    error = check_reply(body, PLAIN)
    assert error is not None and type(error) is ModelError
    assert str(error) == message


def test_an_ignored_previous_response_id_is_caught() -> None:
    error = check_reply({**valid_response(), "previous_response_id": None}, CHAIN)
    assert isinstance(error, ModelFeatureUnsupported)
    assert str(error) == (
        f"{CHAIN_ADVICE} (it answered with previous_response_id: null, so it ignored the previous response)"
    )
