"""``toolrelay batch --otel-file``: one trace per task, each task's ``invoke_agent`` span a
root linked to the ``toolrelay batch`` span; every task's transcript agrees with the trace
(``verify --otel``); a resumed task's span links to the interrupted attempt's call spans;
the metrics leave with the spans. The real local engine and a real local Ray (its workers
export alike: the driver hands them its OTEL_* settings), the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_otel_cli import attributes, points_in, spans_in

from conftest import CACHE, require_or_skip
from testkit.ray_setup import ensure_ray
from toolrelay.otel.batch_spans import attempt_links
from toolrelay.verify import load_run
from toolrelay.verify.otel_trace import check_trace


def toolrelay(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_", "RAY_"))} | env
    return subprocess.run([sys.executable, "-m", "toolrelay", *args], capture_output=True, text=True,
                          cwd=cwd, env=environ, timeout=90)


def two_turn_script(folder: Path, name: str) -> str:
    """A task of two turns, one read each (then the stand-in quotes the last output)."""
    (folder / f"{name}-a.txt").write_text("a\n", encoding="utf-8")
    (folder / f"{name}-b.txt").write_text("b\n", encoding="utf-8")
    turns = [{"calls": [{"name": "fs__read_text_file", "arguments": {"path": f"{name}-{part}.txt"}}]}
             for part in ("a", "b")]
    (folder / f"{name}.json").write_text(json.dumps({"turns": turns}), encoding="utf-8")
    return f"{name}.json"


@pytest.fixture
def batch_folder(tmp_path: Path) -> Path:
    rows = [{"id": f"t{i}", "task": f"read the files of t{i}", "script": two_turn_script(tmp_path, f"t{i}")}
            for i in (1, 2, 3)]
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return tmp_path


def batch(folder: Path, spans: str) -> subprocess.CompletedProcess[str]:
    return toolrelay("batch", "tasks.jsonl", "--out", "out", "--model", "offline", "--otel-file", spans,
                     "--quiet", cwd=folder)


def by_name(spans: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [span for span in spans if span["name"] == name]


def test_each_task_is_a_trace_of_its_own_linked_to_the_batch_span(batch_folder: Path) -> None:
    done = batch(batch_folder, "spans.jsonl")
    assert done.returncode == 0, done.stderr
    spans = spans_in(batch_folder / "spans.jsonl")
    [whole] = by_name(spans, "toolrelay batch")
    assert "parentSpanId" not in whole and attributes(whole)["toolrelay.batch.tasks"] == "3"
    runs = by_name(spans, "invoke_agent toolrelay")
    assert sorted(attributes(run)["toolrelay.task.id"] for run in runs) == ["t1", "t2", "t3"]
    assert len({run["traceId"] for run in runs} | {whole["traceId"]}) == 4  # a trace per task, the batch's
    for run in runs:
        assert "parentSpanId" not in run
        [link] = run["links"]
        assert (link["traceId"], link["spanId"]) == (whole["traceId"], whole["spanId"])
        assert attributes(link)["toolrelay.link"] == "batch"
        inside = [span for span in spans if span["traceId"] == run["traceId"] and span is not run]
        names = sorted(span["name"] for span in inside)
        assert names == ["chat offline"] * 3 + ["execute_tool read_text_file"] * 2
        assert all(span["parentSpanId"] == run["spanId"] for span in inside)
    for task in ("t1", "t2", "t3"):
        check = toolrelay("verify", f"out/transcripts/{task}.jsonl", "--otel", "spans.jsonl",
                          cwd=batch_folder)
        assert check.returncode == 0, check.stdout + check.stderr
    points = points_in(batch_folder / "spans.jsonl")
    [calls] = points["mcp.client.operation.duration"]
    assert calls["count"] == "6" and attributes(calls)["mcp.method.name"] == "tools/call"


def cut_after_first_outcome(transcript: Path) -> None:
    """The transcript as a batch killed just after the first call's answer leaves it."""
    lines = transcript.read_text(encoding="utf-8").splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if json.loads(line)["kind"] == "call_outcome")
    transcript.write_text("".join(lines[:first + 1]), encoding="utf-8")


SPELLED = {"as-written": '"call_span"', "with-an-escape": '"call_sp\\u0061n"'}
"""How the interrupted attempt's transcript spells the kind of its ``call_span`` records: as
toolrelay writes it, or with a JSON escape (the same record to any JSON reader)."""


