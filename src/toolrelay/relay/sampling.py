"""Sampling through the run's model: a server's ``sampling/createMessage`` as a Responses
request, and the Response as the ``CreateMessageResult`` the server gets back.

``responses_sampler(client, model)`` is the ``client.host.Sampler`` the runner (or the
CLI's ``--model``) injects: client/ never reaches the model itself. ``client`` is any
``model.ModelClient``; its reply is read by its dialect's reader (``relay.stages.dialects``), and
the result is made from what it read (``turn_result``). The conversion is pure
(``sampling_body``; ``sampling_result`` for a Responses object):

| MCP (sampling) | Responses |
|---|---|
| ``systemPrompt`` | ``instructions`` |
| user / assistant text | a ``message`` with ``input_text`` / ``output_text`` |
| an image block | ``input_image`` (a data URL); audio and other blocks become a text note |
| ``maxTokens`` | ``max_output_tokens`` (at least 16, the API's floor) |
| (the request's origin) | ``metadata: {"toolrelay": "sampling"}`` |
| ``tools`` (2025-11-25) | function tools (non-strict); ``toolChoice.mode`` → ``tool_choice`` |
| assistant ``tool_use`` / user ``tool_result`` | ``function_call`` / ``function_call_output`` |

Back: the output text is one ``text`` block (``stopReason`` ``endTurn``, or ``maxTokens``
when the response is incomplete for that reason); function calls become ``tool_use``
blocks after it (``stopReason`` ``toolUse``). ``model`` is the model that answered.
``temperature``, ``stopSequences`` and ``modelPreferences`` are not sent: the Responses
API has no stop sequences, reasoning models refuse a temperature, and the model is the
one the user chose (the server's hints are logged by the client).
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..client.host import Sampler, SamplingRequest
from ..errors import ModelError, RpcError
from ..model.reply import ModelClient
from ..protocol import json_depth
from ..protocol.jsonrpc import INTERNAL_ERROR, JSONObject
from ..protocol.responses import (
    FUNCTION_CALL,
    FUNCTION_CALL_OUTPUT,
    INCOMPLETE,
    INPUT_IMAGE,
    INPUT_TEXT,
    MESSAGE,
    OUTPUT_TEXT,
    SAMPLING_METADATA,
)
from .stages.dialects import RESPONSES, reader_for
from .stages.parse import ModelTurn

__all__ = ["responses_sampler", "sampling_body", "sampling_result", "turn_result"]

MIN_OUTPUT_TOKENS: Final = 16
_TOOL_CHOICES: Final = {"auto": "auto", "required": "required", "none": "none"}


def responses_sampler(client: ModelClient, model: str) -> Sampler:
    """Answers sampling requests with ``model`` at ``client``'s endpoint. A model failure
    (or an answer its reader cannot read) is the server's -32603 error (with the
    endpoint's message), never the run's end."""

    async def sample(request: SamplingRequest) -> JSONObject:
        try:
            reply = await client.create(sampling_body(request, model), turn=0)
            turn = reader_for(reply.dialect).turn(reply.body)
        except (ModelError, ValueError) as exc:
            raise RpcError(INTERNAL_ERROR, f"Internal error: the model failed: {exc}") from None
        return turn_result(turn, model)

    return sample


def sampling_body(request: SamplingRequest, model: str) -> dict[str, Any]:
    """The Responses request body for a sampling request (not streamed, not stored)."""
    body: dict[str, Any] = {
        "model": model,
        "input": [item for message in request.messages for item in _items(message)],
        "max_output_tokens": max(request.max_tokens, MIN_OUTPUT_TOKENS),
        "store": False,
        "metadata": dict(SAMPLING_METADATA),
    }
    if request.system_prompt:
        body["instructions"] = request.system_prompt
    if request.tools:
        body["tools"] = [
            {"type": "function", "name": tool["name"], "description": str(tool.get("description") or ""),
             "parameters": tool["inputSchema"], "strict": False}
            for tool in request.tools
        ]
        mode = (request.tool_choice or {}).get("mode")
        if mode in _TOOL_CHOICES:
            body["tool_choice"] = _TOOL_CHOICES[mode]
    return body


def sampling_result(response: dict[str, Any], model: str) -> JSONObject:
    """The ``CreateMessageResult`` for a Responses object."""
    return turn_result(RESPONSES.turn(response), model)


def turn_result(turn: ModelTurn, model: str) -> JSONObject:
    """The ``CreateMessageResult`` for an answer as its reader read it."""
    text_block = {"type": "text", "text": turn.text or ""}
    answered = turn.model or model
    calls = [*turn.calls, *turn.duplicates]
    if calls:
        uses = [{"type": "tool_use", "id": call.call_id, "name": call.name,
                 "input": _arguments(call.arguments_text)} for call in calls]
        content: Any = ([text_block] if turn.text else []) + uses
        return {"role": "assistant", "content": content, "model": answered, "stopReason": "toolUse"}
    cut = turn.status == INCOMPLETE and turn.reason == "max_output_tokens"
    return {"role": "assistant", "content": text_block, "model": answered,
            "stopReason": "maxTokens" if cut else "endTurn"}


# -- messages → input items ---------------------------------------------------------------


def _blocks(content: Any) -> list[dict[str, Any]]:
    blocks = content if isinstance(content, list) else [content]
    return [block for block in blocks if isinstance(block, dict)]


def _items(message: JSONObject) -> list[dict[str, Any]]:
    """One sampling message as Responses input items."""
    role = message["role"]
    items: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in _blocks(message["content"]):
        kind = block.get("type")
        if kind == "tool_use":
            arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
            items.append({"type": FUNCTION_CALL, "call_id": str(block.get("id")),
                          "name": str(block.get("name")), "arguments": arguments})
        elif kind == "tool_result":
            items.append({"type": FUNCTION_CALL_OUTPUT, "call_id": str(block.get("toolUseId")),
                          "output": _result_text(block)})
        else:
            parts.append(_part(block, role))
    if parts:
        items.insert(0, {"type": MESSAGE, "role": role, "content": parts})
    return items


def _part(block: dict[str, Any], role: str) -> dict[str, Any]:
    kind = block.get("type")
    text_type = OUTPUT_TEXT if role == "assistant" else INPUT_TEXT
    if kind == "text":
        return {"type": text_type, "text": str(block.get("text", ""))}
    if kind == "image" and role == "user":
        url = f"data:{block.get('mimeType', 'image/png')};base64,{block.get('data', '')}"
        return {"type": INPUT_IMAGE, "image_url": url, "detail": "auto"}
    return {"type": text_type, "text": f"[{kind} content not passed on to the model]"}


def _result_text(block: dict[str, Any]) -> str:
    texts = [str(b.get("text", "")) for b in _blocks(block.get("content")) if b.get("type") == "text"]
    if not texts and "structuredContent" in block:
        texts.append(json.dumps(block["structuredContent"], ensure_ascii=False))
    text = "\n".join(texts)
    return f"[tool error] {text}" if block.get("isError") is True else text


def _arguments(text: Any) -> Any:
    try:
        value = json_depth.loads(text) if isinstance(text, str) else {}
    except ValueError:
        return {"_unparsed_arguments": text}
    return value if isinstance(value, dict) else {"value": value}
