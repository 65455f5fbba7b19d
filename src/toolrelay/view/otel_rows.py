"""The row of a traced call's span (``call_span``: the OpenTelemetry trace and span ids of
its ``execute_tool`` span), drawn inside its call, so a page ties each call to the trace a
viewer (Jaeger, Tempo, Phoenix...) shows: search it for the trace id."""

from __future__ import annotations

from typing import Any

from ..events import CallSpan
from .model import Badge, Row

__all__ = ["OTEL_DESCRIBERS"]


def _call_span(record: dict[str, Any]) -> Row:
    trace_id, span_id = str(record.get("trace_id") or "?"), str(record.get("span_id") or "?")
    call_id = record.get("call_id")
    badges = [Badge(kind="call", text=str(call_id))] if call_id else []
    return Row(seq=int(record.get("seq", 0)), kind=CallSpan.kind, stage="trace", source="app", target="app",
               label=f"span {span_id} · trace {trace_id[:8]}…",
               detail=f"OpenTelemetry execute_tool {record.get('alias')}: trace {trace_id}, span {span_id}",
               badges=badges, call_id=call_id if isinstance(call_id, str) else None)


OTEL_DESCRIBERS = {CallSpan.kind: _call_span}
