"""The spans of a run's other MCP requests and of what servers ask, read from the SDK's
in-memory exporter: ``initialize`` / ``server/discover`` and ``tools/list`` CLIENT spans
under the run with the MCP ids the transcript records; ``roots/list``,
``elicitation/create`` and ``sampling/createMessage`` SERVER spans under the
``execute_tool`` span of the call they came during (a refused sampling request ERROR with
its JSON-RPC code). A real stdlib server that asks (``asking_server.py``), the offline
model over loopback."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import toolrelay
from testkit.servers import ASKING_SERVER
from toolrelay.client.config import ServerConfig
from toolrelay.otel.mcp_spans import _without_query

SCRIPT = {"turns": [  # one call a turn: a server's question during it can only be that call's
    {"calls": [{"name": "ask__roots", "arguments": {}}]},
    {"calls": [{"name": "ask__elicit", "arguments": {"message": "Name?"}}]},
    {"calls": [{"name": "ask__sample", "arguments": {"prompt": "Say hi"}}]},
    {"message": "done"},
]}
Traced = tuple[list[ReadableSpan], list[dict[str, object]]]


@pytest.fixture(scope="module")
def asked(tmp_path_factory: pytest.TempPathFactory) -> Traced:
    folder = tmp_path_factory.mktemp("asks")
    (folder / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    server = ServerConfig(name="ask", transport="stdio", command=sys.executable, args=(str(ASKING_SERVER),))
    options = toolrelay.RunOptions(model="offline", script=folder / "script.json", tracer_provider=provider,
                                   config=[server], transcript=folder / "run.jsonl",
                                   approve=lambda *_: True, roots=[folder.as_uri()])
    asyncio.run(toolrelay.run_async("ask me things", options))
    provider.shutdown()
    records = [json.loads(line) for line in (folder / "run.jsonl").read_text().splitlines()]
    return list(exporter.get_finished_spans()), records


def test_the_handshake_and_the_listing_are_client_spans_under_the_run(asked: Traced) -> None:
    spans, records = asked
    [run] = [s for s in spans if s.name == "invoke_agent toolrelay"]
    sent = {r["mcp_id"]: r["method"] for r in records
            if r["kind"] == "mcp_request" and r["method"] != "tools/call"}
    requests = [s for s in spans if s.kind == SpanKind.CLIENT and s.name != "chat offline"]
    assert {s.attributes["jsonrpc.request.id"]: s.attributes["mcp.method.name"] for s in requests} == {
        str(mcp_id): method for mcp_id, method in sent.items()}
    assert {"initialize", "tools/list"} <= {s.name for s in requests}
    for span in requests:
        assert span.parent is not None and span.parent.span_id == run.context.span_id
        assert span.attributes["toolrelay.server"] == "ask" and span.attributes["network.transport"] == "pipe"


@pytest.mark.parametrize(("tool", "method", "failed"), [
    ("roots", "roots/list", False),
    ("elicit", "elicitation/create", False),  # declined: an answer, not an error
    ("sample", "sampling/createMessage", True),  # refused: the library run has no approve_sampling
])
def test_what_a_server_asks_is_a_server_span_under_its_call(asked: Traced, tool: str, method: str,
                                                             failed: bool) -> None:
    spans, _ = asked
    [call] = [s for s in spans if s.name == f"execute_tool {tool}"]
    [ask] = [s for s in spans if s.name == method]
    assert ask.kind == SpanKind.SERVER and ask.attributes["mcp.method.name"] == method
    assert ask.parent is not None and ask.parent.span_id == call.context.span_id
    assert ask.context.trace_id == call.context.trace_id
    if failed:
        assert ask.status.status_code == StatusCode.ERROR
        assert str(ask.attributes["error.type"]).lstrip("-").isdigit()
    else:
        assert ask.status.status_code == StatusCode.UNSET and "error.type" not in ask.attributes


@pytest.mark.parametrize(("uri", "shown"), [
    ("file:///data/notes.txt", "file:///data/notes.txt"),
    ("https://user:pw-secret@api.example/doc?key=k-secret#part", "https://api.example/doc"),
    ("notes://a/b?token=t-secret", "notes://a/b"),
])
def test_a_resource_uri_keeps_no_query_user_info_or_fragment(uri: str, shown: str) -> None:
    assert _without_query(uri) == shown
