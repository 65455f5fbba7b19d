"""Compaction drawn (``--compact-at``): the boundary as a note on the App lane, "compaction
at turn N, K items dropped", where the run recorded it (``compaction`` events); the next
request's row shows the input starting from the compaction item, its item count smaller."""

from __future__ import annotations

from typing import Any

from ..events import CompactionEvent
from ..protocol.responses import COMPACTION
from .model import Badge, Row

__all__ = ["COMPACTION_DESCRIBERS", "compaction_row", "starts_from_compaction"]


def compaction_row(record: dict[str, Any]) -> Row:
    """A ``compaction`` event: the turn whose response compacted, and what later inputs leave out."""
    response = record.get("response_id")
    badges = [Badge(kind="resp", text=response)] if isinstance(response, str) else []
    label = f"compaction at turn {record.get('turn')}, {record.get('dropped')} items dropped"
    return Row(seq=int(record.get("seq", 0)), kind=CompactionEvent.kind, stage="compaction", source="app",
               target="app", label=label,
               detail="later inputs start from the response's compaction item (the items before it are "
                      "left out, each call among them answered)", badges=badges)


def starts_from_compaction(items: Any) -> bool:
    """Whether a request's input begins with a compaction item (its request row says so)."""
    return isinstance(items, list) and bool(items) and isinstance(items[0], dict) \
        and items[0].get("type") == COMPACTION


COMPACTION_DESCRIBERS = {CompactionEvent.kind: compaction_row}
