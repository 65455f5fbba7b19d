"""``toolrelay run --otel`` exporting over OTLP/HTTP to a real receiver on loopback, with
toolrelay's own file server (``toolrelay files --otel``) exporting to the same one: one
trace across the process boundary, the server's ``tools/call read_text_file`` SERVER span
parented on toolrelay's ``execute_tool`` span by the ``traceparent`` in ``params._meta``;
both id domains on the spans; no secret in any of them. Over stdio and over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from testkit.mcp_http import files_http_process
from testkit.otlp_receiver import otlp_receiver

SECRET = "otel-secret-value-0123456789"
SCRIPT = {"turns": [{"calls": [{"name": "fs__read_text_file", "arguments": {"path": "notes.txt"}}]},
                    {"message": "done"}]}
EXPORT = {"OTEL_BSP_SCHEDULE_DELAY": "50"}  # a served span leaves at once, not 5 s later


def attributes(span: Span) -> dict[str, Any]:
    return {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in span.attributes}


@contextmanager
def file_server(transport: str, folder: Path, endpoint: str) -> Iterator[dict[str, Any]]:
    """The config entry of the file server over ``transport``, exporting to ``endpoint``."""
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "FILES_TOKEN": SECRET, **EXPORT}
    if transport == "stdio":
        args = ["-m", "toolrelay", "files", str(folder), "--otel"]
        yield {"command": sys.executable, "args": args, "env": env}
        return
    with files_http_process(folder, "--otel", env={**os.environ, **env}) as url:
        yield {"type": "http", "url": f"{url}?api_key={SECRET}"}


async def traced_run(transport: str, folder: Path) -> tuple[list[Span], dict[str, Any]]:
    (folder / "notes.txt").write_text("line 1\n", encoding="utf-8")
    (folder / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    async with otlp_receiver() as receiver:
        with file_server(transport, folder, receiver.endpoint) as entry:
            (folder / "mcp.json").write_text(json.dumps({"mcpServers": {"fs": entry}}), encoding="utf-8")
            version = ["--protocol-version", "2025-11-25"] if transport == "http" else []
            env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OPENAI_API_KEY": SECRET}
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "toolrelay", "run", "read notes.txt", "--model", "offline", "--script",
                str(folder / "script.json"), "--config", str(folder / "mcp.json"), "--otel", "--quiet",
                "--transcript", str(folder / "run.jsonl"), *version,
                env=env, cwd=folder, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            _, err = await asyncio.wait_for(proc.communicate(), 60)
            assert proc.returncode == 0, err.decode()
            wanted = {"invoke_agent toolrelay", "tools/call read_text_file"}  # each process's last
            spans = await receiver.spans_until(lambda got: wanted <= {s.name for s in got})
    by_kind = {e["kind"]: e for e in map(json.loads, (folder / "run.jsonl").read_text().splitlines())}
    return spans, by_kind


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_file_servers_span_is_a_child_of_toolrelays_call_span(transport: str, tmp_path: Path) -> None:
    spans, recorded = asyncio.run(traced_run(transport, tmp_path))
    [run] = [s for s in spans if s.name == "invoke_agent toolrelay"]
    handshake = [s for s in spans if s.name in ("server/discover", "initialize", "tools/list")]
    assert "tools/list" in {s.name for s in handshake}
    assert all(s.parent_span_id == run.span_id for s in handshake)
    assert sorted(s.name for s in spans if s not in handshake) == [
        "chat offline", "chat offline", "execute_tool read_text_file", "invoke_agent toolrelay",
        "tools/call read_text_file"]
    [call] = [s for s in spans if s.name == "execute_tool read_text_file"]
    [served] = [s for s in spans if s.name == "tools/call read_text_file"]
    assert {s.trace_id for s in spans} == {run.trace_id}  # one trace, across the processes
    assert call.parent_span_id == run.span_id and served.parent_span_id == call.span_id
    assert (served.kind, call.kind) == (Span.SPAN_KIND_SERVER, Span.SPAN_KIND_INTERNAL)
    ours, theirs = attributes(call), attributes(served)
    outcome = recorded["call_outcome"]["outcome"]
    assert ours["gen_ai.tool.call.id"] == outcome["call_id"]
    assert ours["jsonrpc.request.id"] == theirs["jsonrpc.request.id"] == str(outcome["mcp_id"])
    assert theirs["mcp.method.name"] == "tools/call" and theirs["gen_ai.tool.name"] == "read_text_file"
    network = "pipe" if transport == "stdio" else "tcp"
    assert theirs["network.transport"] == ours["network.transport"] == network
    assert theirs["mcp.protocol.version"] == ours["mcp.protocol.version"]
    if transport == "http":
        assert ours["server.address"] == "127.0.0.1" and isinstance(ours["server.port"], int)
        assert ours["mcp.session.id"]  # 2025-11-25 over HTTP has sessions
    else:
        assert "mcp.session.id" not in ours
    assert all(SECRET.encode() not in s.SerializeToString() for s in spans)
