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
pause before each tool call after the first); its stream faults and holds are Responses-only.

``OfflineModel(..., chat_only=True)`` answers ``/v1/responses`` 404, as a server without the
Responses API does (``--api auto``'s fallback is tested against it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Final, Protocol

from ..protocol import json_depth
from ..protocol.chat import assistant_message, chat_usage, responses_request
from ..protocol.responses import FAILED, FUNCTION_CALL, INCOMPLETE, MESSAGE
from .http_answer import SSE_HEADERS, Answer, json_answer
from .state import Ledger
from .stream_plan import Step, StreamPlan
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
    settings = _stream_settings(responder, view)
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
    chunks = [*(_frame(chunk) for chunk in chat_chunks(completion, usage=usage)), b"data: [DONE]\n\n"]
    if not settings.pause and settings.tokens_per_second is None:
        return Answer(status=200, body=b"".join(chunks), content_type="text/event-stream",
                      headers=SSE_HEADERS)
    return Answer(status=200, body=b"", content_type="text/event-stream", headers=SSE_HEADERS,
                  plan=_paced(chunks, settings))


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


def _stream_settings(responder: Answering, view: dict[str, Any]) -> StreamSettings:
    """How the script entry that answers ``view`` streams (its pace; faults are not chat's)."""
    progress = responder.progress
    entry = progress.entry(request_turn(request_context(view, responder.ledger))) if progress else None
    return entry.stream if entry is not None else StreamSettings()


def _paced(chunks: list[bytes], settings: StreamSettings) -> StreamPlan:
    """One write per chunk: ``tokens_per_second`` apart, and ``pause`` after each tool call's
    last chunk when another call follows."""
    spacing = 1 / settings.tokens_per_second if settings.tokens_per_second else 0.0
    steps, clock = [], 0.0
    for position, data in enumerate(chunks):
        starts_call = b'"id":' in data and b'"tool_calls"' in data and position > 0
        if starts_call and any(b'"tool_calls"' in before for before in chunks[:position]):
            clock += settings.pause
        steps.append(Step(clock, data))
        clock += spacing
    return StreamPlan(steps=tuple(steps))


def _frame(chunk: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(chunk, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()


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
