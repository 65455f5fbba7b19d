"""The era probe in a trace: with ``--protocol-version auto`` and a probe that waits no
time, the handshake goes out beside ``server/discover``; the file server (2026-07-28)
answers the probe and refuses the late ``initialize``, as expected. That ``initialize``
span says so (``toolrelay.fallback``, the refusal's code) and is no error, as ``--wire``
and ``view`` never show a healthy negotiation as a failure; a real refusal stays ERROR
(tests/otel/test_offer_spans.py)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from toolrelay.client import era_probe
from toolrelay.client.config import ServerConfig
from toolrelay.client.wire_events import fallback_refused
from toolrelay.runner import RunOptions, run_async


def test_the_fallback_initialize_refused_by_a_modern_server_is_named_and_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(era_probe, "PROBE_WAIT", 0.0)  # the handshake always goes out beside the probe
    (tmp_path / "script.json").write_text(json.dumps({"turns": [{"message": "done"}]}), encoding="utf-8")
    server = ServerConfig(name="fs", transport="stdio", command=sys.executable,
                          args=("-m", "toolrelay", "files", str(tmp_path)))
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    options = RunOptions(model="offline", script=tmp_path / "script.json", config=[server],
                         protocol_version="auto", tracer_provider=provider, transcript=tmp_path / "run.jsonl")
    assert asyncio.run(run_async("hello", options)).completed
    provider.shutdown()
    records = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    [refused] = [r for r in records if r["kind"] == "mcp_response" and r.get("method") == "initialize"]
    assert refused["message"]["error"]["code"] == -32022  # the transcript: refused, as expected
    spans = list(exporter.get_finished_spans())
    [initialize] = [s for s in spans if s.name == "initialize"]
    [discover] = [s for s in spans if s.name == "server/discover"]
    assert initialize.kind == discover.kind == SpanKind.CLIENT
    assert initialize.status.status_code == StatusCode.UNSET and "error.type" not in initialize.attributes
    assert initialize.attributes["toolrelay.fallback"] == fallback_refused("2026-07-28")
    assert initialize.attributes["rpc.response.status_code"] == "-32022"
    assert initialize.attributes["jsonrpc.request.id"] == str(refused["mcp_id"])
    assert discover.status.status_code == StatusCode.UNSET and "toolrelay.fallback" not in discover.attributes
