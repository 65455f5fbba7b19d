"""The tracer provider a command exports with, set up as every OpenTelemetry user expects:
``--otel`` or the standard environment turns it on, ``OTEL_SDK_DISABLED=true`` off.

- ``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (and the
  exporter's other ``OTEL_EXPORTER_OTLP_*`` settings, read by the exporter itself): where
  spans go, over OTLP/HTTP with protobuf (the default ``http://localhost:4318``);
- ``OTEL_TRACES_EXPORTER``: ``otlp`` (default), ``console`` (stderr: stdout is the
  command's), ``none``, or several, comma-separated;
- ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``: the resource (the service is
  ``toolrelay``, or ``toolrelay-files`` for the file server, unless they say otherwise);
- ``OTEL_METRICS_EXPORTER``: the same for the metrics (``otel/metrics.py``; default: what
  the traces use), exported every ``OTEL_METRIC_EXPORT_INTERVAL`` ms and at exit;
- ``--otel-file PATH``: every span also written to PATH as OTLP JSON, one export a line
  (the collector's file exporter's format; ``verify --otel`` reads it), and the metrics.

The providers are shut down (their last spans and points flushed) when the process exits.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..errors import UsageError

if TYPE_CHECKING:  # the extra may be missing: it is imported when a provider is made
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import MetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

__all__ = ["EXTRA_HINT", "ExportSettings", "meter_provider_for", "otel_wanted", "provider_for"]

EXTRA_HINT: Final = "pip install 'toolrelay[otel]'"
_ENDPOINTS: Final = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
_EXPORTERS: Final = ("otlp", "console", "none")
_PROTOCOLS: Final = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")


def otel_wanted(environ: Mapping[str, str], *, asked: bool, file: str | None) -> bool:
    """Whether the command traces: asked for (``--otel``, ``--otel-file``) or configured by
    the environment, and not disabled by it. Reads no OpenTelemetry module."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    configured = any(environ.get(name) for name in _ENDPOINTS) or bool(environ.get("OTEL_TRACES_EXPORTER"))
    return asked or file is not None or configured


def provider_for(environ: Mapping[str, str], *, file: str | None, service: str) -> TracerProvider:
    """A ``TracerProvider`` exporting as ``environ`` says (and to ``file``); a usage error
    for what it cannot do (an unknown exporter, OTLP over gRPC, the extra missing)."""
    exporters = _exporters(environ, file)
    try:
        from opentelemetry.sdk.trace import TracerProvider as SdkProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    except ImportError:
        raise UsageError(f"tracing (--otel, OTEL_* variables) needs the otel extra: {EXTRA_HINT}") from None
    provider = SdkProvider(resource=_resource(service))
    if "otlp" in exporters:
        provider.add_span_processor(BatchSpanProcessor(_otlp_exporter()))
    if "console" in exporters:
        import sys

        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stderr)))
    if file is not None:
        from .json_file import OtlpJsonFile

        provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFile(Path(file))))
    return provider


def _resource(service: str) -> Resource:
    from opentelemetry.sdk.resources import Resource

    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": service}))
    return resource


def meter_provider_for(environ: Mapping[str, str], *, file: str | None, service: str) -> MeterProvider:
    """A ``MeterProvider`` exporting as ``environ`` says (``OTEL_METRICS_EXPORTER``, else as
    the traces go), and to ``file``; call after ``provider_for`` (which checked the extra).
    With nowhere to export (``OTEL_METRICS_EXPORTER=none``, no file) a no-op one: the SDK's
    with no reader would still clean and hash every point's attributes for nothing."""
    from opentelemetry.sdk.metrics import MeterProvider as SdkMeterProvider

    named = "OTEL_METRICS_EXPORTER" if environ.get("OTEL_METRICS_EXPORTER") else "OTEL_TRACES_EXPORTER"
    exporters = _exporters(environ, file, variable=named)
    readers: list[MetricReader] = []
    if "otlp" in exporters:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        readers.append(_periodic(OTLPMetricExporter()))  # OTEL_EXPORTER_OTLP_(METRICS_)ENDPOINT...
    if "console" in exporters:
        import sys

        from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

        readers.append(_periodic(ConsoleMetricExporter(out=sys.stderr)))
    if file is not None:
        from .json_file import OtlpJsonMetricFile

        readers.append(_periodic(OtlpJsonMetricFile(Path(file))))
    if not readers:
        return _no_metrics()
    return SdkMeterProvider(metric_readers=readers, resource=_resource(service))


def _no_metrics() -> MeterProvider:
    from opentelemetry.metrics import NoOpMeterProvider  # here: the extra may be missing

    class NoMetrics(NoOpMeterProvider):
        """Records nothing; shut down like the SDK's (a batch shuts down what it made)."""

        def shutdown(self, timeout_millis: float = 30_000) -> None:
            return None

        def force_flush(self, timeout_millis: float = 10_000) -> bool:
            return True

    return NoMetrics()


def _periodic(exporter: Any) -> MetricReader:
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    return PeriodicExportingMetricReader(exporter)  # OTEL_METRIC_EXPORT_INTERVAL; flushed at shutdown


def _exporters(environ: Mapping[str, str], file: str | None,
               variable: str = "OTEL_TRACES_EXPORTER") -> set[str]:
    """The exporters ``variable`` names (``otlp`` when it names none, unless only a file
    was asked for), checked."""
    named = environ.get(variable, "")
    exporters = {name.strip().lower() for name in named.split(",") if name.strip()}
    unknown = sorted(exporters - set(_EXPORTERS))
    if unknown:
        raise UsageError(f"{variable}: toolrelay has no exporter {unknown[0]!r} "
                         f"(it has {', '.join(_EXPORTERS)})")
    if not exporters:
        endpoint = any(environ.get(name) for name in _ENDPOINTS)
        exporters = {"none"} if file is not None and not endpoint else {"otlp"}
    if "otlp" in exporters:
        for name in _PROTOCOLS:
            protocol = environ.get(name)
            if protocol and protocol.strip() != "http/protobuf":
                raise UsageError(f"{name}={protocol}: toolrelay exports OTLP over HTTP only (http/protobuf)")
    return exporters - {"none"}


def _otlp_exporter() -> SpanExporter:
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError:
        raise UsageError(f"OTLP export needs the otel extra: {EXTRA_HINT}") from None
    return OTLPSpanExporter()  # it reads the endpoint, headers, timeout... from OTEL_EXPORTER_OTLP_*


@dataclass(frozen=True)
class ExportSettings:
    """How a process exports, as data (``toolrelay batch --otel``): the ``OTEL_*``
    variables and ``--otel-file``, handed to every process of a batch (its Ray workers set
    them before they make their providers), so they all export alike."""

    environ: Mapping[str, str] = field(default_factory=dict)
    """The ``OTEL_*`` variables (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_SERVICE_NAME``...)."""
    file: str | None = None
    """``--otel-file``: an absolute path (every process appends to the same file)."""

    @classmethod
    def from_environment(cls, environ: Mapping[str, str], file: str | None = None) -> ExportSettings:
        """The ``OTEL_*`` variables of ``environ``, and ``file`` made absolute."""
        return cls({k: v for k, v in environ.items() if k.startswith("OTEL_")},
                   None if file is None else os.path.abspath(file))
