"""ResponsesClient over real loopback HTTP: the offline model, and canned endpoints that
answer like hosted ones (rate limits, server errors, error bodies, dead ports)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from model_helpers import (
    Canned,
    CannedEndpoint,
    closed_port,
    read_tool,
    recorded_stream,
    run,
    valid_response,
)

from toolrelay.errors import ModelError, ModelFeatureUnsupported
from toolrelay.model import ModelEndpoint, ModelReply, ResponsesClient
from toolrelay.offline import OfflineModel

SECRET = "sk-test-SECRET-0123456789abcdef"
OPENAI_401 = {
    "error": {
        "message": "Incorrect API key provided: sk-test-********cdef. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_api_key",
    }
}


def seed_body(**extra: Any) -> dict[str, Any]:
    return {
        "model": "offline",
        "input": [{"role": "user", "content": "Read the first 20 lines of notes.txt"}],
        "tools": [read_tool()],
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        **extra,
    }


async def _create(base_url: str, body: dict[str, Any], **options: Any) -> ModelReply:
    events = options.pop("events")
    endpoint = ModelEndpoint(base_url=base_url, api_key=options.pop("api_key", None))
    async with ResponsesClient(endpoint, events=events, **options) as client:
        return await client.create(body, turn=1)


def create(base_url: str, body: dict[str, Any], **options: Any) -> ModelReply:
    return run(_create(base_url, body, **options))


# -- against the offline model ---------------------------------------------------------------------


def test_offline_model_two_turns_exact_bytes_and_events() -> None:
    events, recorder = recorded_stream()
    with OfflineModel() as model:
        endpoint = ModelEndpoint(base_url=model.base_url)

        async def two_turns() -> tuple[ModelReply, ModelReply, dict[str, Any]]:
            async with ResponsesClient(endpoint, events=events) as client:
                body = seed_body()
                first = await client.create(body, turn=1)
                call = first.body["output"][0]
                output = {"type": "function_call_output", "call_id": call["call_id"], "output": "alpha\nbeta"}
                second_body = seed_body(input=[*body["input"], *first.body["output"], output])
                second = await client.create(second_body, turn=2)
                return first, second, second_body

        first, second, second_body = run(two_turns())
        received = list(model.requests)

    assert first.body["output"] == [
        {
            "id": "fc_offline_0001",
            "type": "function_call",
            "status": "completed",
            "arguments": '{"path":"notes.txt","head":20,"tail":null}',
            "call_id": "call_offline_0001",
            "name": "fs__read_text_file",
        }
    ]
    assert second.body["output"][0]["content"][0]["text"] == "The tool returned:\nalpha\nbeta"
    # the bytes sent are the body serialised once; the endpoint received exactly that object
    assert json.loads(first.request_raw) == received[0] == seed_body()
    assert received[1] == second_body
    assert json.loads(second.raw) == second.body and first.attempts == 1
    requests = recorder.records("model_request")
    responses = recorder.records("model_response")
    assert [r["url"] for r in requests] == [f"{model.base_url}/responses"] * 2
    assert [r["body"] for r in requests] == received
    assert [(r["turn"], r["attempt"]) for r in requests] == [(1, 1), (2, 1)]
    assert [(r["status"], r["body"]) for r in responses] == [(200, first.body), (200, second.body)]


def test_api_key_is_sent_but_never_recorded() -> None:
    events, recorder = recorded_stream()
    with OfflineModel(require_key=SECRET) as model:
        reply = create(model.base_url, seed_body(), events=events, api_key=SECRET)
        with pytest.raises(ModelError) as refused:
            create(model.base_url, seed_body(), events=events, api_key=SECRET + "x")
    assert reply.status == 200
    assert str(refused.value) == (
        "model endpoint answered 401 Unauthorized: Incorrect API key provided: sk-********def"
        "x. You can find your API key at https://platform.openai.com/account/api-keys."
    )
    transcript = recorder.dump()
    assert "model_request" in transcript and SECRET not in transcript
    assert "Authorization" not in transcript and "Bearer" not in transcript


def test_a_key_echoed_by_the_endpoint_is_redacted_from_records_and_messages() -> None:
    echo = {
        "error": {
            "message": f"bad key {SECRET}",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }
    events, recorder = recorded_stream()
    with CannedEndpoint(Canned(400, echo)) as endpoint, pytest.raises(ModelError) as failed:
        create(endpoint.base_url, seed_body(), events=events, api_key=SECRET)
    assert endpoint.seen[0].headers["authorization"] == f"Bearer {SECRET}"
    assert str(failed.value) == "model endpoint answered 400 Bad Request: bad key [redacted]"
    assert SECRET not in recorder.dump()


def test_azure_sends_api_key_header_and_api_version() -> None:
    events, recorder = recorded_stream()
    with CannedEndpoint(Canned(200, valid_response())) as endpoint:
        base = endpoint.base_url.removesuffix("/v1") + "/openai"
        azure = ModelEndpoint(base_url=base, api_key=SECRET, azure_api_version="2025-04-01-preview")

        async def send() -> ModelReply:
            async with ResponsesClient(azure, events=events) as client:
                return await client.create(seed_body(), turn=1)

        run(send())
    seen = endpoint.seen[0]
    assert seen.path == "/openai/responses?api-version=2025-04-01-preview"
    assert seen.headers["api-key"] == SECRET and "authorization" not in seen.headers
    assert recorder.records("model_request")[0]["url"].endswith(
        "/openai/responses?api-version=2025-04-01-preview"
    )
    assert SECRET not in recorder.dump()


def test_secret_query_parameters_are_sent_but_not_recorded() -> None:
    events, recorder = recorded_stream()
    with CannedEndpoint(Canned(200, valid_response())) as endpoint:
        create(f"{endpoint.base_url}?key={SECRET}&deployment=x", seed_body(), events=events)
    assert endpoint.seen[0].path == f"/v1/responses?key={SECRET}&deployment=x"
    assert recorder.records("model_request")[0]["url"] == f"{endpoint.base_url}/responses?deployment=x"
    assert SECRET not in recorder.dump()


# -- retries -----------------------------------------------------------------------------------------


def test_429_retry_after_seconds_is_honoured() -> None:
    events, recorder = recorded_stream()
    limited = {
        "error": {
            "message": "Rate limit reached",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }
    with CannedEndpoint(
        Canned(429, limited, {"Retry-After": "1"}), Canned(200, valid_response())
    ) as endpoint:
        reply = create(endpoint.base_url, seed_body(), events=events, backoff=5.0)
    gap = endpoint.seen[1].at - endpoint.seen[0].at
    assert 0.95 <= gap < 3.5, gap  # backoff=5 would wait at least 3.75 s
    assert reply.attempts == 2 and reply.body["output"][0]["content"][0]["text"] == "done"
    assert [(r["attempt"], r["status"]) for r in recorder.records("model_response")] == [(1, 429), (2, 200)]
    assert [r["attempt"] for r in recorder.records("model_request")] == [1, 2]
    notice = recorder.records("notice")[0]
    assert notice["text"] == "model request attempt 1 failed (HTTP 429); retrying in 1.00 s"


def test_retry_after_ms_is_honoured() -> None:
    events, _ = recorded_stream()
    answers = (Canned(503, "overloaded", {"retry-after-ms": "300"}), Canned(200, valid_response()))
    with CannedEndpoint(*answers) as endpoint:
        reply = create(endpoint.base_url, seed_body(), events=events, backoff=5.0)
    gap = endpoint.seen[1].at - endpoint.seen[0].at
    assert 0.29 <= gap < 3.0, gap
    assert reply.attempts == 2


def test_500_then_200_is_retried() -> None:
    events, recorder = recorded_stream()
    server_error = {
        "error": {
            "message": "The server had an error while processing your request.",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }
    with CannedEndpoint(Canned(500, server_error), Canned(200, valid_response("second"))) as endpoint:
        reply = create(endpoint.base_url, seed_body(), events=events, backoff=0.01)
    assert len(endpoint.seen) == 2 and endpoint.seen[0].body == endpoint.seen[1].body
    assert reply.attempts == 2 and reply.body["output"][0]["content"][0]["text"] == "second"
    assert [r["status"] for r in recorder.records("model_response")] == [500, 200]


def test_retries_give_up_with_the_last_answer() -> None:
    events, _ = recorded_stream()
    overloaded = {
        "error": {
            "message": "The engine is currently overloaded, please try again later.",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }
    with CannedEndpoint(Canned(503, overloaded)) as endpoint, pytest.raises(ModelError) as failed:
        create(endpoint.base_url, seed_body(), events=events, max_retries=2, backoff=0.01)
    assert len(endpoint.seen) == 3
    assert str(failed.value) == (
        "model endpoint answered 503 Service Unavailable: The engine is currently overloaded, "
        "please try again later. (tried 3 times)"
    )
    assert failed.value.status == 503 and failed.value.exit_code == 3


def test_unreachable_endpoint_after_retries() -> None:
    events, recorder = recorded_stream()
    base = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(ModelError) as failed:
        create(base, seed_body(), events=events, max_retries=2, backoff=0.01)
    assert (
        str(failed.value)
        == f"cannot reach the model endpoint {base}/responses: connection refused (tried 3 times)"
    )
    assert failed.value.exit_code == 3
    assert [r["attempt"] for r in recorder.records("model_request")] == [1, 2, 3]
    assert recorder.records("model_response") == []
    assert len(recorder.records("notice")) == 2


def test_unresolvable_host() -> None:
    events, _ = recorded_stream()
    with pytest.raises(ModelError) as failed:
        create("http://no-such-host.invalid/v1", seed_body(), events=events, max_retries=0)
    assert str(failed.value).startswith(
        "cannot reach the model endpoint http://no-such-host.invalid/v1/responses: "
        "host name not resolved (DNS"
    )


def test_timeout_is_retried_then_reported() -> None:
    events, _ = recorded_stream()
    with (
        CannedEndpoint(Canned(200, valid_response(), delay=0.6)) as endpoint,
        pytest.raises(ModelError) as failed,
    ):
        create(endpoint.base_url, seed_body(), events=events, timeout=0.2, max_retries=1, backoff=0.01)
    assert len(endpoint.seen) == 2
    assert str(failed.value) == (
        f"the model endpoint {endpoint.base_url}/responses did not answer within 0.2 s (tried 2 times)"
    )


# -- errors that end at once ------------------------------------------------------------------------


NO_RETRY_CASES = [
    pytest.param(
        401,
        OPENAI_401,
        ModelError,
        "model endpoint answered 401 Unauthorized: Incorrect API key provided: sk-test-********cdef. "
        "You can find your API key at https://platform.openai.com/account/api-keys.",
        id="401-openai",
    ),
    pytest.param(
        400,
        {
            "error": {
                "message": "No tool output found for function call call_abc.",
                "type": "invalid_request_error",
                "param": "input",
                "code": None,
            }
        },
        ModelError,
        "model endpoint answered 400 Bad Request: No tool output found for function call call_abc.",
        id="400-openai",
    ),
    pytest.param(
        404,
        {
            "error": {
                "message": "The model `gpt-nope` does not exist or you do not have access to it.",
                "type": "invalid_request_error",
                "param": None,
                "code": "model_not_found",
            }
        },
        ModelError,
        "model endpoint answered 404 Not Found: The model `gpt-nope` does not exist or you do not have "
        "access to it.",
        id="404-model",
    ),
    pytest.param(
        403,
        {
            "error": {
                "message": "Project does not have access to model gpt-x",
                "type": "invalid_request_error",
                "param": None,
                "code": "model_not_found",
            }
        },
        ModelError,
        "model endpoint answered 403 Forbidden: Project does not have access to model gpt-x",
        id="403",
    ),
    pytest.param(
        422,
        {"detail": [{"loc": ["body", "input"], "msg": "Field required", "type": "missing"}]},
        ModelError,
        "model endpoint answered 422 Unprocessable Entity: body.input: Field required",
        id="422-fastapi",
    ),
]


@pytest.mark.parametrize(("status", "body", "kind", "message"), NO_RETRY_CASES)
def test_client_errors_end_at_once_with_the_api_message(
    status: int, body: Any, kind: type, message: str
) -> None:
    events, recorder = recorded_stream()
    with CannedEndpoint(Canned(status, body)) as endpoint, pytest.raises(ModelError) as failed:
        create(endpoint.base_url, seed_body(), events=events, backoff=0.01)
    assert type(failed.value) is kind
    assert str(failed.value) == message
    assert failed.value.status == status and failed.value.exit_code == 3
    assert len(endpoint.seen) == 1
    assert [r["body"] for r in recorder.records("model_response")] == [body]


def test_404_without_a_responses_route_names_the_servers_that_have_one() -> None:
    events, _ = recorded_stream()
    with (
        CannedEndpoint(Canned(404, "404 page not found")) as endpoint,
        pytest.raises(ModelFeatureUnsupported) as f,
    ):
        create(endpoint.base_url, seed_body(), events=events)
    assert str(f.value) == (
        "this endpoint has no /v1/responses (Responses API); Ollama ≥ 0.13.3, vLLM, LM Studio ≥ 0.3.29 and "
        f"llama-server support it (POST {endpoint.base_url}/responses answered 404 Not Found: "
        "404 page not found)"
    )
    assert len(endpoint.seen) == 1


def test_non_json_200_is_named() -> None:
    events, recorder = recorded_stream()
    page = "<!doctype html><title>Login</title>"
    with CannedEndpoint(Canned(200, page)) as endpoint, pytest.raises(ModelError) as failed:
        create(endpoint.base_url, seed_body(), events=events)
    assert str(failed.value) == f"the model endpoint answered 200 with a body that is not JSON: {page!r}"
    assert recorder.records("model_response")[0]["body"] == page
    assert len(endpoint.seen) == 1


def test_chat_completions_200_is_named() -> None:
    events, _ = recorded_stream()
    chat = {"id": "chatcmpl-1", "object": "chat.completion", "choices": []}
    with CannedEndpoint(Canned(200, chat)) as endpoint, pytest.raises(ModelError) as failed:
        create(endpoint.base_url, seed_body(), events=events)
    assert str(failed.value) == (
        "the model endpoint answered 200 with a Chat Completions object ('choices'), not a Responses object: "
        "is the URL a /v1/chat/completions endpoint?"
    )


# -- endpoints lacking a feature ----------------------------------------------------------------------

CHAIN_BODY = seed_body(previous_response_id="resp_1", input=[])
FEATURE_CASES = [
    pytest.param(
        400,
        {
            "error": {
                "code": 400,
                "message": "llama.cpp does not support 'previous_response_id'.",
                "type": "invalid_request_error",
            }
        },
        CHAIN_BODY,
        "run without --chain",
        id="llama-server-chain",
    ),
    pytest.param(
        404,
        {
            "error": {
                "message": "Response with id 'resp_1' not found.",
                "type": "invalid_request_error",
                "param": "response_id",
                "code": 404,
            }
        },
        CHAIN_BODY,
        "run without --chain",
        id="vllm-chain",
    ),
    pytest.param(
        400,
        {
            "error": {
                "message": "Previous response with id 'resp_1' not found.",
                "type": "invalid_request_error",
                "param": "previous_response_id",
                "code": "previous_response_not_found",
            }
        },
        CHAIN_BODY,
        "run without --chain",
        id="openai-chain-not-stored",
    ),
    pytest.param(
        200,
        {**valid_response(), "previous_response_id": None},
        CHAIN_BODY,
        "run without --chain",
        id="ollama-ignores-chain",
    ),
    pytest.param(
        400,
        {
            "error": {
                "message": "Invalid schema for function 'fs__read_text_file': In context=(), "
                "'required' is required to be supplied and to be an array including every key in "
                "properties. Missing 'head'.",
                "type": "invalid_request_error",
                "param": "tools[0].parameters",
                "code": "invalid_function_parameters",
            }
        },
        seed_body(),
        "run without --strict",
        id="openai-strict-schema",
    ),
    pytest.param(
        501,
        {
            "error": {
                "message": "Only 'auto' or 'none' tool_choice is supported in response API with Harmony",
                "type": "NotImplementedError",
                "param": None,
                "code": 501,
            }
        },
        seed_body(tool_choice="required"),
        "drop --tool-choice",
        id="vllm-tool-choice",
    ),
    pytest.param(
        400,
        {
            "error": {
                "message": "Encrypted content is not supported with this model.",
                "type": "invalid_request_error",
                "param": "include",
                "code": None,
            }
        },
        seed_body(store=False, include=["reasoning.encrypted_content"]),
        "include [reasoning.encrypted_content]",
        id="openai-include",
    ),
    pytest.param(
        200,
        {"error": "Unexpected endpoint or method. (POST /v1/responses)"},
        seed_body(),
        "this endpoint has no /v1/responses",
        id="lmstudio-old",
    ),
]


@pytest.mark.parametrize(("status", "answer", "body", "option"), FEATURE_CASES)
def test_missing_features_are_named_with_the_option_that_avoids_them(
    status: int, answer: Any, body: dict[str, Any], option: str
) -> None:
    events, _ = recorded_stream()
    with CannedEndpoint(Canned(status, answer)) as endpoint, pytest.raises(ModelFeatureUnsupported) as failed:
        create(endpoint.base_url, body, events=events, backoff=0.01)
    assert option in str(failed.value)
    assert failed.value.exit_code == 3
    assert len(endpoint.seen) == 1


def test_loopback_endpoints_bypass_a_configured_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv("ALL_PROXY", f"http://127.0.0.1:{closed_port()}")
    events, _ = recorded_stream()
    with OfflineModel() as model:
        assert create(model.base_url, seed_body(), events=events, max_retries=0).status == 200


def test_a_key_sent_in_clear_text_is_warned_about() -> None:
    events, recorder = recorded_stream()
    with pytest.raises(ModelError) as failed:  # TEST-NET-1: never answers, so the connect times out
        create(
            "http://192.0.2.1:9/v1", seed_body(), events=events, api_key=SECRET, timeout=0.2, max_retries=0
        )
    assert (
        recorder.records("notice")[0]["text"] == "the API key is sent to 192.0.2.1 over plain http; use https"
    )
    assert str(failed.value).startswith("cannot reach the model endpoint http://192.0.2.1:9/v1/responses: ")
    assert SECRET not in recorder.dump()
