"""End to end across a process boundary with the official MCP python SDK (mcp 2.3) as a
stdio server that traces itself: ``toolrelay run --otel`` and the server export over
OTLP/HTTP to one real receiver on loopback (``oteltap``), and the SDK's ``tools/call``
SERVER span is a child of toolrelay's ``execute_tool`` span for that call (the
``traceparent`` toolrelay put in ``params._meta``, SEP-414), in toolrelay's trace, with the
same MCP id; a tool error is ERROR ``tool_error`` on both sides."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from opentelemetry.proto.trace.v1.trace_pb2 import Span

from testkit.otlp_receiver import otlp_receiver

SERVER = Path(__file__).parent / "servers" / "sdk_traced_server.py"
SCRIPT = {"turns": [{"calls": [{"name": "sdk__echo", "arguments": {"text": "hi"}},
                               {"name": "sdk__fail", "arguments": {"text": "no"}}]},
                    {"message": "done"}]}


def attributes(span: Span) -> dict[str, Any]:
    return {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in span.attributes}


async def traced_run(folder: Path) -> tuple[list[Span], list[dict[str, Any]]]:
    (folder / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    async with otlp_receiver() as receiver:
        entry = {"command": sys.executable, "args": [str(SERVER)],
                 "env": {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}}
        (folder / "mcp.json").write_text(json.dumps({"mcpServers": {"sdk": entry}}), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))}
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "toolrelay", "run", "echo and fail", "--model", "offline", "--script",
            "script.json", "--config", "mcp.json", "--otel", "--yes", "--quiet", "--transcript", "run.jsonl",
            env={**env, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "50"},
            cwd=folder, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        _, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()
        wanted = {"invoke_agent toolrelay", "tools/call echo", "tools/call fail"}
        spans = await receiver.spans_until(lambda got: wanted <= {s.name for s in got})
    records = [json.loads(line) for line in (folder / "run.jsonl").read_text().splitlines()]
    return spans, records


def test_the_sdk_server_s_span_is_a_child_of_toolrelay_s_call_span(tmp_path: Path) -> None:
    spans, records = asyncio.run(traced_run(tmp_path))
    [run] = [s for s in spans if s.name == "invoke_agent toolrelay"]
    outcomes = {r["outcome"]["call_id"]: r["outcome"] for r in records if r["kind"] == "call_outcome"}
    for tool, failed in (("echo", False), ("fail", True)):
        [ours] = [s for s in spans if s.name == f"execute_tool {tool}"]
        [theirs] = [s for s in spans if s.name == f"tools/call {tool}"]
        assert theirs.kind == Span.SPAN_KIND_SERVER
        assert theirs.trace_id == ours.trace_id == run.trace_id  # one trace, across the process boundary
        assert theirs.parent_span_id == ours.span_id
        outcome = outcomes[attributes(ours)["gen_ai.tool.call.id"]]
        assert attributes(theirs)["jsonrpc.request.id"] == attributes(ours)["jsonrpc.request.id"] == str(
            outcome["mcp_id"])
        assert attributes(theirs)["gen_ai.tool.name"] == tool
        if failed:
            assert attributes(theirs)["error.type"] == attributes(ours)["error.type"] == "tool_error"
            assert theirs.status.code == ours.status.code == 2  # ERROR
        else:
            assert "error.type" not in attributes(theirs) and theirs.status.code != 2
