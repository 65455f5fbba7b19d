"""Token usage summed over a run's model responses, in one flat dictionary.

A Responses ``usage`` object nests three of its counts; the sum keeps six, by these names:
``input_tokens``, ``output_tokens``, ``total_tokens``, ``cached_input_tokens``
(``input_tokens_details.cached_tokens``: input read from the prompt cache),
``cache_write_tokens`` (``input_tokens_details.cache_write_tokens``: input written to it)
and ``reasoning_tokens`` (``output_tokens_details.reasoning_tokens``). A count the endpoint
does not give is left out, never claimed as 0. Each dialect's reader gives a response's counts in these names
(``token_counts`` is the Responses one's); ``add_counts`` sums them: ``RunResult.usage``
and a batch's ``usage`` are this sum.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["USAGE_KEYS", "add_counts", "token_counts", "usage_text"]

_PATHS: Final[dict[str, tuple[str, ...]]] = {
    "input_tokens": ("input_tokens",),
    "output_tokens": ("output_tokens",),
    "total_tokens": ("total_tokens",),
    "cached_input_tokens": ("input_tokens_details", "cached_tokens"),
    "cache_write_tokens": ("input_tokens_details", "cache_write_tokens"),
    "reasoning_tokens": ("output_tokens_details", "reasoning_tokens"),
}
USAGE_KEYS: Final = tuple(_PATHS)


def token_counts(usage: Any) -> dict[str, int]:
    """A Responses ``usage`` object's token counts, flat (the Responses dialect reader's
    ``ModelTurn.usage``); a count it does not give is absent."""
    counts: dict[str, int] = {}
    for key, path in _PATHS.items():
        value = _at(usage, path)
        if isinstance(value, int) and not isinstance(value, bool):
            counts[key] = value
    return counts


def add_counts(totals: dict[str, int], counts: dict[str, int]) -> dict[str, int]:
    """``totals`` plus flat ``counts`` (a turn's ``ModelTurn.usage``)."""
    added = dict(totals)
    for key, value in counts.items():
        added[key] = added.get(key, 0) + value
    return added


def usage_text(usage: Any) -> str:
    """``219 in (64 cached), 106 out (12 reasoning), 325 total``; "" with no counts. Tokens
    written to the cache are named when there are any: ``(64 cached, 155 written to cache)``."""
    if not isinstance(usage, dict) or not usage:
        return ""
    written = usage.get("cache_write_tokens")
    wrote = f", {written} written to cache" if isinstance(written, int) and written > 0 else ""
    cached = f" ({usage['cached_input_tokens']} cached{wrote})" if "cached_input_tokens" in usage else ""
    reasoning = f" ({usage['reasoning_tokens']} reasoning)" if "reasoning_tokens" in usage else ""
    parts = [
        f"{usage['input_tokens']} in{cached}" if "input_tokens" in usage else "",
        f"{usage['output_tokens']} out{reasoning}" if "output_tokens" in usage else "",
        f"{usage['total_tokens']} total" if "total_tokens" in usage else "",
    ]
    return ", ".join(part for part in parts if part)


def _at(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value
