"""Rows → sections: the setup, one group per model turn, shutdown; calls framed by call_id.

The seed's order is the reading order: inside a turn come the model request and
response, then each call's rows together (parse → route → call → result → outcome →
feedback), then the next turn's request. Parallel calls interleave in the transcript;
grouping them by ``call_id`` keeps each call readable, and every row still shows its
``seq``. Large runs start mostly collapsed so the page's DOM stays small: sections open
in order while a row budget lasts, and inside a turn with many calls only the first
calls open (a collapsed one is a single summary line until clicked). A streamed
response's server-sent events are folded into stream groups, one line each until
opened; a call that started while its response streamed sits between them, inside the
response's span (its request to its response), where it happened.
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
    ModelStreamEvent,
    RunEndEvent,
    RunResumedEvent,
    RunStartEvent,
    UserTurnEvent,
)
from ..relay.stages.direct_call import DirectCall, DirectCallEnd
from ..verify.record import CALL_METHODS
from .direct_call_rows import ending_words
from .model import CallGroup, Group, Row, RowState, StreamGroup
from .rows import clip, outcome_words

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
    request: Row | None = None
    """The current turn's latest model request row."""
    streaming: bool = False
    """Between a streamed response's first event and its model_response."""
    texts: dict[str, list[str]] = field(default_factory=dict)
    """Stream group key → the text its deltas carry."""
    asked: tuple[Row, dict[str, Any]] | None = None
    """A ``toolrelay call``'s ``direct_call``, held until its call begins (its servers start
    in between): it opens the call's section and frame."""

    @property
    def current(self) -> Group:
        return self.groups[-1]

    def open(self, kind: str, turn: int | None = None) -> None:
        if kind == "turn":
            title = f"Turn {turn}" if turn is not None else "Run"
            group = Group(key=f"turn-{turn if turn is not None else 0}", kind="turn", title=title, turn=turn)
        elif kind == "end":
            group = Group(key="end", kind="end", title="Shutdown")
        elif kind == "call":
            group = Group(key="call", kind="call", title="Call · toolrelay call, no model")
        else:
            group = Group(key="setup", kind="setup", title="Setup · connect, discover, declare")
        self.groups.append(group)
        self.calls = {}
        self.streaming, self.request = False, None


def arrange(drawn: Iterable[tuple[Row, dict[str, Any]]]) -> list[Group]:
    """Place each row (with the record it draws, in seq order) in its section and call group."""
    sections = _Sections()
    sections.open("setup")
    for row, record in drawn:
        if row.kind == DirectCall.kind and sections.asked is None:
            sections.asked = (row, record)
            continue
        _maybe_open_section(sections, row, record)
        _place(sections, row, record)
    if sections.asked is not None:  # the call never began (a transcript cut short)
        _open_direct_call(sections)
    groups = [group for group in sections.groups if group.items]
    for group in groups:
        _summarise(group, sections.texts)
    return groups


def _open_direct_call(sections: _Sections) -> None:
    """The call's section, opened by the held ``direct_call`` row (its frame's first row)."""
    assert sections.asked is not None
    asked, sections.asked = sections.asked, None
    sections.open("call")
    _place(sections, *asked)


def _place(sections: _Sections, row: Row, record: dict[str, Any]) -> None:
    group = sections.current
    if row.kind == ModelStreamEvent.kind:
        _place_stream(sections, row, record)
        return
    inside = "inside" if sections.streaming else ""
    if row.kind == ModelRequestEvent.kind:
        sections.request, sections.streaming = row, False
    elif row.kind == ModelResponseEvent.kind and sections.streaming:
        row.during, sections.streaming = "end", False
    if row.call_id is None or row.kind in _MODEL_KINDS:
        row.during = row.during or inside
        group.items.append(row)
        return
    call = sections.calls.get(row.call_id)
    if call is None:
        call = sections.calls[row.call_id] = CallGroup(call_id=row.call_id, during=inside)
        group.items.append(call)
    call.rows.append(row)
    _note_call_facts(call, record)


def _place_stream(sections: _Sections, row: Row, record: dict[str, Any]) -> None:
    """A server-sent event joins the stream group just before it, or opens one."""
    group = sections.current
    if not sections.streaming and sections.request is not None:
        sections.request.during = "start"
    sections.streaming = True
    last = group.items[-1] if group.items else None
    if not isinstance(last, StreamGroup):
        last = StreamGroup(key=f"{group.key}/stream-{row.seq}")
        group.items.append(last)
    last.rows.append(row)
    if row.streamed is not None:  # an output_text delta, a chat chunk's content
        sections.texts.setdefault(last.key, []).append(row.streamed)


