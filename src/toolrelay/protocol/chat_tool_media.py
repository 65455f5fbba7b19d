"""Images and files in tool outputs, in the chat dialect (sans-IO, pure).

A chat ``tool`` message takes text parts only (``ChatCompletionToolMessageParam``). So a
``function_call_output`` whose output holds images or files is sent as its tool message with
each such part replaced by a text placeholder naming it, and, after the tool messages of
that response (chat wants them right after the assistant's ``tool_calls``), one ``user``
message carries the parts, each after a text label saying whose it is::

    {"role": "tool", "tool_call_id": "call_1", "content": [
        {"type": "text", "text": "a photo"},
        {"type": "text",
         "text": "[toolrelay: image 1 of call call_1 is in the user message after the tool messages]"}]}
    {"role": "user", "content": [
        {"type": "text", "text": MEDIA_HEADER},
        {"type": "text", "text": "[toolrelay: image 1 of call call_1]"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,...", "detail": "auto"}}]}

Read back (``restore``), the user message puts each part in its placeholder's place, so the
round trip is exact and ``verify`` judges the user message as part of those calls' feedback:
a changed part changes the output it reads back; a user message that does not fit the
outputs before it whole is read as a user message of its own, and the outputs keep their
placeholders (either way the feedback check sees the difference).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from .responses import INPUT_FILE, INPUT_IMAGE, INPUT_TEXT

__all__ = ["MEDIA_HEADER", "media_message", "restore", "split_output"]

MEDIA_HEADER: Final = ("Images and files from the tool outputs above (a chat tool message carries text "
                       "only), each after the label its tool message names:")
_MEDIA: Final = {INPUT_IMAGE: "image", INPUT_FILE: "file"}
_WHERE: Final = " is in the user message after the tool messages"
_LABEL: Final = re.compile(r"\[toolrelay: (image|file) (\d+) of call (.+)\]", re.DOTALL)

Part = dict[str, Any]
Key = tuple[str, int, str]
"""(kind, number within its output, call_id) of one image or file."""


def split_output(call_id: Any, output: Any, chat_part: Callable[[Any], Any]) -> tuple[Any, list[Part]]:
    """The tool message content for ``output``, and the labelled chat parts (``chat_part`` of
    each image or file) that go in the user message after the tool messages."""
    if not isinstance(output, list):
        return output, []
    content: list[Part] = []
    media: list[Part] = []
    for part in output:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == INPUT_TEXT:
            content.append(_text(part.get("text")))
        elif kind in _MEDIA:
            label = _label((_MEDIA[kind], 1 + len(media) // 2, str(call_id)))
            content.append(_text(label[:-1] + _WHERE + "]"))
            media += [_text(label), chat_part(part)]
        else:
            content.append(_text(f"[{kind} omitted: a chat tool message carries text only]"))
    return content, media


def media_message(media: list[Part]) -> dict[str, Any]:
    """The user message that carries the tool outputs' images and files (``split_output``)."""
    return {"role": "user", "content": [_text(MEDIA_HEADER), *media]}


def restore(outputs: list[dict[str, Any]], message: Any, input_part: Callable[[Any], Any]) -> bool:
    """Put the parts of ``message`` (a ``media_message``) back in the placeholders of
    ``outputs`` (the ``function_call_output`` items read from the tool messages before it),
    as ``input_part`` reads them; False, and nothing changed, when it is no such message or
    does not fit them whole."""
    parts = _labelled_parts(message)
    if parts is None:
        return False
    placed: list[Any] = []
    used: set[Key] = set()
    for item in outputs:
        output = item.get("output")
        if not isinstance(output, list):
            placed.append(output)
            continue
        found = []
        for part in output:
            key = _placeholder_key(part, item.get("call_id"))
            if key is not None and key in parts:
                found.append(input_part(parts[key]))
                used.add(key)
            else:
                found.append(part)
        placed.append(found)
    if used != set(parts):
        return False
    for item, output in zip(outputs, placed, strict=True):
        item["output"] = output
    return True


def _labelled_parts(message: Any) -> dict[Key, Any] | None:
    content = message.get("content") if isinstance(message, dict) and message.get("role") == "user" else None
    if not isinstance(content, list) or len(content) % 2 == 0 or content[0] != _text(MEDIA_HEADER):
        return None
    parts: dict[Key, Any] = {}
    for label, part in zip(content[1::2], content[2::2], strict=True):
        text = label.get("text") if isinstance(label, dict) and label.get("type") == "text" else None
        found = _LABEL.fullmatch(text) if isinstance(text, str) else None
        if found is None or _WHERE in found[0]:
            return None
        parts[(found[1], int(found[2]), found[3])] = part
    return parts


def _placeholder_key(part: Any, call_id: Any) -> Key | None:
    text = part.get("text") if isinstance(part, dict) and part.get("type") == INPUT_TEXT else None
    if not isinstance(text, str) or not text.endswith(_WHERE + "]"):
        return None
    found = _LABEL.fullmatch(text.removesuffix(_WHERE + "]") + "]")
    if found is None or found[3] != str(call_id):
        return None
    return found[1], int(found[2]), found[3]


def _label(key: Key) -> str:
    kind, number, call_id = key
    return f"[toolrelay: {kind} {number} of call {call_id}]"


def _text(text: Any) -> Part:
    return {"type": "text", "text": text}
