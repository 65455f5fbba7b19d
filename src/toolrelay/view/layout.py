"""Rows → sections: the setup, one group per model turn, shutdown; calls framed by call_id.

The seed's order is the reading order: inside a turn come the model request and
response, then each call's rows together (parse → route → call → result → outcome →
feedback), then the next turn's request. Parallel calls interleave in the transcript;
grouping them by ``call_id`` keeps each call readable, and every row still shows its
``seq``. Large runs start mostly collapsed so the page's DOM stays small: sections open
in order while a row budget lasts, and inside a turn with many calls only the first
calls open (a collapsed one is a single summary line until clicked).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from ..events import (
    MCP_REQUEST,
    CallOutcomeEvent,
    CallParsed,
    CallRouted,
    ModelRequestEvent,
    ModelResponseEvent,
    RunEndEvent,
    RunStartEvent,
)
from .model import CallGroup, Group, Row, RowState

__all__ = ["CALLS_OPEN", "ROW_BUDGET", "arrange", "plan_expansion"]

ROW_BUDGET: Final = 300
"""Rows drawn when the page opens (collapsed calls count one line each)."""
CALLS_OPEN: Final = 12
"""In a turn with more than ``2 * CALLS_OPEN`` calls, only the first ``CALLS_OPEN`` open."""
_MODEL_KINDS: Final = (ModelRequestEvent.kind, ModelResponseEvent.kind)
"""A turn's own rows: they stay in the turn, outside any call's frame."""


@dataclass(slots=True)
class _Sections:
    """The groups built so far and where the next row goes."""

    groups: list[Group] = field(default_factory=list)
    calls: dict[str, CallGroup] = field(default_factory=dict)
    ended: bool = False

    @property
    def current(self) -> Group:
        return self.groups[-1]

    def open(self, kind: str, turn: int | None = None) -> None:
        if kind == "turn":
            title = f"Turn {turn}" if turn is not None else "Run"
            group = Group(key=f"turn-{turn if turn is not None else 0}", kind="turn", title=title, turn=turn)
        elif kind == "end":
            group = Group(key="end", kind="end", title="Shutdown")
        else:
            group = Group(key="setup", kind="setup", title="Setup · connect, discover, declare")
        self.groups.append(group)
        self.calls = {}


def arrange(drawn: Iterable[tuple[Row, dict[str, Any]]]) -> list[Group]:
    """Place each row (with the record it draws, in seq order) in its section and call group."""
    sections = _Sections()
    sections.open("setup")
    for row, record in drawn:
        _maybe_open_section(sections, row, record)
        _place(sections, row, record)
    groups = [group for group in sections.groups if group.items]
    for group in groups:
        _summarise(group)
    return groups


def _place(sections: _Sections, row: Row, record: dict[str, Any]) -> None:
    group = sections.current
    if row.call_id is None or row.kind in _MODEL_KINDS:
        group.items.append(row)
        return
    call = sections.calls.get(row.call_id)
    if call is None:
        call = sections.calls[row.call_id] = CallGroup(call_id=row.call_id)
        group.items.append(call)
    call.rows.append(row)
    _note_call_facts(call, record)


def _note_call_facts(call: CallGroup, record: dict[str, Any]) -> None:
    """The call frame's header: alias, route target, MCP id and connection, outcome."""
    kind = record.get("kind")
    if kind == CallParsed.kind:
        call.alias = str(record.get("alias") or "")
    elif kind == CallRouted.kind:
        call.target = f"{record.get('server')} / {record.get('tool')}"
    elif kind == MCP_REQUEST and record.get("method") == "tools/call":
        call.mcp_id = record.get("mcp_id")
        call.connection = f"{record.get('server')}#{record.get('connection')}"
    elif kind == CallOutcomeEvent.kind and isinstance(record.get("outcome"), dict):
        outcome = record["outcome"]
        call.status = str(outcome.get("status") or "")
        call.elapsed = outcome.get("elapsed") if isinstance(outcome.get("elapsed"), int | float) else None
        call.alias = call.alias or str(outcome.get("alias") or "")


def _maybe_open_section(sections: _Sections, row: Row, record: dict[str, Any]) -> None:
    group = sections.current
    if row.kind == RunStartEvent.kind:
        sections.open("turn")
    elif row.kind == ModelRequestEvent.kind and not sections.ended:
        turn = record.get("turn") if isinstance(record.get("turn"), int) else None
        if group.kind == "turn" and group.turn is None:
            group.turn, group.title, group.key = turn, f"Turn {turn}", f"turn-{turn}"
        elif group.kind != "turn" or group.turn != turn:
            sections.open("turn", turn)
    elif row.kind == RunEndEvent.kind:
        sections.ended = True
    elif sections.ended and group.kind != "end":
        sections.open("end")


def _summarise(group: Group) -> None:
    """Fill each call's header fields and the section's one-line summary and state."""
    calls = group.calls()
    for call in calls:
        call.state = _worst(row.state for row in call.rows)
        call.broken = any(not note.ok for row in call.rows for note in row.links)
    arrows = sum(1 for row in group.rows() if row.message)
    failed = sum(1 for call in calls if call.state == "failed")
    parts = [f"{arrows} message{'s' if arrows != 1 else ''}"]
    if calls:
        parts.append(f"{len(calls)} call{'s' if len(calls) != 1 else ''}")
    if failed:
        parts.append(f"{failed} failed")
    group.summary = " · ".join(parts)
    group.state = _worst(row.state for row in group.rows())
    group.broken = any(not note.ok for row in group.rows() for note in row.links)


def _worst(states: Iterable[RowState]) -> RowState:
    seen = set(states)
    return "failed" if "failed" in seen else "warn" if "warn" in seen else "ok"


def plan_expansion(groups: list[Group], budget: int = ROW_BUDGET) -> None:
    """Decide what is open when the page loads; anything a broken link names stays open."""
    used = 0
    for group in groups:
        _plan_calls(group)
        cost = _cost(group)
        fits = used + cost <= budget
        used = used + cost if fits else budget + 1  # once one section stays shut, so do the rest
        group.expanded = fits or group.broken


def _plan_calls(group: Group) -> None:
    calls = group.calls()
    if len(calls) <= 2 * CALLS_OPEN:
        return
    for index, call in enumerate(calls):
        call.expanded = index < CALLS_OPEN or call.broken


def _cost(group: Group) -> int:
    return sum(len(item.rows) + 1 if isinstance(item, CallGroup) and item.expanded else 1
               for item in group.items)