def _note_call_facts(call: CallGroup, record: dict[str, Any]) -> None:
    """The call frame's header: alias, route target, MCP id and connection, outcome."""
    kind = record.get("kind")
    if kind == CallParsed.kind:
        call.alias = str(record.get("alias") or "")
    elif kind == CallRouted.kind:
        call.target = f"{record.get('server')} / {record.get('tool')}"
    elif kind == MCP_REQUEST and record.get("method") in CALL_METHODS:
        call.mcp_id = record.get("mcp_id")
        call.connection = f"{record.get('server')}#{record.get('connection')}"
    elif kind == DirectCall.kind:  # toolrelay call: the alias asked for, even if never made
        call.alias = str(record.get("alias") or "")
    elif kind == DirectCallEnd.kind and not call.status:  # a call never made: no outcome
        call.status = ending_words(record.get("status"))
    elif kind == CallOutcomeEvent.kind and isinstance(record.get("outcome"), dict):
        outcome = record["outcome"]
        call.status = outcome_words(outcome) if outcome.get("status") else ""
        call.elapsed = outcome.get("elapsed") if isinstance(outcome.get("elapsed"), int | float) else None
        call.alias = call.alias or str(outcome.get("alias") or "")


def _maybe_open_section(sections: _Sections, row: Row, record: dict[str, Any]) -> None:
    group = sections.current
    held = sections.asked
    if held is not None and (row.kind == DirectCallEnd.kind
                             or (held[0].call_id is not None and row.call_id == held[0].call_id)):
        _open_direct_call(sections)  # the call's first event (or its end, for a call never made)
        if row.kind == DirectCallEnd.kind:
            sections.ended = True  # what follows (the servers stopping) is the shutdown
        return
    if row.kind == DirectCallEnd.kind:
        sections.ended = True
    elif row.kind == RunStartEvent.kind:
        sections.open("turn")
    elif row.kind in (RunResumedEvent.kind, UserTurnEvent.kind):  # an ending before it was not the run's end
        sections.ended = False
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


def _summarise(group: Group, texts: dict[str, list[str]]) -> None:
    """Fill each call's header fields and the section's one-line summary and state."""
    calls = group.calls()
    for call in calls:
        call.state = _worst(row.state for row in call.rows)
        call.broken = any(not note.ok for row in call.rows for note in row.links)
    streams = [item for item in group.items if isinstance(item, StreamGroup)]
    for segment in streams:
        _summarise_stream(segment, texts.get(segment.key, []))
    events = sum(len(segment.rows) for segment in streams)
    rows = group.rows()
    arrows = sum(1 for row in rows if row.message) - events
    failed = sum(1 for call in calls if call.state == "failed")
    parts = [f"{arrows} message{'s' if arrows != 1 else ''}"]
    if events:
        parts.append(f"{events} stream event{'s' if events != 1 else ''}")
    if calls:
        parts.append(f"{len(calls)} call{'s' if len(calls) != 1 else ''}")
    if failed:
        parts.append(f"{failed} failed")
    group.summary = " · ".join(parts)
    group.state = _worst(row.state for row in rows)
    group.broken = any(not note.ok for row in rows for note in row.links)


def _summarise_stream(segment: StreamGroup, deltas: list[str]) -> None:
    rows = segment.rows
    first, last = rows[0], rows[-1]
    count = f"{len(rows)} stream event{'s' if len(rows) != 1 else ''}"
    segment.summary = f"{count} · #{first.seq}–#{last.seq} · +{first.at:.2f}–{last.at:.2f} s"
    segment.text = clip("".join(deltas), 120)
    segment.state = _worst(row.state for row in rows)
    segment.broken = any(not note.ok for row in rows for note in row.links)


def _worst(states: Iterable[RowState]) -> RowState:
    seen = set(states)
    return "failed" if "failed" in seen else "warn" if "warn" in seen else "ok"


def plan_expansion(groups: list[Group], budget: int = ROW_BUDGET) -> None:
    """Decide what is open when the page loads; anything a broken link names stays open."""
    used = 0
    for group in groups:
        _plan_calls(group)
        for item in group.items:
            if isinstance(item, StreamGroup):
                item.expanded = item.broken  # hundreds of events: shut unless verify points there
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
    return sum(len(item.rows) + 1 if not isinstance(item, Row) and item.expanded else 1
               for item in group.items)
