"""The Chat Completions dialect: a Responses request body ↔ a chat completion request body,
and a chat completion ↔ the Responses items the loop replays (sans-IO, pure).

The loop speaks the Responses vocabulary (``relay.stages.request``); the chat adapter
(``model.chat_client``) translates each request on the way out (``chat_request``), and the
chat reader (``relay.stages.chat_reader``) gives a completion's message back as Responses
items (``assistant_items``). The way back (``responses_request``) is how the offline
stand-in and ``verify`` read a recorded chat body: the round trip is exact for every body
the loop builds, so a chat transcript is judged by the same checks as a Responses one.

The mapping (openai-python's ``types/chat``):

- ``instructions`` → a leading ``system`` message; input messages keep their role, their
  ``input_text`` / ``input_image`` / ``input_file`` parts become ``text`` / ``image_url`` /
  ``file`` parts;
- a run of assistant ``message`` and ``function_call`` items → one ``assistant`` message
  (its text as ``content``, each call a ``tool_calls`` entry: ``id`` = ``call_id``);
- ``function_call_output`` → a ``tool`` message (``tool_call_id`` = ``call_id``; the output
  text, or its text parts); its images and files, which a tool message cannot carry, go in
  one ``user`` message after the response's tool messages (``chat_tool_media``);
- function tools → ``{"type": "function", "function": {...}}``; ``tool_choice`` naming a
  function → ``{"type": "function", "function": {"name": ...}}``, and ``allowed_tools``
  (a policy's turn) → ``{"type": "allowed_tools", "allowed_tools": {"mode", "tools"}}``;
- ``max_output_tokens`` → ``max_completion_tokens``, ``reasoning.effort`` →
  ``reasoning_effort``, ``stream`` → ``stream`` with ``stream_options.include_usage``;
  ``include`` is dropped (nothing in chat to include), and so is ``context_management``
  (chat does not compact: ``--api auto`` fallen back to chat goes on uncompacted); ``top_logprobs`` adds
  ``logprobs: true``. Other fields are sent as given.

What chat cannot say raises ``ChatUnsupported`` (a ``ValueError``): ``previous_response_id``
(``--chain``), namespaces (``--declare namespaces``), hosted tools, items chat has no
message for (reasoning is dropped: chat replays no reasoning).
"""

from __future__ import annotations

import operator
from typing import Any, Final

from .chat_tool_media import media_message, restore, split_output
from .foreign_names import CHAT_FUNCTION_CALL, CHAT_REASONING
from .responses import (
    COMPLETED,
    FAILED,
    FUNCTION_CALL,
    FUNCTION_CALL_OUTPUT,
    INCOMPLETE,
    INPUT_FILE,
    INPUT_IMAGE,
    INPUT_TEXT,
    MESSAGE,
    OUTPUT_TEXT,
    REASONING,
    REFUSAL,
)

__all__ = [
    "CHAT_PATH",
    "DIALECT",
    "ChatUnsupported",
    "assistant_items",
    "assistant_message",
    "chat_request",
    "chat_usage",
    "response_view",
    "responses_request",
    "responses_usage",
]

DIALECT: Final = "chat"
CHAT_PATH: Final = "/chat/completions"
"""Appended to the base URL (``{base}/chat/completions``)."""
_ROLES: Final = ("user", "system", "developer")
_FINISHED: Final = {"stop": COMPLETED, "tool_calls": COMPLETED, CHAT_FUNCTION_CALL: COMPLETED,
                    "length": INCOMPLETE, "content_filter": INCOMPLETE}
_INCOMPLETE_REASONS: Final = {"length": "max_output_tokens", "content_filter": "content_filter"}
_RENAMED: Final = {"max_output_tokens": "max_completion_tokens"}
_DROPPED: Final = ("include", "instructions", "input", "tools", "tool_choice", "stream", "context_management")


class ChatUnsupported(ValueError):
    """A Responses request the Chat Completions API cannot express."""


# -- the request, Responses → chat ----------------------------------------------------------


