"""A streamed chat completion, assembled from its chunks (sans-IO, pure): the chat
dialect's counterpart of ``protocol.stream``, giving the same ``Update`` values.

Each ``data:`` chunk is a ``chat.completion.chunk``; the stream ends with ``data: [DONE]``.
What the chunks make is the chat completion they amount to (``Assembled.response``): one
message per choice, its ``content`` the text deltas joined, its ``tool_calls`` assembled
by ``index``, the last ``finish_reason``, the ``usage`` of the usage chunk, and every other
field as the first chunk that carried it said (``system_fingerprint``, vLLM's
``prompt_token_ids``, ...: kept verbatim).

The updates the loop acts on: a ``TextDelta`` per content delta, and an ``ItemDone`` for a
tool call (a Responses ``function_call`` item, ``protocol.chat.assistant_items``) once its
arguments are complete: when the next call starts, or the choice finishes (its
``finish_reason``, or ``[DONE]``). Then the message's item closes, and ``StreamEnded``.

Local servers' real quirks are tolerated, never an exception: tool-call deltas without
``index`` (a new ``id`` starts the next call; one without either continues the last),
arguments sent whole in one delta, ``finish_reason`` ``stop`` with calls, no usage chunk,
a stream that ends after its ``finish_reason`` without ``[DONE]`` (``ended`` from the
finish on), an ``error`` object in a chunk (``StreamFailed``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from .chat import assistant_items, response_view
from .foreign_names import CHAT_FUNCTION_CALL, CHAT_REFUSAL
from .responses import FUNCTION_CALL, MESSAGE
from .sse import StreamEvent
from .stream_updates import Assembled, ItemDone, StreamEnded, StreamFailed, StreamProblem, TextDelta, Update

__all__ = ["ChatStreamAssembler", "assemble_chat"]

DONE: Final = "[DONE]"
_MESSAGE_KEYS: Final = frozenset({"role", "content", CHAT_REFUSAL, "tool_calls", CHAT_FUNCTION_CALL})
"""Delta fields of the message itself: the rest (``reasoning_content``, ...) are kept as sent."""


@dataclass(slots=True)
class _Call:
    index: int
    id: str | None = None
    type: str = "function"
    name: str | None = None
    arguments: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    closed: bool = False

    def value(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, **self.extra,
                "function": {"name": self.name, "arguments": "".join(self.arguments)}}


class ChatStreamAssembler:
    """Reads one attempt's chat stream, chunk by chunk; see the module docstring."""

    def __init__(self) -> None:
        self._top: dict[str, Any] = {}
        self._role: str | None = None
        self._content: list[str] = []
        self._refusal: list[str] = []
        self._message_extra: dict[str, Any] = {}
        self._calls: list[_Call] = []
        self._finish: str | None = None
        self._usage: Any = None
        self._logprobs: list[Any] = []
        self._done = False
        self._closed_all = False
        self._error: dict[str, Any] | None = None
        self._problems: list[str] = []
        self._retry_safe = True
        self._events = 0

    @property
    def events(self) -> int:
        return self._events

    @property
    def ended(self) -> bool:
        """``[DONE]``, a ``finish_reason`` or an error arrived."""
        return self._done or self._finish is not None or self._error is not None

    def feed(self, event: StreamEvent) -> list[Update]:
        self._events += 1
        updates: list[Update] = []
        if event.data.strip() == DONE:
            self._done = True
            self._close_all(updates)
            return updates
        payload = event.payload
        if payload is None:
            self._problem(event, "its data is not a JSON object", updates)
            return updates
        if isinstance(payload.get("error"), dict):
            self._failed(payload["error"], updates)
            return updates
        if self._done:
            self._problem(event, "a chunk arrived after [DONE]", updates)
            return updates
        for key, value in payload.items():
            if key not in ("choices", "usage", "object") and key not in self._top:
                self._top[key] = value
        if payload.get("usage") is not None:
            self._usage = payload["usage"]
        for choice in payload.get("choices") or []:
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                self._choice(event, choice, updates)
        return updates

    def _choice(self, event: StreamEvent, choice: dict[str, Any], updates: list[Update]) -> None:
        delta = choice.get("delta")
        delta = delta if isinstance(delta, dict) else {}
        for key, value in delta.items():
            if key == "role":
                self._role = self._role or value
            elif key == "content" and isinstance(value, str) and value:
                self._retry_safe = False
                self._content.append(value)
                updates.append(TextDelta(output_index=0, item_id=None, content_index=0, delta=value))
            elif key == CHAT_REFUSAL and isinstance(value, str):
                self._retry_safe = False
                self._refusal.append(value)
            elif key == "tool_calls" and isinstance(value, list):
                self._retry_safe = False
                for part in value:
                    if isinstance(part, dict):
                        self._tool_delta(part, updates)
            elif key in _MESSAGE_KEYS:
                continue
            elif isinstance(value, str) and isinstance(self._message_extra.get(key, ""), str):
                self._retry_safe = self._retry_safe and not value
                self._message_extra[key] = self._message_extra.get(key, "") + value  # reasoning_content
            elif value is not None:
                self._message_extra.setdefault(key, value)
        if isinstance(choice.get("logprobs"), dict):
            self._logprobs.append(choice["logprobs"])
        reason = choice.get("finish_reason")
        if isinstance(reason, str):
            self._finish = reason
            self._close_all(updates)

    def _tool_delta(self, part: dict[str, Any], updates: list[Update]) -> None:
        call = self._call_for(part, updates)
        if isinstance(part.get("id"), str) and call.id is None:
            call.id = part["id"]
        if isinstance(part.get("type"), str):
            call.type = part["type"]
        found = part.get("function")
        function: dict[str, Any] = found if isinstance(found, dict) else {}
        if isinstance(function.get("name"), str) and function["name"] and call.name is None:
            call.name = function["name"]  # some servers repeat it in every delta: the first says it
        if isinstance(function.get("arguments"), str):
            call.arguments.append(function["arguments"])
        for key, value in part.items():
            if key not in ("index", "id", "type", "function"):
                call.extra.setdefault(key, value)

    def _call_for(self, part: dict[str, Any], updates: list[Update]) -> _Call:
        """The call a delta continues, or the one it starts (closing the one before)."""
        index = part.get("index")
        if isinstance(index, int) and not isinstance(index, bool):
            found = next((c for c in self._calls if c.index == index), None)
        elif isinstance(part.get("id"), str):  # no index: a new id starts the next call
            found = next((c for c in self._calls if c.id == part["id"]), None)
            index = len(self._calls)
        else:
            found = self._calls[-1] if self._calls else None
            index = len(self._calls)
        if found is not None:
            return found
        self._close_open(updates)
        call = _Call(index=index)
        self._calls.append(call)
        return call

    def _close_open(self, updates: list[Update]) -> None:
        items = self._items()
        calls = [item for item in items if item.get("type") == FUNCTION_CALL]
        offset = len(items) - len(calls)
        for position, call in enumerate(self._calls):
            if not call.closed:
                call.closed = True
                updates.append(ItemDone(output_index=offset + position, item=calls[position]))

    def _close_all(self, updates: list[Update]) -> None:
        if self._closed_all:
            return
        self._closed_all = True
        self._close_open(updates)
        for index, item in enumerate(self._items()):
            if item.get("type") == MESSAGE:
                updates.append(ItemDone(output_index=index, item=item))
        response = self._built()
        updates.append(StreamEnded(status=str(response_view(response)["status"]), response=response))

    def _failed(self, error: dict[str, Any], updates: list[Update]) -> None:
        code, message, param = (_text(error.get(key)) for key in ("code", "message", "param"))
        self._error = {"code": code, "message": message or "the stream ended with an error"}
        updates.append(StreamFailed(code=code, message=message, param=param))

    def _problem(self, event: StreamEvent, text: str, updates: list[Update]) -> None:
        said = f"event {event.index}: {text}"
        self._problems.append(said)
        updates.append(StreamProblem(index=event.index, text=said))

    def _message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": self._role or "assistant",
                                   "content": "".join(self._content) if self._content else None}
        if self._refusal:
            message["refusal"] = "".join(self._refusal)
        message.update(self._message_extra)
        if self._calls:
            message["tool_calls"] = [call.value() for call in self._calls]
        return message

    def _items(self) -> list[dict[str, Any]]:
        return assistant_items(self._message())

    def _built(self) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": 0, "message": self._message(), "finish_reason": self._finish}
        if self._logprobs:
            choice["logprobs"] = {"content": [t for lp in self._logprobs for t in lp.get("content") or []]}
        built = {**self._top, "object": "chat.completion", "choices": [choice]}
        if self._usage is not None:
            built["usage"] = self._usage
        if self._error is not None:
            built["error"] = self._error
        return built

    def finish(self) -> Assembled:
        """The completion so far: after the last chunk, or after a cut (``terminal`` None)."""
        started = self._events > 0
        terminal = "error" if self._error is not None else (
            str(response_view(self._built())["status"]) if self.ended else None)
        built = self._built() if started else None
        return Assembled(response=built, built=built, terminal=terminal, differences=[],
                         problems=list(self._problems), retry_safe=self._retry_safe)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None if value is None else str(value)


def assemble_chat(events: Iterable[StreamEvent]) -> Assembled:
    """What recorded chat chunks assemble to (``verify`` re-runs the live assembly)."""
    assembler = ChatStreamAssembler()
    for event in events:
        assembler.feed(event)
    return assembler.finish()
