"""The command line's tracing: ``--otel-file PATH`` (OTLP JSON lines) on ``call``, ``run``
and ``demo``; the standard ``OTEL_*`` environment, its kill switch, and a clear one-line
usage error for what toolrelay cannot export. Real commands as subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def toolrelay(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")} | env
    return subprocess.run([sys.executable, "-m", "toolrelay", *args], capture_output=True, text=True,
                          cwd=cwd, env=environ, timeout=60)


def spans_in(path: Path) -> list[dict[str, Any]]:
    """Every span of an OTLP JSON lines file."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [span for export in lines for resource in export.get("resourceSpans", [])
            for scope in resource["scopeSpans"] for span in scope["spans"]]


def points_in(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Every metric's data points of an OTLP JSON lines file, by metric name."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    found: dict[str, list[dict[str, Any]]] = {}
    for export in lines:
        for resource in export.get("resourceMetrics", []):
            for scope in resource["scopeMetrics"]:
                for metric in scope["metrics"]:
                    found.setdefault(metric["name"], []).extend(metric["histogram"]["dataPoints"])
    return found


def attributes(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("line 1\n", encoding="utf-8")
    return tmp_path


def test_a_direct_call_is_a_trace_of_its_own(folder: Path) -> None:
    done = toolrelay("call", "fs__read_text_file", '{"path": "notes.txt"}', "--otel-file", "spans.jsonl",
                     "--json", cwd=folder)
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    [span] = spans_in(folder / "spans.jsonl")
    assert span["name"] == "execute_tool read_text_file" and "parentSpanId" not in span
    assert len(span["traceId"]) == 32 and len(span["spanId"]) == 16  # hex, as OTLP JSON writes them
    found = attributes(span)
    assert found["jsonrpc.request.id"] == str(outcome["mcp_id"]) and "gen_ai.tool.call.id" not in found
    assert outcome["request"]["params"]["_meta"]["traceparent"].split("-")[1:3] == [span["traceId"],
                                                                                    span["spanId"]]
    assert (folder / "spans.jsonl").stat().st_mode & 0o777 == 0o600


def test_a_failed_direct_call_is_an_error_span(folder: Path) -> None:
    done = toolrelay("call", "fs__read_text_file", '{"path": "missing.txt"}', "--otel-file", "spans.jsonl",
                     cwd=folder)
    assert done.returncode == 1
    [span] = spans_in(folder / "spans.jsonl")
    assert span["status"]["code"] == 2 and attributes(span)["error.type"] == "tool_error"  # 2: ERROR


def test_a_run_writes_its_whole_trace(folder: Path) -> None:
    done = toolrelay("run", "read notes.txt", "--model", "offline", "--otel-file", "spans.jsonl", "--quiet",
                     cwd=folder)
    assert done.returncode == 0, done.stderr
    # the era probe sends initialize beside server/discover only when the probe is slow to answer
    names = sorted(span["name"] for span in spans_in(folder / "spans.jsonl") if span["name"] != "initialize")
    assert names == ["chat offline", "chat offline", "execute_tool read_text_file", "invoke_agent toolrelay",
                     "server/discover", "tools/list"]  # the handshake, the listing


def test_console_export_goes_to_stderr_and_the_answer_stays_alone_on_stdout(folder: Path) -> None:
    done = toolrelay("call", "fs__read_text_file", '{"path": "notes.txt"}', cwd=folder,
                     OTEL_TRACES_EXPORTER="console", OTEL_SERVICE_NAME="my-agent")
    assert done.returncode == 0 and done.stdout == "line 1\n"
    assert '"name": "execute_tool read_text_file"' in done.stderr
    assert '"service.name": "my-agent"' in done.stderr


def test_otel_sdk_disabled_turns_it_all_off(folder: Path) -> None:
    done = toolrelay("call", "fs__read_text_file", '{"path": "notes.txt"}', "--otel-file", "spans.jsonl",
                     cwd=folder, OTEL_SDK_DISABLED="true")
    assert done.returncode == 0 and not (folder / "spans.jsonl").exists()


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("OTEL_TRACES_EXPORTER", "zipkin",
     "toolrelay run: error: OTEL_TRACES_EXPORTER: toolrelay has no exporter 'zipkin' "
     "(it has otlp, console, none)"),
    ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc",
     "toolrelay run: error: OTEL_EXPORTER_OTLP_PROTOCOL=grpc: toolrelay exports OTLP over HTTP only "
     "(http/protobuf)"),
])
def test_what_it_cannot_export_is_a_usage_error(
    variable: str, value: str, message: str, folder: Path
) -> None:
    done = toolrelay("run", "read notes.txt", "--model", "offline", "--otel", cwd=folder, **{variable: value})
    assert (done.returncode, done.stderr) == (2, message + "\n")


def test_the_demo_traces_both_of_its_runs(folder: Path) -> None:
    done = toolrelay("demo", "--out", "demo", "--otel-file", "spans.jsonl", cwd=folder)
    assert done.returncode == 0, done.stderr
    spans = spans_in(folder / "spans.jsonl")
    runs = [span for span in spans if span["name"] == "invoke_agent toolrelay"]
    assert len(runs) == 2 and len({span["traceId"] for span in spans}) == 2  # plain and streamed
    lines = (folder / "demo" / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
    transcript = [json.loads(line) for line in lines]
    [run_start] = [e for e in transcript if e["kind"] == "run_start"]
    assert run_start["run_id"] in {attributes(span)["toolrelay.run.id"] for span in runs}


NO_OTEL = """import sys
class _NoOtel:
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ImportError(name)
sys.meta_path.insert(0, _NoOtel())
"""


@pytest.mark.parametrize("verb", [
    ["run", "read notes.txt", "--model", "offline", "--otel"],
    ["batch", "tasks.jsonl", "--out", "out", "--model", "offline", "--otel-file", "spans.jsonl"],
], ids=["run", "batch"])
def test_without_the_extra_tracing_is_a_usage_error_naming_it(verb: list[str], folder: Path) -> None:
    blocked = folder / "no-otel"
    blocked.mkdir()
    (blocked / "sitecustomize.py").write_text(NO_OTEL, encoding="utf-8")  # as if the extra were not installed
    (folder / "tasks.jsonl").write_text('{"id": "t1", "task": "read notes.txt"}\n', encoding="utf-8")
    done = toolrelay(*verb, cwd=folder, PYTHONPATH=str(blocked))
    assert done.returncode == 2
    assert done.stderr == (f"toolrelay {verb[0]}: error: tracing (--otel, OTEL_* variables) needs the otel "
                           "extra: pip install 'toolrelay[otel]'\n")
    assert not (folder / "out").exists()  # nothing started
