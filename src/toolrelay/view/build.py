"""A run's recorded events (and verify's verdict) → the ``Trace`` the page draws.

One pass describes every event as a row; verify's failed findings are attached to the
rows of the seqs they name; rows are arranged into the setup, the turns and the call
frames; and each event's exact recorded body is kept, as compact JSON text, for the side
panel (the page indents it when shown: encoding 200,000 bodies with indentation here
cost more than everything else together).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ..events import (
    MCP_ROLES,
    CallOutcomeEvent,
    FeedbackEvent,
    ModelRequestEvent,
    ModelResponseEvent,
    ModelStreamEvent,
    RunEndEvent,
    RunStartEvent,
    ServerReady,
)
from ..gc_pause import paused_gc
from ..relay.stages.cost import cost_text
from ..relay.stages.direct_call import DirectCall
from ..relay.stages.usage import usage_text
from ..verify import Finding, Verdict
from .direct_call_rows import direct_call_summary
from .era_rows import mark_fallbacks
from .layout import arrange, plan_expansion
from .model import Lane, LinkNote, Row, RunSummary, Trace, VerdictNote
from .rows import clip, compact, describe, seconds, server_lane, whole
from .task_rows import compact_tasks

__all__ = ["body_of", "build_trace"]

_ENVELOPE: Final = ("seq", "time", "run", "kind")
_BODY_FIELDS: Final = {
    ModelRequestEvent.kind: "body",
    ModelResponseEvent.kind: "body",
    FeedbackEvent.kind: "item",
    CallOutcomeEvent.kind: "outcome",
    "proxy_host": "message",
}
"""Event kind → the field holding the message it records."""


def build_trace(
    events: Sequence[dict[str, Any]], verdict: Verdict | None = None, *, source: str = ""
) -> Trace:
    """The diagram of ``events`` (a transcript's lines, in order)."""
    with paused_gc():  # a row or more for each event: see paused_gc
        return _build(events, verdict, source)


def _build(events: Sequence[dict[str, Any]], verdict: Verdict | None, source: str) -> Trace:
    origin = (seconds(events[0].get("time")) or 0.0) if events else 0.0
    rows = [describe(event, origin) for event in events]
    mark_fallbacks(rows, events)
    if verdict is not None:
        _attach_findings(rows, [*verdict.broken_findings(), *verdict.inconsistencies()])
    groups = arrange(compact_tasks(rows, events))  # a task's repeated polls: one row each status
    plan_expansion(groups)
    kinds = {row.kind for row in rows}  # the kinds recorded (a row's is its event's, as text)
    run = _summary(events, rows, kinds, source)
    records: dict[int, str] = {}
    record_keys: dict[int, str] = {}
    for event in events:  # one pass for both (a duplicated seq: the last one's, in either)
        seq = int(event.get("seq", 0))
        records[seq], record_keys[seq] = _record_text(event), _record_key(event)
    return Trace(
        title=f"toolrelay trace · {clip(run.task, 60) or run.run_id or source}",
        run=run,
        lanes=_lanes(events, kinds),
        groups=groups,
        records=records,
        record_keys=record_keys,
        verdict=_verdict_note(verdict) if verdict is not None else None,
    )


def body_of(event: dict[str, Any]) -> Any:
    """What the side panel shows for an event: the exact message body when it is a message
    (model request/response body, JSON-RPC message, function_call_output item, outcome),
    otherwise the event's own fields."""
    if event.get("kind") in MCP_ROLES:
        return event.get("message")
    field_name = _BODY_FIELDS.get(str(event.get("kind")))
    if field_name is not None:
        return event.get(field_name)
    return {key: value for key, value in event.items() if key not in _ENVELOPE}


def _record_text(event: dict[str, Any]) -> str:
    """What the side panel indents: a stream event's data is JSON text already, exactly as
    it was received; anything else is encoded."""
    if event.get("kind") == ModelStreamEvent.kind and isinstance(event.get("data"), str):
        return str(event["data"])
    return compact(body_of(event))


def _record_key(event: dict[str, Any]) -> str:
    """What the page shares a record's text with: the record before it of the same kind
    (of the same server and method for a JSON-RPC message, whose kind says its direction;
    of the same type for a stream event), whose text is most like it."""
    kind = str(event.get("kind"))
    if kind in MCP_ROLES:
        return f"{kind}|{event.get('server')}|{event.get('method')}"
    if kind == ModelStreamEvent.kind:
        return f"{kind}|{event.get('event')}"
    return kind


def _lanes(events: Sequence[dict[str, Any]], kinds: set[str]) -> list[Lane]:
    """User · App · Model · one lane per MCP server (in order of first appearance)."""
    start = next((e for e in events if e.get("kind") == RunStartEvent.kind), {})
    lanes = [
        Lane(key="user", title="User", note="task and answer"),
        Lane(key="app", title="App", note="toolrelay · MCP client"),
    ]
    direct = DirectCall.kind in kinds
    if "proxy_start" in kinds:  # toolrelay proxy: a host, no user
        lanes[:2] = [Lane(key="user", title="Host", note="the MCP host"),
                     Lane(key="app", title="Proxy", note="toolrelay proxy")]
    if direct:  # toolrelay call: the command and its outcome, no model
        lanes[0] = Lane(key="user", title="User", note="toolrelay call")
    else:
        lanes.append(Lane(key="model", title="Model", note=str(start.get("model") or "Responses API")))
    notes: dict[str, str] = {}
    for event in events:
        server = event.get("server")
        if isinstance(server, str) and server not in notes:
            notes[server] = "MCP server"
        if event.get("kind") == ServerReady.kind and isinstance(server, str):
            info = event["server_info"] if isinstance(event.get("server_info"), dict) else {}
            notes[server] = f"{info.get('name', 'MCP server')} {info.get('version', '')}".strip()
    lanes.extend(Lane(key=server_lane(name), title=name, note=note) for name, note in notes.items())
    return lanes


def _summary(events: Sequence[dict[str, Any]], rows: list[Row], kinds: set[str], source: str) -> RunSummary:
    start = next((e for e in events if e.get("kind") == RunStartEvent.kind), {})
    end: dict[str, Any] = next((e for e in reversed(events) if e.get("kind") == RunEndEvent.kind), {})
    outcomes = [e.get("outcome") for e in events if e.get("kind") == CallOutcomeEvent.kind]
    times = [t for t in map(seconds, [e.get("time") for e in events]) if t is not None]
    direct = direct_call_summary(events) if DirectCall.kind in kinds else None  # None without one
    if direct is not None:
        start = {**start, "task": direct[0]}
        end = {**end, "status": direct[1], "reason": direct[2]}
    return RunSummary(
        source=source,
        run_id=str(start.get("run_id") or (events[0].get("run") if events else "") or ""),
        model=str(start.get("model") or ""),
        endpoint=str(start.get("endpoint") or ""),
        task=str(start.get("task") or ""),
        status=str(end.get("status") or "unfinished"),
        reason=str(end.get("reason") or "the transcript has no run_end event"),
        turns=whole(end.get("turns"), 0) or sum(1 for e in events if e.get("kind") == ModelRequestEvent.kind
                                                and whole(e.get("attempt"), 1) == 1),
        calls=len(outcomes),
        failed_calls=sum(1 for o in outcomes if not (isinstance(o, dict) and o.get("status") == "ok")),
        events=len(events),
        messages=sum(1 for row in rows if row.message and row.kind != ModelStreamEvent.kind),
        stream_events=sum(1 for row in rows if row.kind == ModelStreamEvent.kind),
        duration=(max(times) - min(times)) if times else 0.0,
        tokens=usage_text(end.get("usage")),
        cost=cost_text(end.get("cost")),
    )


def _attach_findings(rows: list[Row], findings: list[Finding]) -> None:
    """Each failed finding, and each endpoint inconsistency, on the rows of the events it names
    (by call_id when it names none)."""
    by_seq = {row.seq: row for row in rows}
    for finding in findings:
        note = LinkNote(link=finding.link, message=finding.message, ok=finding.ok)
        targets = [by_seq[seq] for seq in finding.seqs if seq in by_seq]
        if not targets and finding.call_id is not None:
            targets = [row for row in rows if row.call_id == finding.call_id][:1]
        for row in targets:
            row.links.append(note)


def _verdict_note(verdict: Verdict) -> VerdictNote:
    broken = verdict.broken
    return VerdictNote(
        ok=verdict.ok,
        checked=len(verdict.findings),
        broken_link=broken.link if broken else None,
        broken_message=broken.message if broken else None,
        broken_seqs=list(broken.seqs) if broken else [],
        failures=[LinkNote(link=f.link, message=f.message, ok=False) for f in verdict.broken_findings()],
        finished=verdict.finished,
        unfinished=list(verdict.unfinished),
    )