def chat_request(body: dict[str, Any]) -> dict[str, Any]:
    """The chat completion request for a Responses request body (see the module docstring)."""
    if body.get("previous_response_id") is not None:
        raise ChatUnsupported("the chat dialect has no previous_response_id: use the replay context "
                              "mode (no --chain) with --api chat")
    chat: dict[str, Any] = {"model": body.get("model")}
    messages: list[dict[str, Any]] = []
    if isinstance(body.get("instructions"), str):
        messages.append({"role": "system", "content": body["instructions"]})
    messages += chat_messages(body.get("input"))
    chat["messages"] = messages
    if "tools" in body:
        chat["tools"] = [_chat_tool(tool) for tool in body["tools"]]
    if "tool_choice" in body:
        chat["tool_choice"] = _chat_choice(body["tool_choice"])
    for key, value in body.items():
        if key in _DROPPED or key in chat:
            continue
        if key == CHAT_REASONING and isinstance(value, dict):
            if "effort" in value:
                chat["reasoning_effort"] = value["effort"]
            continue
        chat[_RENAMED.get(key, key)] = value
    if "top_logprobs" in body:
        chat["logprobs"] = True  # chat sends no top_logprobs without it
    if body.get("stream") is True:
        chat["stream"] = True
        chat["stream_options"] = {"include_usage": True}
    return chat


def chat_messages(items: Any) -> list[dict[str, Any]]:
    """The input items as chat messages (a user task given as text: one user message)."""
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    messages: list[dict[str, Any]] = []
    assistant: dict[str, Any] | None = None
    media: list[dict[str, Any]] = []  # the images and files of the tool messages just added
    for item in items if isinstance(items, list) else []:
        kind = item.get("type", MESSAGE) if isinstance(item, dict) else None
        role = item.get("role") if isinstance(item, dict) else None
        if kind != FUNCTION_CALL_OUTPUT and media:
            messages.append(media_message(media))
            media = []
        if kind == FUNCTION_CALL or (kind == MESSAGE and role == "assistant"):
            if assistant is None:
                assistant = {"role": "assistant", "content": None}
                messages.append(assistant)
            _add_to_assistant(assistant, item)
            continue
        assistant = None
        if kind == FUNCTION_CALL_OUTPUT:
            content, parts = split_output(item.get("call_id"), item.get("output"), _chat_part)
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": content})
            media += parts
        elif kind == MESSAGE and role in _ROLES:
            messages.append({"role": role, "content": _chat_content(item.get("content"))})
        elif kind == REASONING:
            continue
        else:
            raise ChatUnsupported(f"the chat dialect has no message for an input item of type {kind!r}")
    if media:
        messages.append(media_message(media))
    return messages


def _add_to_assistant(message: dict[str, Any], item: dict[str, Any]) -> None:
    if item.get("type", MESSAGE) == MESSAGE:
        text, refusal = _output_texts(item.get("content"))
        if text is not None:
            message["content"] = text if message["content"] is None else message["content"] + text
        if refusal is not None:
            message["refusal"] = refusal
        return
    if item.get("namespace") is not None:
        raise ChatUnsupported("the chat dialect has no namespaces: use --declare flat with --api chat")
    call = {"id": item.get("call_id"), "type": "function",
            "function": {"name": item.get("name"), "arguments": item.get("arguments")}}
    message.setdefault("tool_calls", []).append(call)


def _output_texts(content: Any) -> tuple[str | None, str | None]:
    if isinstance(content, str):
        return content, None
    texts = [p.get("text") for p in content or [] if isinstance(p, dict) and p.get("type") == OUTPUT_TEXT]
    refusals = [p.get("refusal") for p in content or [] if isinstance(p, dict) and p.get("type") == REFUSAL]
    text = "".join(t for t in texts if isinstance(t, str)) if texts else None
    refusal = "".join(r for r in refusals if isinstance(r, str)) if refusals else None
    return text, refusal


