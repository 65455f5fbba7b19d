"""A ``toolrelay call --transcript`` drawn: the call asked for, and how it ended.

The transcript of a call made without a model opens with ``direct_call`` (the alias and
arguments text as given) and closes with ``direct_call_end``; between them the servers
start, the policy decides and the call goes out like a run's. The first is an arrow from
the user to toolrelay (the command), the last one back (how it ended, or why it was never
made: a tool the offer withheld); both carry the call's call_id, so they open and close
the call's own frame (``layout``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ..events import CallOutcomeEvent
from ..relay.stages.direct_call import NOT_OFFERED, DirectCall, DirectCallEnd
from ..relay.stages.result import status_words
from .model import Badge, Row

__all__ = ["DIRECT_CALL_DESCRIBERS", "direct_call_summary", "ending_words"]


def _row(record: dict[str, Any], **fields: Any) -> Row:
    call_id = record.get("call_id")
    named = call_id if isinstance(call_id, str) and call_id else None
    return Row(seq=int(record.get("seq", 0)), kind=str(record.get("kind")), stage="call",
               badges=[Badge(kind="call", text=named)] if named else [], call_id=named, **fields)


def _asked(record: dict[str, Any]) -> Row:
    return _row(record, source="user", target="app", label=f"toolrelay call {record.get('alias')}",
                detail=f"arguments (JSON text, as given): {record.get('arguments_text')}")


def ending_words(status: Any) -> str:
    """``ok``, ``tool error``, ``refused`` (by whom: the outcome row above says), ``not offered``."""
    text = str(status or "?")
    return "refused" if text == "refused_by_hook" else text.replace("_", " ")


def _ended(record: dict[str, Any]) -> Row:
    status = record.get("status")
    reason = str(record.get("reason") or "")
    return _row(record, source="app", target="user", label=f"call ended: {ending_words(status)}",
                detail=reason or f"direct_call_end status {status}",
                state="ok" if status == "ok" else "failed")


def direct_call_summary(events: Sequence[dict[str, Any]]) -> tuple[str, str, str] | None:
    """For a ``toolrelay call`` transcript: its task line, status and reason for the page's
    header (``refused by policy`` when its outcome names the refuser; None for any other
    transcript)."""
    asked = next((e for e in events if e.get("kind") == DirectCall.kind), None)
    if asked is None:
        return None
    end = next((e for e in events if e.get("kind") == DirectCallEnd.kind), None)
    task = f"toolrelay call {asked.get('alias')} {asked.get('arguments_text')}"
    if end is None:
        return task, "unfinished", "the transcript has no direct_call_end event"
    status = str(end.get("status"))
    said = "withheld from the offer" if status == NOT_OFFERED else "one call, no model"
    outcome = next((e.get("outcome") for e in events if e.get("kind") == CallOutcomeEvent.kind
                    and e.get("call_id") == asked.get("call_id")), None)
    refused_by = outcome.get("refused_by") if isinstance(outcome, dict) else None
    words = status_words(status, refused_by) if isinstance(refused_by, str) else ending_words(status)
    return task, words, str(end.get("reason") or said)


DIRECT_CALL_DESCRIBERS: Final = {DirectCall.kind: _asked, DirectCallEnd.kind: _ended}
