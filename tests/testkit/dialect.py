"""The model dialect a shared test runs in, and how it reads what went over the wire.

The loop speaks Responses; ``--api chat`` sends the same requests as chat completions. A
test that takes the ``dialect`` fixture (tests/conftest.py: ``responses`` and ``chat``)
runs once per dialect: it passes ``dialect.api`` to the run, checks every recorded body
with ``dialect.check`` (the openai package's types of that dialect: ``ResponseCreateParams``
or ``CompletionCreateParams``) and asserts on ``dialect.request(body)``: the body in the
loop's vocabulary, read back by the same pure stage ``verify`` uses
(``relay.stages.chat_reader``). A model answer recorded in either dialect reads as
Responses output items with ``dialect.output``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from toolrelay.protocol.chat import response_view
from toolrelay.relay.stages.chat_reader import CHAT

from .openai_wire import check_body, check_chat_body

__all__ = ["DIALECTS", "Dialect"]

DIALECTS: Final = ("responses", "chat")


@dataclass(frozen=True, slots=True)
class Dialect:
    """One wire dialect: ``responses`` or ``chat``."""

    api: str

    @property
    def chat(self) -> bool:
        return self.api == "chat"

    def check(self, body: dict[str, Any]) -> None:
        """Raise ``pydantic.ValidationError`` unless the openai types of this dialect accept ``body``."""
        (check_chat_body if self.chat else check_body)(body)

    def request(self, body: dict[str, Any]) -> dict[str, Any]:
        """A recorded request body in the Responses vocabulary (a Responses body as it is)."""
        return CHAT.request(body) if self.chat else body

    def output(self, answer: dict[str, Any]) -> list[dict[str, Any]]:
        """A recorded model answer's output items (a chat completion's first choice, read)."""
        items = response_view(answer)["output"] if self.chat else answer.get("output")
        return list(items or [])

    def calls(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The ``function_call`` items a request body replays."""
        return _items(self.request(body), "function_call")

    def outputs(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The ``function_call_output`` items a request body feeds back."""
        return _items(self.request(body), "function_call_output")

    def tools(self, body: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """The function tools a request body declares, by name."""
        return {tool["name"]: tool for tool in self.request(body).get("tools") or [] if "name" in tool}


def _items(body: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    found = body.get("input")
    return [item for item in found if isinstance(item, dict) and item.get("type") == kind] \
        if isinstance(found, list) else []
