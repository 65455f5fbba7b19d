"""``verify --otel FILE``: a run's OpenTelemetry trace (OTLP JSON lines, as ``--otel-file``
or the collector's file exporter write it) as a second witness of its transcript.

The run's trace is the one whose ``invoke_agent`` span carries the transcript's run id.
Every recorded call must have exactly one ``execute_tool`` span there with the same
``call_id`` (``gen_ai.tool.call.id``), the same MCP id (``jsonrpc.request.id``), the span
id the transcript named (``call_span``), and a status that says what the outcome says
(ERROR for every failed call, never for one that succeeded); no span may claim a call the
transcript does not have. Reads JSON only: the ``otel`` extra is not needed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from ..errors import UsageError
from .record import CallTrace, RunRecord
from .verdict import Finding, Verdict

__all__ = ["check_trace", "read_spans", "with_trace"]

_LINK: Final = "correlation"
_CHECK: Final = "otel_span"
_ERROR: Final = 2
"""OTLP's ``STATUS_CODE_ERROR``."""
_INTERNAL: Final = 1
"""``SPAN_KIND_INTERNAL``: toolrelay's own ``execute_tool`` span (a server's is SERVER)."""


def read_spans(path: str | Path) -> list[dict[str, Any]]:
    """Every span of an OTLP JSON lines file; a usage error naming the line that is not one."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--otel {source}: cannot read it ({exc.__class__.__name__.lower()})") from None
    spans: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            spans.extend(_spans_of(json.loads(line)))
        except (ValueError, TypeError, KeyError, AttributeError):
            raise UsageError(f"--otel {source}: line {number} is not OTLP JSON (resourceSpans)") from None
    return spans


def _spans_of(export: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if "resourceMetrics" in export and "resourceSpans" not in export:
        return  # a line of metrics (--otel-file writes both, as the collector's file exporter can)
    for resource in export["resourceSpans"]:
        for scope in resource.get("scopeSpans", []):
            yield from scope.get("spans", [])


def attributes(span: dict[str, Any]) -> dict[str, Any]:
    """A span's attributes as plain values (OTLP JSON wraps each in its type)."""
    found: dict[str, Any] = {}
    for attribute in span.get("attributes", []):
        value = attribute.get("value") or {}
        found[attribute.get("key")] = next(iter(value.values()), None)
    return found


def check_trace(run: RunRecord, spans: list[dict[str, Any]], source: str) -> list[Finding]:
    """The findings of the trace in ``spans`` against ``run``'s transcript."""
    runs = [s for s in spans if attributes(s).get("toolrelay.run.id") == run.run_id]
    if not runs:
        return [_broken(f"{source} holds no trace of run {run.run_id} (no invoke_agent span with "
                        "toolrelay.run.id equal to the transcript's run id)")]
    traces = {s.get("traceId") for s in runs}
    calls = [s for s in spans if s.get("traceId") in traces and s.get("kind") == _INTERNAL
             and attributes(s).get("gen_ai.operation.name") == "execute_tool"]
    by_call: dict[Any, list[dict[str, Any]]] = {}
    for span in calls:
        by_call.setdefault(attributes(span).get("gen_ai.tool.call.id"), []).append(span)
    named = {e.get("call_id"): e.get("span_id") for e in run.of_kind("call_span")}
    recorded = [call for call in run.calls if call.outcome is not None]
    findings = [_call_finding(call, by_call.get(call.call_id, []), named.get(call.call_id))
                for call in recorded]
    known = {call.call_id for call in recorded}
    findings += [_broken(f"an execute_tool span ({s.get('spanId')}) claims call_id {call_id}, which the "
                         "transcript does not have", call_id=str(call_id))
                 for call_id, claimed in by_call.items() if call_id not in known for s in claimed]
    return findings


def _call_finding(call: CallTrace, spans: list[dict[str, Any]], named: Any) -> Finding:
    outcome = call.outcome or {}
    mcp_id, status = outcome.get("mcp_id"), outcome.get("status")
    ids: dict[str, Any] = {"call_id": call.call_id, "mcp_id": mcp_id, "server": outcome.get("server")}
    if len(spans) != 1:
        said = "no execute_tool span" if not spans else f"{len(spans)} execute_tool spans"
        return _broken(f"call {call.call_id} has {said} in the run's trace", **ids)
    span = spans[0]
    found = attributes(span)
    claimed = found.get("jsonrpc.request.id")
    if claimed != (None if mcp_id is None else str(mcp_id)):
        return _broken(f"call {call.call_id}: its span says MCP id {claimed}, the transcript {mcp_id}", **ids)
    if named is not None and named != span.get("spanId"):
        return _broken(f"call {call.call_id}: the transcript names span {named}, the trace's is "
                       f"{span.get('spanId')}", **ids)
    failed = (span.get("status") or {}).get("code") == _ERROR
    if failed != (status != "ok"):
        said = "ERROR" if failed else "not ERROR"
        return _broken(f"call {call.call_id} ended {status} but its span's status is {said}", **ids)
    said = f"ERROR ({found.get('error.type')})" if failed else "not ERROR"
    return Finding(link=_LINK, ok=True, check=_CHECK, message=(
        f"call {call.call_id}: its execute_tool span {span.get('spanId')} has the same call_id and MCP id, "
        f"status {said} as it ended {status}"), **ids)


def _broken(message: str, **ids: Any) -> Finding:
    return Finding(link=_LINK, ok=False, check=_CHECK, message=message, **ids)


def with_trace(verdict: Verdict, findings: list[Finding]) -> Verdict:
    """``verdict`` with the trace's findings (its own first broken link stays the first)."""
    broken = verdict.broken or next((f for f in findings if not f.ok), None)
    return replace(verdict, findings=[*verdict.findings, *findings], broken=broken)
