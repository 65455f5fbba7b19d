"""The chat dialect's reader (``relay.stages.dialects``): a chat completion → ``ModelTurn``.

The completion's first choice is read as the Responses object it amounts to
(``protocol.chat.response_view``: its message as a ``message`` item and one
``function_call`` item per tool call, ``call_id`` = ``tool_calls[].id``; ``finish_reason``
``length`` → ``incomplete``), then by the Responses reading (``parse.read_response``), so
the loop, verify and view read both dialects' answers alike. ``request`` gives a recorded
chat request body in the Responses vocabulary (``protocol.chat.responses_request``), for the
checks that read what a request carried.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...protocol import chat
from ...protocol.chat_stream import ChatStreamAssembler, assemble_chat
from ...protocol.stream import Assembled, StreamEvent
from .parse import ModelTurn, read_response
from .usage import token_counts

__all__ = ["CHAT", "ChatReader"]


@dataclass(frozen=True, slots=True)
class ChatReader:
    """Chat completions (``protocol.chat``), their usage and streams (``protocol.chat_stream``)."""

    dialect: str = chat.DIALECT
    answer: str = "a chat completion"

    def turn(self, body: dict[str, Any]) -> ModelTurn:
        return read_response(chat.response_view(body))

    def usage(self, body: Any) -> dict[str, int]:
        return token_counts(chat.responses_usage(body.get("usage")) if isinstance(body, dict) else None)

    def assemble(self, events: Sequence[StreamEvent]) -> Assembled:
        return assemble_chat(events)

    def assembler(self) -> ChatStreamAssembler:
        return ChatStreamAssembler()

    def request(
        self, body: dict[str, Any], after: tuple[dict[str, Any], dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        return chat.responses_request(body, after)


CHAT = ChatReader()
