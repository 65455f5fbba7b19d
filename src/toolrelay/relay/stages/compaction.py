"""Compaction: the endpoint folds a long context into one ``compaction`` item.

``--compact-at TOKENS`` (``RunOptions.compact_at``) puts ``context_management: [{"type":
"compaction", "compact_threshold": TOKENS}]`` on every Responses request. When the rendered
context crosses it, the endpoint compacts and its response's output holds a ``compaction``
item (``encrypted_content``, opaque). In replay mode the item is replayed unchanged like
every other output item, and the items before the most recent one are left out of later
inputs (the API's docs: the latest compaction item carries the context they held); in chain
mode nothing is pruned (``previous_response_id`` carries it all, and the docs say not to).

The one exception: a ``function_call`` of the same response *before* the compaction item
would lose its call while its output still has to go back, so then nothing is dropped (the
full context stays legal, only larger). ``verify`` (``verify/compaction.py``) holds requests
to the same rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...protocol.responses import COMPACTION, FUNCTION_CALL

__all__ = ["Compacted", "compact_point", "context_management", "last_compaction"]


def context_management(threshold: int) -> list[dict[str, Any]]:
    """The request field that asks for compaction at ``threshold`` tokens."""
    return [{"type": COMPACTION, "compact_threshold": threshold}]


def last_compaction(items: list[Any]) -> int | None:
    """The index of the last ``compaction`` item of ``items``, or None."""
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        if isinstance(item, dict) and item.get("type") == COMPACTION:
            return index
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Compacted:
    """Where a context that ends with a response's output may start instead."""

    start: int
    """The index (in the context) of the compaction item later inputs start with."""
    dropped: int
    """How many items before it are left out."""


def compact_point(context: list[Any], output: list[Any]) -> Compacted | None:
    """Where ``context`` (ending with ``output``, the latest response's items) may start
    after the response's compaction item; None when the response has none, or when one of
    its function calls comes before it (its call would be dropped, its output not)."""
    at_output = last_compaction(output)
    if at_output is None:
        return None
    if any(isinstance(item, dict) and item.get("type") == FUNCTION_CALL for item in output[:at_output]):
        return None
    start = len(context) - len(output) + at_output
    return Compacted(start=start, dropped=start) if start > 0 else None
