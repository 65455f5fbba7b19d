"""A batch's traces: one trace per task, and the batch itself a span the tasks link to.

``BatchTrace`` (the driver's) opens the ``toolrelay batch`` span for the whole batch; each
task's ``invoke_agent toolrelay`` span is the root of a trace of its own (a batch of ten
thousand tasks is ten thousand readable traces, not one unreadable one), with a link to the
batch span and ``toolrelay.task.id``; a resumed task's span also links to the spans of the
attempt that was interrupted (the ``execute_tool`` spans its transcript names in
``call_span`` records: the transcript is the one thing both attempts share).

Under Ray, ``shipped()`` is what a worker needs to do the same in its own process: the
export settings (the ``OTEL_*`` variables, ``--otel-file``) and the batch span's context,
as plain data; ``ShippedTrace.open()`` in the worker sets the variables, makes its own
providers and shuts them down (flushed) when the worker closes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Link, Span, SpanContext, SpanKind, Status, StatusCode, TraceFlags, Tracer

from ..events import Event
from . import conventions as c
from .metrics import RunMetrics, run_metrics
from .run_spans import RunTracing, tracer_of
from .setup import ExportSettings, meter_provider_for, provider_for

if TYPE_CHECKING:
    from ..relay.catalog import Catalog

__all__ = ["BATCH_SPAN", "BatchTrace", "ShippedTrace", "attempt_links"]

BATCH_SPAN: Final = "toolrelay batch"
TASK_ID: Final = "toolrelay.task.id"
LINK_KIND: Final = "toolrelay.link"
"""On a task's link: ``batch`` (the batch span), ``resumed_from`` (the interrupted attempt)."""
_MOST_LINKS: Final = 32
"""A resumed task links to at most this many spans of its earlier attempts (the last ones)."""
_CALL_SPAN: Final = '"call_span"'
_ESCAPE: Final = "\\u"
"""How a JSON line may spell a character of ``_CALL_SPAN`` other than as itself (as ``\\u0061``:
each is ASCII without a short escape): a line holding neither is no ``call_span`` record."""


class BatchTrace:
    """The spans of one batch process's tasks, under (linked to) one batch span."""

    def __init__(self, tracer: Tracer, *, meter_provider: Any = None, settings: ExportSettings | None = None,
                 batch: Mapping[str, str] | None = None, owned: Sequence[Any] = ()) -> None:
        """``batch``: the batch span's trace context (a worker's: the driver opened it);
        None: ``__enter__`` opens it here. ``owned``: providers shut down at ``__exit__``."""
        self._tracer = tracer
        self._metrics: RunMetrics = run_metrics(meter_provider)
        self._settings = settings
        self._owned = list(owned)
        self._span: Span | None = None
        self._batch = dict(batch) if batch is not None else None

    @classmethod
    def of(cls, provider: Any, settings: ExportSettings | None, *, meter_provider: Any = None,
           service: str = "toolrelay") -> BatchTrace | None:
        """Exporting as ``settings`` say (providers of its own), else with ``provider`` (or the
        global one); None when neither traces."""
        if settings is not None:
            tracers = provider_for(settings.environ, file=settings.file, service=service)
            meters = meter_provider_for(settings.environ, file=settings.file, service=service)
            return cls(tracers.get_tracer("toolrelay"), meter_provider=meters, settings=settings,
                       owned=(tracers, meters))
        tracer = tracer_of(provider)
        return None if tracer is None else cls(tracer, meter_provider=meter_provider)

    def __enter__(self) -> BatchTrace:
        return self

    def open(self, attributes: Mapping[str, Any]) -> None:
        """Open the batch span (the driver's, once)."""
        self._span = self._tracer.start_span(BATCH_SPAN, kind=SpanKind.INTERNAL, attributes=dict(attributes))
        carrier: dict[str, str] = {}
        propagate.inject(carrier, context=trace.set_span_in_context(self._span))
        self._batch = carrier

    def ended(self, attributes: Mapping[str, Any], failed: bool) -> None:
        if self._span is not None:
            self._span.set_attributes(dict(attributes))
            if failed:
                self._span.set_status(Status(StatusCode.ERROR, "some tasks did not complete"))

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._span is not None:
            if error is not None:
                self._span.set_attribute(c.ERROR_TYPE, type(error).__qualname__)
                self._span.set_status(Status(StatusCode.ERROR, "the batch was interrupted"))
            self._span.end()
            self._span = None
        for provider in self._owned:  # the last spans and points flushed
            provider.shutdown()
        self._owned.clear()

    def shipped(self) -> ShippedTrace | None:
        """What a Ray worker needs to export alike (None: this batch traces with a provider
        that cannot travel, so its workers do not trace)."""
        if self._settings is None:
            return None
        return ShippedTrace(self._settings, dict(self._batch or {}))

    def task(self, task_id: str, *, transcript: Path | None, catalog: Catalog, secrets: Iterable[str],
             servers: Iterable[Event] = ()) -> RunTracing:
        """A task's run tracing: its own trace, linked to the batch span and to its last
        attempt's spans (read from ``transcript`` when it resumes one); ``servers``: the
        batch's servers' start-up events (their transport and revision, for the call spans)."""
        links = []
        batch = trace.get_current_span(propagate.extract(self._batch or {})).get_span_context()
        if batch.is_valid:
            links.append(Link(batch, {LINK_KIND: "batch"}))
        if transcript is not None:
            links += attempt_links(transcript)
        tracing = RunTracing(self._tracer, secrets=secrets, catalog=catalog, parent=otel_context.Context(),
                             links=links, attributes={TASK_ID: task_id}, metrics=self._metrics)
        tracing.saw(servers)
        return tracing


@dataclass(frozen=True)
class ShippedTrace:
    """A batch's tracing as data, for a Ray worker."""

    settings: ExportSettings
    batch: dict[str, str] = field(default_factory=dict)

    def open(self) -> BatchTrace:
        """The worker's ``BatchTrace``: the variables set in this process (the exporters read
        them), providers of its own."""
        import os

        os.environ.update(self.settings.environ)
        tracers = provider_for(self.settings.environ, file=self.settings.file, service="toolrelay")
        meters = meter_provider_for(self.settings.environ, file=self.settings.file, service="toolrelay")
        return BatchTrace(tracers.get_tracer("toolrelay"), meter_provider=meters, settings=self.settings,
                          batch=self.batch, owned=(tracers, meters))


def attempt_links(transcript: Path) -> list[Link]:
    """Links to the spans an earlier attempt's transcript names (``call_span`` records)."""
    links: list[Link] = []
    for record in _call_spans(transcript):
        try:
            context = SpanContext(int(record["trace_id"], 16), int(record["span_id"], 16), is_remote=True,
                                  trace_flags=TraceFlags(TraceFlags.SAMPLED))
        except (KeyError, TypeError, ValueError):
            continue
        links.append(Link(context, {LINK_KIND: "resumed_from"}))
    return links[-_MOST_LINKS:]


def _call_spans(path: Path) -> Iterator[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return
    for line in lines:
        if _CALL_SPAN not in line and _ESCAPE not in line:
            continue  # no call_span record: its kind is spelled so, or with an escape
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # a bad line, or one nested deeper than Python recurses
            continue
        if isinstance(record, dict) and record.get("kind") == "call_span":
            yield record
