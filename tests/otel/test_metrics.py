"""A traced run's metrics by the GenAI / MCP conventions, read with the SDK's in-memory
metric reader: ``gen_ai.client.operation.duration`` and ``gen_ai.client.token.usage`` per
model turn, ``mcp.client.operation.duration`` per call (a failed one with its
``error.type``), and the file server's ``mcp.server.operation.duration``; no id of a call
or a request on a data point (each would be a series of its own)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider

import toolrelay
from toolrelay.client.config import builtin_file_server
from toolrelay.files import FileService, root_from_argument
from toolrelay.otel.metrics import DURATION_BUCKETS, ServerMetrics
from toolrelay.otel.server_spans import TracedService
from toolrelay.protocol.jsonrpc import Request
from toolrelay.server.app import CallContext

TWO_CALLS = {"turns": [
    {"calls": [{"name": "fs__read_text_file", "arguments": {"path": "notes.txt"}},
               {"name": "fs__read_text_file", "arguments": {"path": "missing.txt"}}]},
    {"message": "done"},
]}
Points = dict[str, list[HistogramDataPoint]]


def points_of(reader: InMemoryMetricReader) -> Points:
    data = reader.get_metrics_data()
    found: Points = {}
    for resource in data.resource_metrics if data is not None else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                found.setdefault(metric.name, []).extend(metric.data.data_points)  # type: ignore[arg-type]
    return found


@pytest.fixture(scope="module")
def run_points(tmp_path_factory: pytest.TempPathFactory) -> tuple[toolrelay.RunResult, Points]:
    folder = tmp_path_factory.mktemp("metrics")
    (folder / "notes.txt").write_text("line 1\n", encoding="utf-8")
    (folder / "script.json").write_text(json.dumps(TWO_CALLS), encoding="utf-8")
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    options = toolrelay.RunOptions(model="offline", script=folder / "script.json", meter_provider=meters,
                                   tracer_provider=TracerProvider(), config=[builtin_file_server(folder)])
    result = asyncio.run(toolrelay.run_async("read notes.txt", options))
    points = points_of(reader)
    meters.shutdown()
    return result, points


def test_each_model_turn_has_its_duration_and_tokens(run_points: tuple[toolrelay.RunResult, Points]) -> None:
    result, points = run_points
    [turns] = points["gen_ai.client.operation.duration"]  # both turns: the same attributes
    assert turns.count == 2 and 0 < turns.sum < 30 and tuple(turns.explicit_bounds) == DURATION_BUCKETS
    assert {k: turns.attributes[k] for k in ("gen_ai.operation.name", "gen_ai.provider.name",
                                             "gen_ai.request.model", "server.address")} == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "offline",
        "server.address": "127.0.0.1"}
    tokens = {point.attributes["gen_ai.token.type"]: point for point in points["gen_ai.client.token.usage"]}
    assert sorted(tokens) == ["input", "output"]
    assert (tokens["input"].sum, tokens["output"].sum) == (result.usage["input_tokens"],
                                                           result.usage["output_tokens"])
    assert tokens["input"].count == 2 and "error.type" not in tokens["input"].attributes


def test_each_call_is_an_mcp_request_duration_a_failed_one_with_its_error_type(
    run_points: tuple[toolrelay.RunResult, Points],
) -> None:
    _, points = run_points
    requests = points["mcp.client.operation.duration"]
    calls = [p for p in requests if p.attributes["mcp.method.name"] == "tools/call"]
    by_error = {p.attributes.get("error.type"): p for p in calls}
    assert sorted(by_error, key=str) == [None, "tool_error"]
    assert by_error[None].count == 1 and by_error["tool_error"].count == 1
    ok: dict[str, Any] = dict(by_error[None].attributes)
    assert ok.pop("mcp.protocol.version")
    assert ok == {"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool",
                  "gen_ai.tool.name": "read_text_file", "network.transport": "pipe"}  # no call or request id
    listed = [p for p in requests if p.attributes["mcp.method.name"] == "tools/list"]
    assert [p.count for p in listed] == [1]  # the other requests too


def test_the_file_server_records_each_served_call(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("line 1\n", encoding="utf-8")
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    files = FileService([root_from_argument(str(tmp_path))])
    tracer = TracerProvider().get_tracer("t")
    service = TracedService(files, tracer, transport="http", metrics=ServerMetrics(meters))
    for number, path in enumerate(("notes.txt", "notes.txt", "missing.txt")):
        request = Request(id=number, method="tools/call", params={"name": "read_text_file"}, raw={})
        context = CallContext([tmp_path.as_uri()], request=request)
        result = service.call("read_text_file", {"path": path}, context)
        assert isinstance(result, dict)
    by_error = {p.attributes.get("error.type"): p for p in points_of(reader)["mcp.server.operation.duration"]}
    assert (by_error[None].count, by_error["tool_error"].count) == (2, 1)
    assert by_error[None].attributes["network.transport"] == "tcp"


@pytest.mark.parametrize(("environ", "file", "records"), [
    ({"OTEL_METRICS_EXPORTER": "none"}, False, False),
    ({"OTEL_METRICS_EXPORTER": "none"}, True, True),  # the file still gets them
    ({"OTEL_METRICS_EXPORTER": "console"}, False, True),
])
def test_metrics_with_nowhere_to_go_record_nothing(
    tmp_path: Path, environ: dict[str, str], file: bool, records: bool
) -> None:
    """``OTEL_METRICS_EXPORTER=none``: a no-op provider (the SDK's without a reader would
    still clean and hash each point's attributes), shut down like any other."""
    from opentelemetry.metrics import NoOpHistogram

    from toolrelay.otel.setup import meter_provider_for

    provider = meter_provider_for(environ, file=str(tmp_path / "m.jsonl") if file else None, service="t")
    histogram = provider.get_meter("toolrelay").create_histogram("h")
    assert isinstance(histogram, NoOpHistogram) is not records
    assert isinstance(provider, MeterProvider) is records
    provider.shutdown()
