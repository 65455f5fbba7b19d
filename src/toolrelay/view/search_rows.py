"""Tool search drawn (``--tool-search``): a client search toolrelay answered, as a note on
the App lane naming the query and what it loaded; the request rows say what each request
declared (``deferred.declaration_summary``) and the response rows name each search item."""

from __future__ import annotations

from typing import Any

from ..events import ToolSearchEvent
from .model import Badge, Row

__all__ = ["SEARCH_DESCRIBERS", "search_row"]


def search_row(record: dict[str, Any]) -> Row:
    """A ``tool_search`` event: the query and the tools its output loads, best first."""
    hits = [hit for hit in record.get("hits") or [] if isinstance(hit, dict)]
    found = ", ".join(f"{hit.get('alias')} ({hit.get('score')})" for hit in hits)
    problem = record.get("problem")
    detail = f"{problem}: nothing loaded" if problem else f"loads {found or 'nothing (no tool matches)'}"
    call_id = record.get("call_id") if isinstance(record.get("call_id"), str) else None
    badges = [Badge(kind="call", text=call_id)] if call_id else []
    return Row(seq=int(record.get("seq", 0)), kind=ToolSearchEvent.kind, stage="search", source="app",
               target="app", label=f"tool search {record.get('query')!r} (limit {record.get('limit')})",
               detail=detail, badges=badges, state="warn" if problem else "ok", call_id=call_id)


SEARCH_DESCRIBERS = {ToolSearchEvent.kind: search_row}
