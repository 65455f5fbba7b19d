"""The spans of a run's ``prompts/get`` and ``resources/read``, read from the SDK's in-memory
exporter: a CLIENT span each (``prompts/get {prompt}``, ``resources/read``) under the run's
span, with ``mcp.method.name``, the MCP id the transcript records as ``jsonrpc.request.id``,
the prompt's name or the resource's URI; ERROR with the JSON-RPC code and the server's
message when the server refuses; and the ``--expose-resources`` reader's call one
``execute_tool`` span whose request carries its trace context, not a second span beside it.

A real stdlib server with prompts and resources (``offer_server.py``) over stdio, the
offline model over loopback."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import toolrelay
from testkit.servers import OFFER_SERVER
from toolrelay.client.config import ServerConfig
from toolrelay.errors import RpcError

ANSWER = {"turns": [{"message": "done"}]}
READER_CALL = {"turns": [{"calls": [{"name": "offer__read_resource", "arguments": {"uri": "note://today"}}]},
                         {"message": "done"}]}


class Traced:
    """One run's spans and transcript records (and what it raised, if it did)."""

    def __init__(self, spans: list[ReadableSpan], records: list[dict[str, Any]],
                 raised: BaseException | None) -> None:
        self.spans, self.records, self.raised = spans, records, raised

    def named(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.spans if span.name == name]

    @property
    def run(self) -> ReadableSpan:
        [run] = self.named("invoke_agent toolrelay")
        return run

    def sent(self, method: str) -> list[dict[str, Any]]:
        """The transcript's requests of ``method``."""
        return [r for r in self.records if r["kind"] == "mcp_request" and r["method"] == method]


def traced_run(folder: Path, script: dict[str, Any] = ANSWER, **options: Any) -> Traced:
    (folder / "script.json").write_text(json.dumps(script), encoding="utf-8")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    server = ServerConfig(name="offer", transport="stdio", command=sys.executable, args=(str(OFFER_SERVER),))
    run_options = toolrelay.RunOptions(model="offline", script=folder / "script.json",
                                       tracer_provider=provider, config=[server],
                                       transcript=folder / "run.jsonl", **options)
    raised: BaseException | None = None
    try:
        asyncio.run(toolrelay.run_async("plan my day", run_options))
    except RpcError as exc:
        raised = exc
    provider.shutdown()
    records = [json.loads(line) for line in (folder / "run.jsonl").read_text().splitlines()]
    return Traced(list(exporter.get_finished_spans()), records, raised)


@pytest.fixture(scope="module")
def offered(tmp_path_factory: pytest.TempPathFactory) -> Traced:
    """A run that starts from the server's prompt ``plan`` with its resource ``note://today``."""
    return traced_run(tmp_path_factory.mktemp("offered"), prompt="offer/plan",
                      prompt_arguments={"city": "Lyon"}, resources=["note://today"])


def test_a_prompt_is_a_client_span_under_the_run(offered: Traced) -> None:
    [span] = offered.named("prompts/get plan")
    [request] = offered.sent("prompts/get")
    assert span.kind == SpanKind.CLIENT and span.status.status_code == StatusCode.UNSET
    assert span.parent is not None and span.parent.span_id == offered.run.context.span_id
    assert span.context.trace_id == offered.run.context.trace_id
    assert {k: span.attributes[k] for k in ("mcp.method.name", "gen_ai.prompt.name", "jsonrpc.request.id",
                                            "toolrelay.server", "network.transport")} == {
        "mcp.method.name": "prompts/get", "gen_ai.prompt.name": "plan",
        "jsonrpc.request.id": str(request["mcp_id"]), "toolrelay.server": "offer",
        "network.transport": "pipe"}
    assert "error.type" not in span.attributes


def test_a_resource_read_is_a_client_span_under_the_run_naming_its_uri(offered: Traced) -> None:
    [span] = offered.named("resources/read")
    [request] = offered.sent("resources/read")
    assert request["message"]["params"]["uri"] == "note://today"
    assert span.kind == SpanKind.CLIENT and span.status.status_code == StatusCode.UNSET
    assert span.parent is not None and span.parent.span_id == offered.run.context.span_id
    assert {k: span.attributes[k] for k in ("mcp.method.name", "mcp.resource.uri", "jsonrpc.request.id")} == {
        "mcp.method.name": "resources/read", "mcp.resource.uri": "note://today",
        "jsonrpc.request.id": str(request["mcp_id"])}
    assert "error.type" not in span.attributes
    # the run went on with what was read: both requests ended before the run did
    assert span.end_time is not None and offered.run.end_time is not None
    assert span.end_time <= offered.run.end_time


@pytest.mark.parametrize(("options", "name", "method", "code", "message", "raised"), [
    ({"resources": ["note://day/never"]}, "resources/read", "resources/read", -32002,
     "Resource not found: note://day/never", "server offer could not read note://day/never"),
    ({"prompt": "offer/nope"}, "prompts/get nope", "prompts/get", -32602, "Unknown prompt: nope",
     "server offer could not give prompt 'nope'"),
])
def test_a_refused_request_is_an_error_span_with_the_servers_code_and_message(
    tmp_path: Path, options: dict[str, Any], name: str, method: str, code: int, message: str, raised: str,
) -> None:
    traced = traced_run(tmp_path, **options)
    assert traced.raised is not None and raised in str(traced.raised)  # what the caller is told
    [span] = traced.named(name)
    [request] = traced.sent(method)
    assert span.kind == SpanKind.CLIENT
    assert span.status.status_code == StatusCode.ERROR and span.status.description == message
    assert {k: span.attributes[k] for k in ("mcp.method.name", "jsonrpc.request.id", "error.type",
                                            "rpc.response.status_code")} == {
        "mcp.method.name": method, "jsonrpc.request.id": str(request["mcp_id"]), "error.type": str(code),
        "rpc.response.status_code": str(code)}
    assert span.parent is not None and span.parent.span_id == traced.run.context.span_id
    # the run ended by that refusal: its span says so
    run = traced.run
    assert run.status.status_code == StatusCode.ERROR and run.attributes["error.type"] == "RpcError"


def test_a_resource_reader_call_is_one_execute_tool_span_whose_request_carries_its_context(
    tmp_path: Path,
) -> None:
    traced = traced_run(tmp_path, READER_CALL, expose_resources=True)
    assert traced.raised is None
    [call] = traced.named("execute_tool resources/read")
    [request] = traced.sent("resources/read")
    ids = call.context
    traceparent = f"00-{ids.trace_id:032x}-{ids.span_id:016x}-{int(ids.trace_flags):02x}"
    assert request["message"]["params"]["_meta"]["traceparent"] == traceparent
    assert {k: call.attributes[k] for k in ("mcp.method.name", "jsonrpc.request.id", "toolrelay.alias",
                                            "toolrelay.outcome")} == {
        "mcp.method.name": "resources/read", "jsonrpc.request.id": str(request["mcp_id"]),
        "toolrelay.alias": "offer__read_resource", "toolrelay.outcome": "ok"}
    # the request is the call's: no second span for the same MCP id
    same_id = [s for s in traced.spans if s.attributes.get("jsonrpc.request.id") == str(request["mcp_id"])]
    assert same_id == [call]
    assert traced.named("resources/read") == []
