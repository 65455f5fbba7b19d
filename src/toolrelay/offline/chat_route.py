"""The stand-in's ``POST /v1/chat/completions``: the same scripts, answered in the chat dialect.

A chat request is read as the Responses request it says (``protocol.chat.responses_request``:
messages → input items, function tools, tool_choice), answered by the responder exactly as
a ``/v1/responses`` request (script, scenario, checks: a tool message without its call is
the same 400; a replayed assistant message gets the id of the answer the stand-in gave with
its text, so a conversation's next user turn is its next turn), and the Response written
back as a chat completion (``completion_of``) or, with ``stream: true``, as
``chat.completion.chunk`` events (``chat_chunks``): a role chunk, the text (or refusal) in
pieces, each tool call's first delta (index, id, name) then its arguments in pieces, the
finish chunk, the usage chunk when ``stream_options.include_usage`` asks for it, and
``data: [DONE]``. A script entry's ``tokens_per_second`` and ``pause`` pace the chunks (a
pause before each tool call after the first), and its stream faults and holds happen in chat's
terms (``chat_stream_plan``), on the turn's first answer as with Responses.

``OfflineModel(..., chat_only=True)`` answers ``/v1/responses`` 404, as a server without the
Responses API does (``--api auto``'s fallback is tested against it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any, Final, Protocol

from ..protocol import json_depth
from ..protocol.chat import assistant_message, chat_usage, responses_request
from ..protocol.responses import FAILED, FUNCTION_CALL, INCOMPLETE, MESSAGE
from .chat_stream_plan import ChatFrames, chat_stream_plan
from .http_answer import SSE_HEADERS, Answer, json_answer
from .state import Ledger
from .stream_script import StreamSettings
from .turns import ScriptProgress, request_context, request_turn
from .wire import error_body

__all__ = ["CHAT_COMPLETIONS_PATH", "Answering", "chat_answer", "chat_chunks", "completion_of"]

CHAT_COMPLETIONS_PATH: Final = "/v1/chat/completions"


class Answering(Protocol):
    """What the route needs of the responder (``responder.Responder``)."""

    requests: list[dict[str, Any]]
    progress: ScriptProgress | None
    ledger: Ledger

    def answer(self, body: dict[str, Any]) -> Answer: ...

    def check_key(self, headers: Mapping[str, str]) -> Answer | None: ...


_PIECE: Final = 8
"""Characters per streamed text or arguments piece."""


def chat_answer(responder: Answering, headers: Mapping[str, str], raw: bytes) -> Answer:
    """The answer to one chat completion request."""
    refused = responder.check_key(headers)
    if refused is not None:
        return refused
    try:
        chat = json_depth.loads(raw)
    except (ValueError, UnicodeDecodeError):
        chat = None
    if not isinstance(chat, dict) or not isinstance(chat.get("messages"), list):
        return json_answer(400, error_body("We could not parse the JSON body of your request: a chat "
                                           "completion request needs a 'messages' array."))
    responder.requests.append(chat)
    view = {key: value for key, value in responses_request(chat).items() if key != "stream"}
    _name_answers(view, responder.ledger)
    settings, first = _stream_settings(responder, view)
    answer = responder.answer(view)
    if answer.status != 200:
        return answer
    response = json.loads(answer.body)
    if response.get("status") == FAILED:
        error = response.get("error") or {}
        return json_answer(500, error_body(str(error.get("message") or "The model failed."),
                                           type="server_error", code=error.get("code")))
    completion = completion_of(response)
    if chat.get("stream") is not True:
        return json_answer(200, completion)
    usage = (chat.get("stream_options") or {}).get("include_usage") is True
    stream = ChatFrames.of(list(chat_chunks(completion, usage=usage)))
    plan = chat_stream_plan(stream, settings if first else replace(settings, fault=None))
    if plan.simple:
        return Answer(status=200, body=b"".join(step.data for step in plan.steps),
                      content_type="text/event-stream", headers=SSE_HEADERS)
    return Answer(status=200, body=b"", content_type="text/event-stream", headers=SSE_HEADERS, plan=plan)


def _name_answers(view: dict[str, Any], ledger: Ledger) -> None:
    """Give each replayed assistant message the id of the answer the stand-in gave with its
    text: chat replays the model's answers without ids, and a user message after an answer
    is a conversation's next turn (``turns.request_turn``), after a prompt's own assistant
    message it is not."""
    replayed = [item for item in view.get("input") or [] if isinstance(item, dict)
                and item.get("type") == MESSAGE and item.get("role") == "assistant" and "id" not in item]
    if not replayed:
        return
    issued = {_text_of(item): item["id"] for response in ledger.responses.values() for item in response.output
              if item.get("type") == MESSAGE and isinstance(item.get("id"), str)}
    for item in replayed:
        found = issued.get(_text_of(item))
        if found is not None:
            item["id"] = found


def _text_of(item: dict[str, Any]) -> str:
    content = item.get("content")
    return "".join(str(part.get("text") or part.get("refusal") or "") for part in content
                   if isinstance(part, dict)) if isinstance(content, list) else str(content)


def _stream_settings(responder: Answering, view: dict[str, Any]) -> tuple[StreamSettings, bool]:
    """How the script entry that answers ``view`` streams, and whether this is its turn's first
    answer (asked before the responder counts it: a stream fault happens on the first only)."""
    progress = responder.progress
    if progress is None:
        return StreamSettings(), True
    turn = request_turn(request_context(view, responder.ledger))
    entry = progress.entry(turn)
    return (entry.stream if entry is not None else StreamSettings()), progress.answered(turn) == 0


def completion_of(response: dict[str, Any]) -> dict[str, Any]:
    """A Response object as the chat completion that says the same."""
    output = response.get("output") or []
    message = assistant_message(output)
    calls = any(item.get("type") == FUNCTION_CALL for item in output)
    reason = "length" if response.get("status") == INCOMPLETE else "tool_calls" if calls else "stop"
    response_id = str(response.get("id") or "")
    return {
        "id": "chatcmpl-" + response_id.removeprefix("resp_"),
        "object": "chat.completion",
        "created": response.get("created_at"),
        "model": response.get("model"),
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reason}],
        "usage": chat_usage(response.get("usage")),
        "system_fingerprint": None,
    }


def chat_chunks(completion: dict[str, Any], *, usage: bool) -> Iterator[dict[str, Any]]:
    """The chunks that stream ``completion`` (as the OpenAI API writes them)."""
    top = {"id": completion["id"], "object": "chat.completion.chunk", "created": completion["created"],
           "model": completion["model"], "system_fingerprint": None}
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**top, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": "", "refusal": None})
    for piece in _pieces(message.get("content") or ""):
        yield chunk({"content": piece})
    for piece in _pieces(message.get("refusal") or ""):
        yield chunk({"refusal": piece})
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        yield chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                     "function": {"name": function["name"], "arguments": ""}}]})
        for piece in _pieces(function.get("arguments") or ""):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, choice["finish_reason"])
    if usage:
        yield {**top, "choices": [], "usage": completion.get("usage")}


def _pieces(text: str) -> list[str]:
    return [text[start:start + _PIECE] for start in range(0, len(text), _PIECE)]
