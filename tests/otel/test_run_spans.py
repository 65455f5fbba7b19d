"""A run as one trace (``RunOptions(tracer_provider=...)``), read from the SDK's in-memory
exporter: the span tree by the GenAI / MCP conventions with exact names, kinds, parents
and attributes; the two id domains on each call's span; the trace context in the request
a real server received; a failed call ERROR with its ``error.type``; no secret anywhere.

Real servers as subprocesses (the file server, a stdlib server that echoes the ``_meta``
it received), the offline model over loopback."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import toolrelay
from testkit.servers import MINIMAL_ECHO_SERVER
from testkit.transcripts import transcript_events
from toolrelay.client.config import ServerConfig, builtin_file_server

SECRET = "sk-otel-test-secret-0123456789"
THREE_CALLS = {"turns": [
    {"pause": 0.1, "calls": [{"name": "fs__read_text_file", "arguments": {"path": "notes.txt"}},
               {"name": "probe__meta", "arguments": {}},
               {"name": "fs__read_text_file", "arguments": {"path": "missing.txt"}}]},
    {"message": "done"},
]}


Traced = tuple[toolrelay.RunResult, list[ReadableSpan], Path]


@pytest.fixture(scope="module")
def three_calls(tmp_path_factory: pytest.TempPathFactory) -> Traced:
    """One run for the tests that read it: two calls that succeed, one that fails."""
    folder = tmp_path_factory.mktemp("three-calls")
    return (*traced_run(folder), folder)


def traced_run(
    folder: Path, script: dict[str, Any] = THREE_CALLS
) -> tuple[toolrelay.RunResult, list[ReadableSpan]]:
    (folder / "notes.txt").write_text("line 1\n", encoding="utf-8")
    (folder / "script.json").write_text(json.dumps(script), encoding="utf-8")
    probe = ServerConfig(name="probe", transport="stdio", command=sys.executable,
                         args=(str(MINIMAL_ECHO_SERVER), "--meta-tool"), env={"PROBE_TOKEN": SECRET})
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    options = toolrelay.RunOptions(
        model="offline", script=folder / "script.json", tracer_provider=provider,
        config=[builtin_file_server(folder), probe], transcript=folder / "run.jsonl")
    result = asyncio.run(toolrelay.run_async("read notes.txt and probe", options))
    provider.shutdown()
    return result, list(exporter.get_finished_spans())


def by_name(spans: list[ReadableSpan]) -> dict[str, list[ReadableSpan]]:
    named: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        named.setdefault(span.name, []).append(span)
    return named


def test_a_run_is_one_trace_of_agent_chat_and_tool_spans(three_calls: Traced) -> None:
    result, spans, folder = three_calls
    named = by_name(spans)
    assert sorted(set(named) - {"initialize"}) == [  # initialize: only beside a slow era probe
        "chat offline", "execute_tool meta", "execute_tool read_text_file", "invoke_agent toolrelay",
        "server/discover", "tools/list"]
    [run] = named["invoke_agent toolrelay"]
    assert run.parent is None and run.kind == SpanKind.INTERNAL and run.status.status_code == StatusCode.UNSET
    assert {k: run.attributes[k] for k in ("gen_ai.operation.name", "gen_ai.agent.name",
                                            "toolrelay.run.id", "toolrelay.run.status")} == {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "toolrelay",
        "toolrelay.run.id": result.run_id, "toolrelay.run.status": "completed"}
    assert {s.context.trace_id for s in spans} == {run.context.trace_id}
    children = [s for s in spans if s is not run]
    assert all(s.parent is not None and s.parent.span_id == run.context.span_id for s in children)
    chats = sorted(named["chat offline"], key=lambda s: s.attributes["toolrelay.turn"])
    assert [(s.kind, s.attributes["toolrelay.turn"], s.attributes["gen_ai.response.finish_reasons"])
            for s in chats] == [(SpanKind.CLIENT, 1, ("tool_calls",)), (SpanKind.CLIENT, 2, ("stop",))]
    first = chats[0].attributes
    assert (first["gen_ai.provider.name"], first["gen_ai.request.model"], first["gen_ai.request.stream"],
            first["server.address"]) == ("openai", "offline", True, "127.0.0.1")
    responses = [e["body"]["id"] for e in events(folder) if e["kind"] == "model_response"]
    assert [s.attributes["gen_ai.response.id"] for s in chats] == responses


def test_each_call_span_carries_both_ids_and_the_server_got_its_trace_context(three_calls: Traced) -> None:
    result, spans, folder = three_calls
    versions = {e["server"]: e["protocol_version"] for e in events(folder) if e["kind"] == "server_ready"}
    assert sorted(versions.values()) == ["2025-11-25", "2026-07-28"]  # both eras
    calls = {s.attributes["gen_ai.tool.call.id"]: s for s in spans if s.name.startswith("execute_tool ")}
    assert sorted(calls) == sorted(call.call_id for call in result.calls)
    for call in result.calls:
        span = calls[call.call_id]
        assert span.kind == SpanKind.INTERNAL
        assert span.attributes["jsonrpc.request.id"] == str(call.mcp_id)
        assert (span.attributes["gen_ai.operation.name"], span.attributes["mcp.method.name"],
                span.attributes["toolrelay.server"], span.attributes["toolrelay.alias"],
                span.attributes["network.transport"], span.attributes["mcp.protocol.version"]) == (
            "execute_tool", "tools/call", call.server, call.alias, "pipe", versions[call.server])
        assert "mcp.session.id" not in span.attributes  # stdio has no session
    # early: started while its response still streamed, as the transcript shows it
    recorded = events(folder)
    [answered] = [e["seq"] for e in recorded if e["kind"] == "model_response" and e["turn"] == 1]
    parsed = {e["call_id"]: e["seq"] for e in recorded if e["kind"] == "call_parsed"}
    early = {call_id: span.attributes["toolrelay.early"] for call_id, span in calls.items()}
    assert early == {call_id: seq < answered for call_id, seq in parsed.items()} and any(early.values())
    # the exact request carried the span's traceparent, unprefixed in params._meta
    sent = {e["call_id"]: e["message"]["params"]["_meta"] for e in events(folder)
            if e["kind"] == "mcp_request" and e.get("method") == "tools/call"}
    for call_id, meta in sent.items():
        span = calls[call_id].context
        flags = int(span.trace_flags)
        assert meta["traceparent"] == f"00-{span.trace_id:032x}-{span.span_id:016x}-{flags:02x}"
    [meta_call] = [call for call in result.calls if call.alias == "probe__meta"]
    received = json.loads(meta_call.result["content"][0]["text"])
    assert received["traceparent"] == sent[meta_call.call_id]["traceparent"]


def test_a_failed_call_is_an_error_span_with_its_error_type_and_no_secret(three_calls: Traced) -> None:
    result, spans, _ = three_calls
    [failed] = [call for call in result.calls if not call.ok]
    assert failed.status == "tool_error"
    calls = {s.attributes["gen_ai.tool.call.id"]: s for s in spans if s.name.startswith("execute_tool ")}
    span = calls[failed.call_id]
    assert span.status.status_code == StatusCode.ERROR and span.attributes["error.type"] == "tool_error"
    assert span.status.description and "missing.txt" in span.status.description
    ok = [calls[call.call_id] for call in result.calls if call.ok]
    assert all(s.status.status_code == StatusCode.UNSET and "error.type" not in s.attributes for s in ok)
    text = json.dumps([json.loads(s.to_json()) for s in spans])
    assert SECRET not in text


def test_a_call_that_never_left_toolrelay_fails_its_span_too(tmp_path: Path) -> None:
    script = {"turns": [{"calls": [{"name": "fs__nothing_here", "arguments": {}}]}, {"message": "done"}]}
    result, spans = traced_run(tmp_path, script)
    [call] = result.calls
    [span] = [s for s in spans if s.name.startswith("execute_tool ")]
    assert (span.name, span.attributes["error.type"], span.status.status_code) == (
        "execute_tool fs__nothing_here", "unknown_tool", StatusCode.ERROR)
    assert "jsonrpc.request.id" not in span.attributes and call.mcp_id is None


def events(folder: Path) -> list[dict[str, Any]]:
    return transcript_events(folder / "run.jsonl")


def test_without_a_provider_the_global_one_traces_the_run(tmp_path: Path) -> None:
    """A library user who set the global provider gets the run's spans (a fresh process:
    the global provider can be set once)."""
    (tmp_path / "notes.txt").write_text("line 1\n", encoding="utf-8")
    code = """
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
import toolrelay

spans = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(spans))
trace.set_tracer_provider(provider)
with trace.get_tracer("app").start_as_current_span("my app") as outer:
    toolrelay.run("read notes.txt", model="offline")
named = {span.name: span for span in spans.get_finished_spans() if span.name != "initialize"}
print(sorted(named), named["invoke_agent toolrelay"].parent.span_id == outer.get_span_context().span_id)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    names = ("['chat offline', 'execute_tool read_text_file', 'invoke_agent toolrelay', 'my app', "
             "'server/discover', 'tools/list']")
    assert proc.stdout == f"{names} True\n"
