"""``--otel`` and ``--otel-file PATH`` (run, call, demo, files), and the tracer provider
they and the standard ``OTEL_*`` environment ask for (``otel/setup.py``; docs/traces.md).

Nothing of OpenTelemetry is imported unless tracing is on: start-up stays as it was.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from typing import TYPE_CHECKING, Any

from ..otel.setup import otel_wanted

if TYPE_CHECKING:  # `toolrelay files` imports this module: it stays light
    from ..events import EventStream
    from ..otel.setup import ExportSettings
    from ..relay.catalog import Catalog
    from ..relay.stages.context import CallHook

__all__ = ["add_otel_options", "batch_export", "call_tracing", "tracer_provider"]


def add_otel_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--otel", action="store_true",
                        help="export OpenTelemetry traces over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT, "
                             "default http://localhost:4318; needs the otel extra)")
    parser.add_argument("--otel-file", metavar="PATH",
                        help="also write the traces to PATH as OTLP JSON lines (for verify --otel)")


def tracer_provider(args: argparse.Namespace, service: str = "toolrelay") -> Any:
    """The command's ``TracerProvider``, or None when tracing is off (nothing imported)."""
    if not otel_wanted(os.environ, asked=args.otel, file=args.otel_file):
        return None
    from ..otel.setup import provider_for

    provider = provider_for(os.environ, file=args.otel_file, service=service)
    _set_meter_provider(service, args.otel_file)
    return provider


def _set_meter_provider(service: str, file: str | None) -> None:
    """The process's metrics go where its traces go (``otel/metrics.py`` reads the global
    meter provider)."""
    from opentelemetry import metrics

    from ..otel.setup import meter_provider_for

    metrics.set_meter_provider(meter_provider_for(os.environ, file=file, service=service))


def call_tracing(
    args: argparse.Namespace, events: EventStream, stack: contextlib.AsyncExitStack, catalog: Catalog
) -> list[CallHook]:
    """The hooks of a direct call (``toolrelay call``): its ``execute_tool`` span when tracing
    is on, the root of its trace; none otherwise."""
    provider = tracer_provider(args)
    if provider is None:
        return []
    from .._version import __version__
    from ..otel.run_spans import RunTracing

    tracer = provider.get_tracer("toolrelay", __version__)
    tracing = RunTracing(tracer, secrets=catalog.secrets, catalog=catalog, agent=False)
    return [stack.enter_context(tracing.listen(events))]


def batch_export(args: argparse.Namespace) -> ExportSettings | None:
    """``batch --otel``: the export settings every process of the batch uses (the ``OTEL_*``
    environment and ``--otel-file``), or None when tracing is off."""
    if not otel_wanted(os.environ, asked=args.otel, file=args.otel_file):
        return None
    import importlib.util

    from ..otel.setup import EXTRA_HINT, ExportSettings

    try:  # the parent package is imported to look for the SDK: it may be missing too
        found = importlib.util.find_spec("opentelemetry.sdk") is not None
    except ImportError:
        found = False
    if not found:
        from ..errors import UsageError

        raise UsageError(f"tracing (--otel, OTEL_* variables) needs the otel extra: {EXTRA_HINT}")
    return ExportSettings.from_environment(os.environ, args.otel_file)
