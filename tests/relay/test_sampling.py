"""A server's sampling request as a Responses request, and the Response as the
CreateMessageResult it gets back: messages, system prompt, token limit, images, tools
(2025-11-25) and tool results, stop reasons; through the offline stand-in end to end."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolrelay.client.host import SamplingRequest
from toolrelay.errors import RpcError, UsageError
from toolrelay.events import EventStream
from toolrelay.model import ModelEndpoint, ModelReply, ResponsesClient
from toolrelay.model.reply import OnUpdate
from toolrelay.offline import OfflineModel, parse_script
from toolrelay.relay.sampling import responses_sampler, sampling_body, sampling_result

LOOKUP = {"name": "lookup", "description": "Look a word up.", "inputSchema": {"type": "object"}}


def request(messages: list[dict[str, Any]], **fields: Any) -> SamplingRequest:
    return SamplingRequest(
        server="s", call_id=None, messages=messages, max_tokens=fields.pop("max_tokens", 100), **fields
    )


def test_messages_system_prompt_and_token_limit() -> None:
    body = sampling_body(
        request(
            [
                {"role": "user", "content": {"type": "text", "text": "Hi"}},
                {"role": "assistant", "content": {"type": "text", "text": "Hello"}},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Look:"},
                        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                        {"type": "audio", "data": "BBBB", "mimeType": "audio/wav"},
                    ],
                },
            ],
            system_prompt="Be brief.",
            max_tokens=5,
            temperature=0.7,
            model_hints=["claude"],
        ),
        "gpt-x",
    )
    assert body == {
        "model": "gpt-x",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hello"}]},
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "Look:"},
                    {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "auto"},
                    {"type": "input_text", "text": "[audio content not passed on to the model]"},
                ],
            },
        ],
        "max_output_tokens": 16,  # the API's floor; 5 is below it
        "store": False,
        "metadata": {"toolrelay": "sampling"},  # the stand-in answers it with its "sampling" entry
        "instructions": "Be brief.",
    }


def test_tools_and_tool_results_become_function_calls_and_outputs() -> None:
    body = sampling_body(
        request(
            [
                {"role": "user", "content": {"type": "text", "text": "Define MCP"}},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "u1", "name": "lookup", "input": {"w": "MCP"}}],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "toolUseId": "u1",
                            "isError": True,
                            "content": [{"type": "text", "text": "not found"}],
                        }
                    ],
                },
            ],
            tools=[LOOKUP],
            tool_choice={"mode": "required"},
        ),
        "m",
    )
    assert body["input"][1:] == [
        {"type": "function_call", "call_id": "u1", "name": "lookup", "arguments": '{"w": "MCP"}'},
        {"type": "function_call_output", "call_id": "u1", "output": "[tool error] not found"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "name": "lookup",
            "description": "Look a word up.",
            "parameters": {"type": "object"},
            "strict": False,
        }
    ]
    assert body["tool_choice"] == "required"


def test_a_text_answer_a_cut_answer_and_a_tool_call() -> None:
    text = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Blue."}]}
    assert sampling_result({"model": "gpt-x-2025", "status": "completed", "output": [text]}, "gpt-x") == {
        "role": "assistant",
        "content": {"type": "text", "text": "Blue."},
        "model": "gpt-x-2025",
        "stopReason": "endTurn",
    }
    cut = {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": [text]}
    assert sampling_result(cut, "gpt-x")["stopReason"] == "maxTokens"
    call = {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"w": "MCP"}'}
    assert sampling_result({"output": [text, call]}, "gpt-x") == {
        "role": "assistant",
        "model": "gpt-x",
        "stopReason": "toolUse",
        "content": [
            {"type": "text", "text": "Blue."},
            {"type": "tool_use", "id": "c1", "name": "lookup", "input": {"w": "MCP"}},
        ],
    }


def test_the_offline_stand_in_answers_through_the_sampler() -> None:
    async def scenario(base_url: str) -> dict[str, Any]:
        async with ResponsesClient(ModelEndpoint(base_url=base_url), events=EventStream()) as client:
            sampler = responses_sampler(client, "offline")
            return await sampler(request([{"role": "user", "content": {"type": "text", "text": "Hi"}}]))

    script = {"turns": [{"calls": [{"name": "s__lookup", "arguments": {}}]}],
              "sampling": {"message": "Sampled."}}
    with OfflineModel(parse_script(script)) as model:
        answer = asyncio.run(scenario(model.base_url))
        sent = model.requests[0]
    assert answer == {
        "role": "assistant",
        "content": {"type": "text", "text": "Sampled."},
        "model": "offline",
        "stopReason": "endTurn",
    }
    assert sent["input"] == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]}
    ]


def test_without_a_sampling_entry_the_stand_in_answers_itself_never_a_turn() -> None:
    async def scenario(base_url: str) -> dict[str, Any]:
        async with ResponsesClient(ModelEndpoint(base_url=base_url), events=EventStream()) as client:
            sampler = responses_sampler(client, "offline")
            return await sampler(request([{"role": "user", "content": {"type": "text", "text": "Hi"}}]))

    script = {"turns": [{"calls": [{"name": "s__lookup", "arguments": {}}]}]}
    with OfflineModel(parse_script(script)) as model:
        answer = asyncio.run(scenario(model.base_url))
    assert answer["stopReason"] == "endTurn" and answer["content"]["type"] == "text"


def test_a_sampling_entry_that_is_an_http_fault_is_refused() -> None:
    with pytest.raises(UsageError, match="sampling: expected a Response entry, not an http_status"):
        parse_script({"turns": [], "sampling": {"http_status": 500}})


class Canned:
    """A model client of the seam that is not the Responses adapter: one reply, any dialect."""

    def __init__(self, dialect: str, body: dict[str, Any]) -> None:
        self.reply = ModelReply(dialect=dialect, body=body)

    async def create(
        self, body: dict[str, Any], *, turn: int, on_update: OnUpdate | None = None
    ) -> ModelReply:
        return self.reply


def test_any_model_client_answers_and_a_reply_it_cannot_read_is_the_servers_error() -> None:
    call = {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"w": "MCP"}'}
    ask = request([{"role": "user", "content": {"type": "text", "text": "Hi"}}])
    answer = asyncio.run(responses_sampler(Canned("responses", {"output": [call]}), "m")(ask))
    assert answer["stopReason"] == "toolUse" and answer["content"][0]["input"] == {"w": "MCP"}
    with pytest.raises(RpcError, match="the model dialect 'chat_completions' has no reader") as raised:
        asyncio.run(responses_sampler(Canned("chat_completions", {"choices": []}), "m")(ask))
    assert raised.value.code == -32603
