"""``--otel-file PATH``: spans written as OTLP JSON, one ``ExportTraceServiceRequest`` a
line, as the OpenTelemetry Collector's file exporter writes them (trace and span ids in
hex, enums as numbers, 64-bit integers as strings), so the same readers take both; the
metrics likewise, one ``ExportMetricsServiceRequest`` (``resourceMetrics``) a line.

Each line is one ``write`` on a file opened for appending, so the processes of a batch
(its Ray workers) can share one file: their lines never interleave.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

__all__ = ["OtlpJsonFile", "OtlpJsonMetricFile"]

_IDS = ("traceId", "spanId", "parentSpanId")


class _Lines:
    """An append-only file of JSON lines (created 0600), each written in one ``write``."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def append(self, message: Message) -> bool:
        found = MessageToDict(message, use_integers_for_enums=True)
        line = json.dumps(_hex_ids(found), separators=(",", ":"), ensure_ascii=False) + "\n"
        with self._lock:
            if self._fd is None:
                return False
            os.write(self._fd, line.encode("utf-8"))
        return True

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


class OtlpJsonFile(SpanExporter):
    """Appends each export of spans to ``path`` as one JSON line."""

    def __init__(self, path: Path) -> None:
        self._lines = _Lines(path)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        done = self._lines.append(encode_spans(spans))
        return SpanExportResult.SUCCESS if done else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        self._lines.close()


class OtlpJsonMetricFile(MetricExporter):
    """Appends each export of metrics to ``path`` as one JSON line."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self._lines = _Lines(path)

    def export(self, metrics_data: MetricsData, timeout_millis: float = 10_000,
               **kwargs: Any) -> MetricExportResult:
        if not metrics_data.resource_metrics:
            return MetricExportResult.SUCCESS
        done = self._lines.append(encode_metrics(metrics_data))
        return MetricExportResult.SUCCESS if done else MetricExportResult.FAILURE

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self._lines.close()


def _hex_ids(value: Any) -> Any:
    """Protobuf's JSON writes bytes in base64; OTLP JSON writes trace and span ids in hex."""
    if isinstance(value, list):
        return [_hex_ids(item) for item in value]
    if not isinstance(value, dict):
        return value
    return {key: base64.b64decode(item).hex() if key in _IDS and isinstance(item, str) else _hex_ids(item)
            for key, item in value.items()}
