"""Stage 2, request: the Responses request body for each turn.

Two context modes. ``replay`` (default) is explicit: every request carries the original
input, every output item of the previous responses (calls, reasoning, messages, unknown
kinds, unchanged and in order), then the ``function_call_output`` items — it works with
``store: false`` and with stateless local servers. ``chain`` sends only the new outputs
plus ``previous_response_id``, and the instructions again (they are not carried over).
Declarations (``tools``) are rules: the same array every turn unless the catalog changed.

A body keeps a stable prefix for the endpoint's prompt cache: the model and the
instructions, then the declarations (and the tool choice), then the input — so two
requests of a run with the same tools are byte-identical up to the first new input item;
the run's ``prompt_cache_key`` (if any) and other settings follow the input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ...errors import UsageError
from .additions import reloaded
from .alias import NAMESPACE_SEPARATOR
from .compaction import compact_point, context_management
from .namespaces import function_tools_by_alias
from .policy_turns import turn_choice

__all__ = ["Conversation", "RequestSettings", "build_body", "tool_choice_value", "user_message"]

ContextMode = Literal["replay", "chain"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestSettings:
    """Per-run request options (from the CLI or the library)."""

    model: str
    instructions: str | None = None
    tool_choice: str = "auto"
    """``auto``, ``required``, ``none`` or a tool alias."""
    parallel_tool_calls: bool = True
    context_mode: ContextMode = "replay"
    store: bool | None = None
    """None leaves the API default; False also asks for encrypted reasoning to replay."""
    stream: bool = True
    """Ask for server-sent events (``stream: true``): text as it is written, each call as
    its item closes. An endpoint that answers JSON anyway is read as before."""
    extra: dict[str, Any] = field(default_factory=dict)
    """More body fields (temperature, max_output_tokens, ``prompt_cache_options``, ...), sent as given."""
    prompt_cache_key: str | None = None
    """Sent as ``prompt_cache_key``: requests that share it share the endpoint's prompt cache."""
    compact_at: int | None = None
    """Sent as ``context_management`` (``compaction`` at this many tokens): the endpoint may
    compact the context into one item, and later inputs start from it (``compaction.py``)."""


def user_message(task: str) -> dict[str, Any]:
    """The user's task as the first input item."""
    return {"role": "user", "content": task}


def tool_choice_value(choice: str, aliases: list[str]) -> str | dict[str, Any]:
    """``auto`` / ``required`` / ``none``, or a specific tool by alias."""
    if choice in ("auto", "required", "none"):
        return choice
    if choice not in aliases:
        offered = ", ".join(aliases) or "none"
        raise UsageError(f"--tool-choice {choice!r} is not a tool alias; tools: {offered}")
    if NAMESPACE_SEPARATOR in choice:  # the API's function choice names no namespace
        raise UsageError(f"--tool-choice {choice!r} names a tool inside a namespace, which a tool "
                         "choice cannot name: use auto or required, or --declare flat")
    return {"type": "function", "name": choice}


@dataclass(slots=True)
class Conversation:
    """The items the model has seen and produced, in order: the replay history."""

    history: list[dict[str, Any]] = field(default_factory=list)
    pending: list[dict[str, Any]] = field(default_factory=list)
    """Items produced since the last request (what chain mode sends)."""
    previous_response_id: str | None = None
    compactions: list[tuple[str | None, int]] = field(default_factory=list)
    """(response id, items dropped) for each response whose compaction item later inputs
    start from, in order."""
    reoffer: dict[str, Any] | None = None
    """An ``additional_tools`` item offering again what client searches loaded before the
    latest compaction (``additions.reloaded``), not yet sent: the loop adds it before the
    next request (after the calls' outputs)."""

    def start(self, first: list[dict[str, Any]]) -> None:
        """The run's first input items (the task as a user message, or a prompt's)."""
        self.history.extend(first)
        self.pending.extend(first)

    def add_response(
        self, response_id: str | None, output: list[dict[str, Any]], *, prune: bool = True
    ) -> None:
        """The response's output joins the history; with ``prune`` (replay mode: chain mode's
        ``previous_response_id`` carries everything, and is not pruned) a compaction item in it
        makes the history start from it."""
        self.history.extend(output)
        self.pending.clear()
        self.previous_response_id = response_id
        if prune:
            self.compact(response_id, output)

    def compact(self, response_id: str | None, output: list[dict[str, Any]]) -> int | None:
        """Start the history from the compaction item of ``output`` (the response's items, the
        history's last) when it holds one that may start it; how many items went, or None."""
        compacted = compact_point(self.history, output)
        if compacted is None:
            return None
        dropped = self.history[: compacted.start]
        del self.history[: compacted.start]  # the compaction item carries what came before it
        self.compactions.append((response_id, compacted.dropped))
        self.reoffer = reloaded(dropped, self.history)
        return compacted.dropped

    def add_outputs(self, items: list[dict[str, Any]]) -> None:
        self.history.extend(items)
        self.pending.extend(items)


def build_body(
    settings: RequestSettings, tools: list[dict[str, Any]], conversation: Conversation,
    allowed: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The exact JSON body of the next request; ``allowed``: the aliases a policy's phase
    rules leave this turn (``tools`` unchanged, ``tool_choice`` lists them)."""
    body: dict[str, Any] = {"model": settings.model}
    if settings.instructions:
        body["instructions"] = settings.instructions
    if tools:  # before the input: the part of the prompt that stays the same (the cache's prefix)
        body["tools"] = tools
        aliases = list(function_tools_by_alias(tools))
        asked = tool_choice_value(settings.tool_choice, aliases)
        body["tool_choice"] = asked if allowed is None else turn_choice(asked, allowed)
        body["parallel_tool_calls"] = settings.parallel_tool_calls
    chain = settings.context_mode == "chain" and conversation.previous_response_id is not None
    body["input"] = list(conversation.pending if chain else conversation.history)
    if chain:
        body["previous_response_id"] = conversation.previous_response_id
    if settings.prompt_cache_key is not None:
        body["prompt_cache_key"] = settings.prompt_cache_key
    if settings.compact_at is not None:
        body["context_management"] = context_management(settings.compact_at)
    if settings.store is not None:
        body["store"] = settings.store
        if settings.store is False:
            body["include"] = ["reasoning.encrypted_content"]
    if settings.stream:
        body["stream"] = True
    body.update(settings.extra)
    return body