def _chat_content(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    return [_chat_part(part) for part in content]


def _chat_part(part: Any) -> Any:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == INPUT_TEXT:
        return {"type": "text", "text": part.get("text")}
    if kind == INPUT_IMAGE:
        image: dict[str, Any] = {"url": part.get("image_url")}
        if "detail" in part:
            image["detail"] = part["detail"]
        return {"type": "image_url", "image_url": image}
    if kind == INPUT_FILE:
        file = {key: part[key] for key in ("file_data", "file_id", "filename") if key in part}
        return {"type": "file", "file": file}
    raise ChatUnsupported(f"the chat dialect has no message part for an input part of type {kind!r}")


def _chat_tool(tool: Any) -> dict[str, Any]:
    if not isinstance(tool, dict) or tool.get("type") != "function":
        kind = tool.get("type") if isinstance(tool, dict) else type(tool).__name__
        raise ChatUnsupported(f"the chat dialect takes function tools only, not {kind!r} "
                              "(with --api chat use --declare flat)")
    function = {key: tool[key] for key in ("name", "description", "parameters", "strict") if key in tool}
    return {"type": "function", "function": function}


def _chat_choice(choice: Any) -> Any:
    if isinstance(choice, dict) and choice.get("type") == "function":
        return {"type": "function", "function": {"name": choice.get("name")}}
    if isinstance(choice, dict) and choice.get("type") == "allowed_tools":  # a policy's turn's tools
        tools = [_chat_choice(tool) for tool in choice.get("tools") or []]
        return {"type": "allowed_tools", "allowed_tools": {"mode": choice.get("mode"), "tools": tools}}
    return choice


# -- the request, chat → Responses (the stand-in's and verify's reading) ----------------------


def responses_request(
    chat: dict[str, Any], after: tuple[dict[str, Any], dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The Responses request body a chat request says (the inverse of ``chat_request``).

    ``after``: the chat body of the request before it, and the Responses body this function
    made of it. A replayed run's request repeats the messages before it (the transcript
    reader gives back those very objects): their items are then taken from that body, and
    only the messages after them are read (a long run is read in linear time, not in the
    square of its turns; the items are those a whole reading makes, shared)."""
    body: dict[str, Any] = {"model": chat.get("model")}
    messages = chat.get("messages")
    messages = list(messages) if isinstance(messages, list) else []
    if messages and isinstance(messages[0], dict) and messages[0].get("role") == "system" \
            and isinstance(messages[0].get("content"), str):
        body["instructions"] = messages.pop(0)["content"]
    items = _items_after(chat, after)
    body["input"] = input_items(messages) if items is None else items
    renamed = {value: key for key, value in _RENAMED.items()}
    for key, value in chat.items():
        if key in ("model", "messages", "stream_options") or (key == "logprobs" and "top_logprobs" in chat):
            continue
        if key == "tools" and isinstance(value, list):
            body["tools"] = [_responses_tool(tool) for tool in value]
        elif key == "tool_choice":
            body["tool_choice"] = _responses_choice(value)
        elif key == "reasoning_effort":
            body["reasoning"] = {"effort": value}
        else:
            body[renamed.get(key, key)] = value
    return body


def _items_after(
    chat: dict[str, Any], after: tuple[dict[str, Any], dict[str, Any]] | None
) -> list[Any] | None:
    """``chat``'s input items from the request before it (``responses_request``'s ``after``),
    when its messages are that one's very messages and more; None: read them all.

    The messages after those must begin with an assistant message: reading one ends what the
    tool messages before it could still be given (``restore``: a media message after them),
    so the items after it are the same whether the messages before it are read again or not."""
    if after is None:
        return None
    said, made = after[0].get("messages"), after[1].get("input")
    messages = chat.get("messages")
    if not (isinstance(said, list) and isinstance(messages, list) and isinstance(made, list)
            and len(said) <= len(messages) and all(map(operator.is_, said, messages))):  # compared in C
        return None
    new = messages[len(said):]
    if new and not (isinstance(new[0], dict) and new[0].get("role") == "assistant"):
        return None
    if not said and new:  # nothing shared: a system message among the new ones is read as ever
        return None
    return [*made, *input_items(new)]


def input_items(messages: list[Any]) -> list[dict[str, Any]]:
    """Chat messages as the Responses input items they say."""
    items: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []  # the tool messages just read, whose media may follow
    for message in messages:
        role = message.get("role") if isinstance(message, dict) else None
        if role != "tool" and outputs and restore(outputs, message, _input_part):
            outputs = []
            continue
        if role == "tool":
            output = {"type": FUNCTION_CALL_OUTPUT, "call_id": message.get("tool_call_id"),
                      "output": _output_of(message.get("content"))}
            items.append(output)
            outputs.append(output)
            continue
        outputs = []
        if role == "assistant":
            items += assistant_items(message)
        else:
            items.append({"role": role, "content": _input_content(message.get("content"))
                          if isinstance(message, dict) else None})
    return items


def _input_content(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    return [_input_part(part) for part in content]


def _input_part(part: Any) -> Any:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text":
        return {"type": INPUT_TEXT, "text": part.get("text")}
    if kind == "image_url" and isinstance(part.get("image_url"), dict):
        image = part["image_url"]
        found = {"type": INPUT_IMAGE, "image_url": image.get("url")}
        if "detail" in image:
            found["detail"] = image["detail"]
        return found
    if kind == "file" and isinstance(part.get("file"), dict):
        return {"type": INPUT_FILE, **part["file"]}
    return part


def _output_of(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    return [{"type": INPUT_TEXT, "text": p.get("text")} if isinstance(p, dict) and p.get("type") == "text"
            else p for p in content]


def _responses_tool(tool: Any) -> Any:
    function = tool.get("function") if isinstance(tool, dict) else None
    if not isinstance(function, dict):
        return tool
    return {"type": "function", **function}


def _responses_choice(choice: Any) -> Any:
    if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        return {"type": "function", "name": choice["function"].get("name")}
    allowed = choice.get("allowed_tools") if isinstance(choice, dict) else None
    if isinstance(allowed, dict) and choice.get("type") == "allowed_tools":
        return {"type": "allowed_tools", "mode": allowed.get("mode"),
                "tools": [_responses_choice(tool) for tool in allowed.get("tools") or []]}
    return choice


# -- the answer -------------------------------------------------------------------------------


def assistant_items(message: Any) -> list[dict[str, Any]]:
    """An assistant message as the Responses items the loop replays: its text (or refusal)
    as one ``message`` item, then one ``function_call`` item per tool call, in order."""
    if not isinstance(message, dict):
        return []
    items: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    content = message.get("content")
    if isinstance(content, list):  # some servers answer with text parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict)) or None
    if isinstance(content, str) and content:
        parts.append({"type": OUTPUT_TEXT, "text": content, "annotations": []})
    if isinstance(message.get("refusal"), str):
        parts.append({"type": REFUSAL, "refusal": message["refusal"]})
    if parts:
        items.append({"type": MESSAGE, "role": "assistant", "status": COMPLETED, "content": parts})
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        function = function if isinstance(function, dict) else {}
        items.append({"type": FUNCTION_CALL, "call_id": call.get("id") if isinstance(call, dict) else None,
                      "name": function.get("name"), "arguments": function.get("arguments"),
                      "status": COMPLETED})
    return items


def assistant_message(items: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant message of a run of Responses output items (``assistant_items``' inverse)."""
    messages = chat_messages([i for i in items if i.get("type") in (MESSAGE, FUNCTION_CALL)])
    return messages[0] if messages else {"role": "assistant", "content": None}


def response_view(completion: dict[str, Any]) -> dict[str, Any]:
    """A chat completion as the Responses object it amounts to (its first choice); raises
    ``ValueError`` when it is no chat completion."""
    choices = completion.get("choices")
    if not isinstance(choices, list):
        raise ValueError('the model answer has no "choices" array')
    choice = choices[0] if choices and isinstance(choices[0], dict) else {}
    reason = choice.get("finish_reason")
    view: dict[str, Any] = {
        "id": completion.get("id"), "object": "response",
        "status": _FINISHED.get(reason, COMPLETED) if isinstance(reason, str) else COMPLETED,
        "model": completion.get("model"), "output": assistant_items(choice.get("message")),
    }
    if isinstance(reason, str) and reason in _INCOMPLETE_REASONS:
        view["incomplete_details"] = {"reason": _INCOMPLETE_REASONS[reason]}
    if isinstance(completion.get("error"), dict):  # a stream that ended in an error chunk failed
        view["status"], view["error"] = FAILED, completion["error"]
    usage = responses_usage(completion.get("usage"))
    if usage is not None:
        view["usage"] = usage
    return view


def responses_usage(usage: Any) -> dict[str, Any] | None:
    """Chat token counts in the Responses names (None when there are none)."""
    if not isinstance(usage, dict):
        return None
    found: dict[str, Any] = {}
    for chat_name, name in (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens"),
                            ("total_tokens", "total_tokens")):
        if chat_name in usage:
            found[name] = usage[chat_name]
    prompt, completion = usage.get("prompt_tokens_details"), usage.get("completion_tokens_details")
    if isinstance(prompt, dict) and "cached_tokens" in prompt:
        found["input_tokens_details"] = {"cached_tokens": prompt["cached_tokens"]}
    if isinstance(completion, dict) and "reasoning_tokens" in completion:
        found["output_tokens_details"] = {"reasoning_tokens": completion["reasoning_tokens"]}
    return found


def chat_usage(usage: Any) -> dict[str, Any] | None:
    """Responses token counts in the chat names (``responses_usage``' inverse)."""
    if not isinstance(usage, dict):
        return None
    found: dict[str, Any] = {}
    for name, chat_name in (("input_tokens", "prompt_tokens"), ("output_tokens", "completion_tokens"),
                            ("total_tokens", "total_tokens")):
        if name in usage:
            found[chat_name] = usage[name]
    cached = (usage.get("input_tokens_details") or {}).get("cached_tokens")
    reasoning = (usage.get("output_tokens_details") or {}).get("reasoning_tokens")
    if cached is not None:
        found["prompt_tokens_details"] = {"cached_tokens": cached}
    if reasoning is not None:
        found["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return found
