"""The sampling fields of a model request: ``temperature``, ``top_p``, ``seed``,
``max_output_tokens`` and ``top_logprobs``, one check for every place that takes them
(``RunOptions`` and the CLI's ``--temperature`` ..., a batch task line) and the body fields
they become (pure).

They go in each request body under their Responses names (the chat dialect renames
``max_output_tokens`` to ``max_completion_tokens`` and adds ``logprobs: true`` to
``top_logprobs``: ``protocol.chat``). ``top_logprobs`` also asks a Responses endpoint to
``include`` ``message.output_text.logprobs`` (dropped in chat, which has no ``include``).
``seed`` is a Chat Completions field the Responses API has not: it needs ``api`` ``chat``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["LOGPROBS_INCLUDE", "SAMPLING", "SEED_NEEDS_CHAT", "sampling_extra", "sampling_problem"]

SAMPLING: Final = ("temperature", "top_p", "seed", "max_output_tokens", "top_logprobs")
"""The sampling fields, by their Responses names (a task line's keys, ``RunOptions``' fields)."""
LOGPROBS_INCLUDE: Final = "message.output_text.logprobs"
SEED_NEEDS_CHAT: Final = "seed is a Chat Completions field the Responses API has not"
_RANGES: Final = {"temperature": (0.0, 2.0), "top_p": (0.0, 1.0)}


def sampling_problem(key: str, value: Any) -> str | None:
    """Why ``value`` is no ``key`` (``temperature must be from 0 to 2, got 3``), or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{key} must be a number, got {value!r}"
    if key in _RANGES:
        low, high = _RANGES[key]
        if not low <= value <= high:  # also refuses nan
            return f"{key} must be from {low:g} to {high:g}, got {value!r}"
        return None
    if not isinstance(value, int):
        return f"{key} must be a whole number, got {value!r}"
    if key == "max_output_tokens" and value < 1:
        return f"max_output_tokens must be at least 1, got {value!r}"
    if key == "top_logprobs" and not 0 <= value <= 20:
        return f"top_logprobs must be from 0 to 20, got {value!r}"
    return None


def sampling_extra(fields: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """The request body's extra fields (``extra``, the run's own) with the sampling ``fields``
    given (None: not given), and ``include`` asking for logprobs with ``top_logprobs``."""
    given = {key: value for key, value in fields.items() if value is not None}
    body = {**extra, **given}
    if "top_logprobs" in given:
        include = extra.get("include")
        listed = list(include) if isinstance(include, list) else []
        body["include"] = listed if LOGPROBS_INCLUDE in listed else [*listed, LOGPROBS_INCLUDE]
    return body
