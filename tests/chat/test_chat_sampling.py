"""A server's sampling request is answered through the run's dialect: with ``--api chat``
it is a chat completion request (its system prompt a system message, its token limit
``max_completion_tokens``), and the completion becomes the ``CreateMessageResult``."""

from __future__ import annotations

import asyncio
from typing import Any

from chat_helpers import check_wire

from toolrelay.client.host import SamplingRequest
from toolrelay.events import EventStream
from toolrelay.model import ModelEndpoint
from toolrelay.model.chat_client import ChatClient
from toolrelay.offline import OfflineModel, parse_script
from toolrelay.relay.sampling import responses_sampler


def test_a_sampling_request_is_asked_and_answered_by_chat() -> None:
    hi = {"role": "user", "content": {"type": "text", "text": "Hi"}}
    ask = SamplingRequest(server="s", call_id=None, messages=[hi], max_tokens=50,
                          system_prompt="Answer in one word.")

    async def scenario(base_url: str) -> dict[str, Any]:
        async with ChatClient(ModelEndpoint(base_url=base_url), events=EventStream()) as client:
            return await responses_sampler(client, "offline")(ask)

    script = {"turns": [{"message": "not this"}], "sampling": {"message": "Sampled."}}
    with OfflineModel(parse_script(script)) as model:
        answer = asyncio.run(scenario(model.base_url))
        [sent] = model.requests
    assert answer == {"role": "assistant", "content": {"type": "text", "text": "Sampled."},
                      "model": "offline", "stopReason": "endTurn"}
    check_wire("chat", sent)
    assert sent["messages"] == [{"role": "system", "content": "Answer in one word."},
                                {"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
    assert sent["max_completion_tokens"] >= 50 and sent["store"] is False
    assert "include" not in sent and "max_output_tokens" not in sent
