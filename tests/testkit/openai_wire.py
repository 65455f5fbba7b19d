"""Request bodies checked against the ``openai`` package's own types (3.57).

``check_body`` validates a Responses request body as ``ResponseCreateParams`` (streaming
or not) with pydantic, unknown keys refused, every nested list drained (pydantic checks an
``Iterable`` field lazily, item by item as it is read): a namespace, a function tool's
``output_schema``, a ``function_call`` input item with its ``namespace``. It raises
``pydantic.ValidationError`` naming the first fields that do not fit.

``check_chat_body`` does the same for a chat completion request body, as
``CompletionCreateParams`` (``openai.types.chat.completion_create_params``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from openai.types.chat.completion_create_params import (
    CompletionCreateParamsNonStreaming,
    CompletionCreateParamsStreaming,
)
from openai.types.responses.response_create_params import (
    ResponseCreateParamsNonStreaming,
    ResponseCreateParamsStreaming,
)
from pydantic import ConfigDict, TypeAdapter

__all__ = ["check_body", "check_chat_body"]

_NO_EXTRA = ConfigDict(extra="forbid")
# A list of the TypedDict: a TypedDict's own adapter takes no config, a list's applies to it.
_ADAPTERS = {
    True: TypeAdapter(list[ResponseCreateParamsStreaming], config=_NO_EXTRA),
    False: TypeAdapter(list[ResponseCreateParamsNonStreaming], config=_NO_EXTRA),
}


def check_body(body: dict[str, Any]) -> None:
    """Raise ``pydantic.ValidationError`` unless ``body`` is a request the types accept."""
    _drain(_ADAPTERS[body.get("stream") is True].validate_python([body]))


_CHAT_ADAPTERS = {
    True: TypeAdapter(list[CompletionCreateParamsStreaming], config=_NO_EXTRA),
    False: TypeAdapter(list[CompletionCreateParamsNonStreaming], config=_NO_EXTRA),
}


def check_chat_body(body: dict[str, Any]) -> None:
    """Raise ``pydantic.ValidationError`` unless ``body`` is a chat completion request the
    types accept."""
    _drain(_CHAT_ADAPTERS[body.get("stream") is True].validate_python([body]))


def _drain(value: Any) -> Any:
    if isinstance(value, Iterator):
        return [_drain(item) for item in value]
    if isinstance(value, dict):
        return {key: _drain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_drain(item) for item in value]
    return value