@pytest.mark.parametrize("spelled", SPELLED)
def test_a_resumed_task_links_to_the_interrupted_attempt(batch_folder: Path, spelled: str) -> None:
    assert batch(batch_folder, "first.jsonl").returncode == 0
    transcript = batch_folder / "out" / "transcripts" / "t2.jsonl"
    first_calls = [json.loads(line) for line in transcript.read_text().splitlines()
                   if json.loads(line)["kind"] == "call_span"]
    cut_after_first_outcome(transcript)
    written = transcript.read_text(encoding="utf-8")
    assert written.count('"kind": "call_span"') == 1  # the first call's: the cut kept it
    spelled_so = written.replace('"kind": "call_span"', f'"kind": {SPELLED[spelled]}')
    transcript.write_text(spelled_so, encoding="utf-8")
    results = batch_folder / "out" / "results.jsonl"
    results.write_text("".join(line + "\n" for line in results.read_text().splitlines()
                               if json.loads(line)["id"] != "t2"), encoding="utf-8")
    done = batch(batch_folder, "second.jsonl")
    assert done.returncode == 0, done.stderr
    [run] = by_name(spans_in(batch_folder / "second.jsonl"), "invoke_agent toolrelay")  # t2 alone ran
    assert attributes(run)["toolrelay.task.id"] == "t2"
    resumed = [link for link in run["links"] if attributes(link)["toolrelay.link"] == "resumed_from"]
    assert [(link["traceId"], link["spanId"]) for link in resumed] == [
        (first_calls[0]["trace_id"], first_calls[0]["span_id"])]  # the call the cut transcript kept
    first_spans = {span["spanId"] for span in spans_in(batch_folder / "first.jsonl")}
    assert resumed[0]["spanId"] in first_spans  # a span the first attempt really exported


def test_a_line_nested_too_deep_for_python_is_passed_by_on_resume(tmp_path: Path) -> None:
    """An earlier attempt's transcript holding a line nested deeper than Python's JSON reader
    recurses (a hand-edited file): the resume links the spans of the lines it can read."""
    span = {"kind": "call_span", "trace_id": "ab" * 16, "span_id": "cd" * 8, "call_id": "c1"}
    deep = '{"kind": "call_span", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(deep + "\n" + json.dumps(span) + "\n", encoding="utf-8")
    [link] = attempt_links(transcript)
    assert (link.context.trace_id, link.context.span_id) == (int("ab" * 16, 16), int("cd" * 8, 16))


def test_batch_help_names_the_trace_options(tmp_path: Path) -> None:
    done = toolrelay("batch", "--help", cwd=tmp_path)
    assert "traces:" in done.stdout and "--otel-file PATH" in done.stdout


def test_ray_workers_export_alike_and_link_to_the_driver_s_batch_span(batch_folder: Path) -> None:
    why = ensure_ray(CACHE)
    if why is not None:
        require_or_skip(why)
    done = toolrelay("batch", "tasks.jsonl", "--out", "out", "--model", "offline", "--otel-file",
                     "spans.jsonl", "--engine", "ray", "--actors", "2", "--quiet", cwd=batch_folder,
                     OTEL_SERVICE_NAME="nightly-evals")
    assert done.returncode == 0, done.stderr
    exports = [json.loads(line) for line in (batch_folder / "spans.jsonl").read_text().splitlines()]
    services = {attributes(resource["resource"])["service.name"]
                for export in exports for resource in export.get("resourceSpans", [])}
    assert services == {"nightly-evals"}  # the driver's and the workers' alike
    spans = spans_in(batch_folder / "spans.jsonl")
    [whole] = by_name(spans, "toolrelay batch")
    runs = by_name(spans, "invoke_agent toolrelay")  # made in the workers, flushed as they closed
    assert sorted(attributes(run)["toolrelay.task.id"] for run in runs) == ["t1", "t2", "t3"]
    batch_span = [(whole["traceId"], whole["spanId"])]
    assert all([(link["traceId"], link["spanId"]) for link in run["links"]] == batch_span for run in runs)
    assert len(by_name(spans, "execute_tool read_text_file")) == 6
    for task in ("t1", "t2", "t3"):
        run = load_run(batch_folder / "out" / "transcripts" / f"{task}.jsonl")
        findings = check_trace(run, spans, "spans.jsonl")  # each call's span, its ids, its status
        assert len(findings) == 2 and all(finding.ok for finding in findings), findings
