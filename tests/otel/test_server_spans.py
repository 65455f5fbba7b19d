"""The file server's SERVER spans (``TracedService``), read from the in-memory exporter:
parented on the ``traceparent`` of the request's ``params._meta``, a root span without one,
and ERROR with the conventions' ``error.type`` for a tool error and an unknown tool."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from toolrelay.errors import UnknownTool
from toolrelay.files import FileService, root_from_argument
from toolrelay.otel.server_spans import TracedService
from toolrelay.protocol.jsonrpc import Request
from toolrelay.server.app import CallContext

PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def served(folder: Path, name: str, arguments: dict[str, Any], meta: dict[str, Any]) -> ReadableSpan:
    (folder / "notes.txt").write_text("line 1\n", encoding="utf-8")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    service = TracedService(FileService([root_from_argument(str(folder))]), provider.get_tracer("t"),
                            transport="stdio")
    params = {"name": name, "arguments": arguments, "_meta": meta}
    request = Request(id=7, method="tools/call", params=params, raw={})
    context = CallContext([folder.as_uri()], request=request, protocol_version="2025-11-25")
    try:
        result = service.call(name, arguments, context)
        if not isinstance(result, dict):
            asyncio.run(_wait(result))
    except UnknownTool:
        pass
    [span] = exporter.get_finished_spans()
    return span


async def _wait(result: Any) -> None:
    await result


def test_a_served_call_is_a_server_span_under_the_callers_span(tmp_path: Path) -> None:
    span = served(tmp_path, "read_text_file", {"path": str(tmp_path / "notes.txt")}, {"traceparent": PARENT})
    assert (span.name, span.kind, span.status.status_code) == ("tools/call read_text_file", SpanKind.SERVER,
                                                               StatusCode.UNSET)
    assert span.parent is not None and (f"{span.parent.trace_id:032x}", f"{span.parent.span_id:016x}") == (
        "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
    assert {k: span.attributes[k] for k in ("mcp.method.name", "jsonrpc.request.id", "gen_ai.tool.name",
                                            "mcp.protocol.version", "network.transport")} == {
        "mcp.method.name": "tools/call", "jsonrpc.request.id": "7", "gen_ai.tool.name": "read_text_file",
        "mcp.protocol.version": "2025-11-25", "network.transport": "pipe"}


@pytest.mark.parametrize(("name", "arguments", "error_type"), [
    ("read_text_file", {"path": "missing.txt"}, "tool_error"),
    ("no_such_tool", {}, "-32602"),
])
def test_a_failed_call_is_an_error_span(name: str, arguments: dict[str, Any], error_type: str,
                                        tmp_path: Path) -> None:
    span = served(tmp_path, name, arguments, {})
    assert span.parent is None  # no traceparent: a root span
    assert (span.status.status_code, span.attributes["error.type"]) == (StatusCode.ERROR, error_type)
