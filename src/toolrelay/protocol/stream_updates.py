"""What the stream assembler reports (``protocol.stream``): updates as events arrive, and
the assembled result. Plain frozen values; the loop, the CLI and ``verify`` read them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "Assembled",
    "ItemAdded",
    "ItemDone",
    "ReasoningDelta",
    "RefusalDelta",
    "StreamEnded",
    "StreamFailed",
    "StreamProblem",
    "TextDelta",
    "Update",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    """A piece of answer text (``response.output_text.delta``)."""

    output_index: int
    item_id: str | None
    content_index: int
    delta: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RefusalDelta:
    """A piece of a refusal (``response.refusal.delta``)."""

    output_index: int
    item_id: str | None
    content_index: int
    delta: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningDelta:
    """A piece of reasoning: summary text (``summary``), or raw reasoning text (vLLM, gpt-oss)."""

    output_index: int
    item_id: str | None
    delta: str
    summary: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemAdded:
    """An output item began (``response.output_item.added``): not final, never replayed."""

    output_index: int
    item: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemDone:
    """An output item is final (``response.output_item.done``). A ``function_call`` has its
    ``call_id``, ``name`` (from the added item when the done one lacks it) and ``arguments``."""

    output_index: int
    item: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamEnded:
    """A terminal event: the response ended ``completed``, ``incomplete`` or ``failed``.

    ``response`` is the Response used: the terminal event's when its output is non-empty,
    else the one built from the stream's items. Items of it that had no ``ItemDone`` (a
    server that sends no done events) are known only from here."""

    status: str
    response: dict[str, Any] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamFailed:
    """An ``error`` event: the stream ends without a Response."""

    code: str | None
    message: str | None
    param: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamProblem:
    """Something out of order in the stream (reported, tolerated): its event and what."""

    index: int
    text: str


Update = (
    TextDelta | RefusalDelta | ReasoningDelta | ItemAdded | ItemDone
    | StreamEnded | StreamFailed | StreamProblem
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Assembled:
    """One attempt's stream, read to its end or to a cut."""

    response: dict[str, Any] | None
    """The Response used: the terminal event's when its output is non-empty, else ``built``;
    None when nothing arrived."""
    built: dict[str, Any] | None
    """The Response built from created / in_progress and the ``output_item.done`` items
    (an item without one: from its added item and deltas), with the terminal status, usage
    and error; after an ``error`` event a failed Response carrying it."""
    terminal: str | None
    """``completed``, ``incomplete``, ``failed``, ``error`` (an error event), or None: cut."""
    differences: list[str]
    """Where the terminal event's output differs from the built items, beyond the known
    quirks (reasoning ``encrypted_content``): one sentence each."""
    problems: list[str]
    """The ``StreamProblem`` texts, in order."""
    retry_safe: bool
    """Nothing but created / in_progress / queued arrived: asking again repeats nothing."""
