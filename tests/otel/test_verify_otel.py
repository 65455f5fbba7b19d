"""``toolrelay verify run.jsonl --otel spans.jsonl``: the trace ``run --otel-file`` wrote
agrees with the transcript call by call (same call_id, same MCP id, the span the transcript
named, ERROR exactly for the failed calls), and each kind of disagreement in a tampered
copy is the broken link, said with the ids. One real run; verify read as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolrelay.cli.main import main

SCRIPT = {"turns": [
    {"calls": [{"name": "fs__read_text_file", "arguments": {"path": "notes.txt"}},
               {"name": "fs__read_text_file", "arguments": {"path": "missing.txt"}}]},
    {"message": "done"},
]}
Edit = Callable[[list[dict[str, Any]]], None]


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("traced")
    (folder / "notes.txt").write_text("line 1\n", encoding="utf-8")
    (folder / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    subprocess.run([sys.executable, "-m", "toolrelay", "run", "read both", "--model", "offline", "--script",
                    "script.json", "--transcript", "run.jsonl", "--otel-file", "spans.jsonl", "--quiet"],
                   cwd=folder, check=True, capture_output=True, timeout=60)
    return folder


def verify_cli(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["verify", *args])
    out, err = capsys.readouterr()
    return code, out, err


def call_spans(exports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    spans = [span for export in exports for resource in export.get("resourceSpans", [])
             for scope in resource["scopeSpans"] for span in scope["spans"]]
    return [span for span in spans if span["name"].startswith("execute_tool ")]


def attribute(span: dict[str, Any], key: str) -> dict[str, Any]:
    [found] = [a for a in span["attributes"] if a["key"] == key]
    return found["value"]  # type: ignore[no-any-return]


def tampered(traced: Path, tmp_path: Path, edit: Edit) -> Path:
    exports = [json.loads(line) for line in (traced / "spans.jsonl").read_text(encoding="utf-8").splitlines()]
    edit(exports)
    copy = tmp_path / "spans.jsonl"
    copy.write_text("".join(json.dumps(export) + "\n" for export in exports), encoding="utf-8")
    return copy


def test_the_trace_agrees_with_the_transcript(traced: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = verify_cli(str(traced / "run.jsonl"), "--otel", str(traced / "spans.jsonl"), "--all",
                              capsys=capsys)
    assert code == 0, out
    held = [line for line in out.splitlines() if "execute_tool span" in line]
    assert len(held) == 2 and all(line.split()[0] == "ok" for line in held)
    assert any("status ERROR (tool_error) as it ended tool_error" in line for line in held)
    assert verify_cli(str(traced / "run.jsonl"), capsys=capsys)[0] == 0  # the call_span records verify


def _other_mcp_id(exports: list[dict[str, Any]]) -> None:
    attribute(call_spans(exports)[0], "jsonrpc.request.id")["stringValue"] = "99"


def _unset_status(exports: list[dict[str, Any]]) -> None:
    for span in call_spans(exports):
        span["status"] = {}


def _claimed(exports: list[dict[str, Any]]) -> None:
    span = call_spans(exports)[0]
    attribute(span, "gen_ai.tool.call.id")["stringValue"] = "call_not_in_the_run"


def _dropped(exports: list[dict[str, Any]]) -> None:
    for export in exports:
        for resource in export.get("resourceSpans", []):
            for scope in resource["scopeSpans"]:
                scope["spans"] = [s for s in scope["spans"] if not s["name"].startswith("execute_tool ")]


def _other_run(exports: list[dict[str, Any]]) -> None:
    for export in exports:
        for resource in export.get("resourceSpans", []):
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    for a in span["attributes"]:
                        if a["key"] == "toolrelay.run.id":
                            a["value"]["stringValue"] = "another-run"


@pytest.mark.parametrize(("edit", "said"), [
    (_other_mcp_id, "its span says MCP id 99, the transcript"),
    (_unset_status, "ended tool_error but its span's status is not ERROR"),
    (_claimed, "has no execute_tool span in the run's trace"),
    (_dropped, "has no execute_tool span in the run's trace"),
    (_other_run, "holds no trace of run"),
], ids=["mcp-id", "status", "claimed", "dropped", "other-run"])
def test_a_trace_that_disagrees_is_a_broken_link(
    edit: Edit, said: str, traced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tampered(traced, tmp_path, edit)
    code, out, _ = verify_cli(str(traced / "run.jsonl"), "--otel", str(copy), capsys=capsys)
    assert code == 1
    assert "BROKEN link: correlation" in out and said in out, out


def test_a_span_claiming_a_call_the_run_lacks_is_named(
    traced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tampered(traced, tmp_path, _claimed)
    out = verify_cli(str(traced / "run.jsonl"), "--otel", str(copy), capsys=capsys)[1]
    assert "claims call_id call_not_in_the_run, which the transcript does not have" in out


def test_a_file_that_is_not_otlp_json_is_a_usage_error(
    traced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.jsonl").write_text('{"resourceSpans": []}\nnot json\n', encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    code, out, err = verify_cli(str(traced / "run.jsonl"), "--otel", str(bad), capsys=capsys)
    assert (code, out) == (2, "")
    assert err == f"toolrelay verify: error: --otel {bad}: line 2 is not OTLP JSON (resourceSpans)\n"
