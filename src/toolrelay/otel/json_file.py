"""``--otel-file PATH``: spans written as OTLP JSON, one ``ExportTraceServiceRequest`` a
line, as the OpenTelemetry Collector's file exporter writes them (trace and span ids in
hex, enums as numbers, 64-bit integers as strings), so the same readers take both.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

__all__ = ["OtlpJsonFile"]

_IDS = ("traceId", "spanId", "parentSpanId")


class OtlpJsonFile(SpanExporter):
    """Appends each export to ``path`` as one JSON line (the file is created, 0600)."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        path.touch(mode=0o600, exist_ok=True)
        self._file = path.open("a", encoding="utf-8")

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        message = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
        line = json.dumps(_hex_ids(message), separators=(",", ":"), ensure_ascii=False) + "\n"
        with self._lock:
            if self._file.closed:
                return SpanExportResult.FAILURE
            self._file.write(line)
            self._file.flush()
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        with self._lock:
            self._file.close()


def _hex_ids(value: Any) -> Any:
    """Protobuf's JSON writes bytes in base64; OTLP JSON writes trace and span ids in hex."""
    if isinstance(value, list):
        return [_hex_ids(item) for item in value]
    if not isinstance(value, dict):
        return value
    return {key: base64.b64decode(item).hex() if key in _IDS and isinstance(item, str) else _hex_ids(item)
            for key, item in value.items()}
