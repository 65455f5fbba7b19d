"""``--json`` output is one JSON document a program can read, whatever other flag is given."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_helpers import make_workspace, toolrelay

from testkit.servers import late_file_server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "workspace")


def test_call_wire_json_is_one_document_with_the_wire_inside(workspace: Path) -> None:
    proc = toolrelay("call", "fs__read_text_file", '{"path": "notes.txt", "head": 1}', "--wire", "--json",
                     cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    outcome = json.loads(proc.stdout)
    assert outcome["status"] == "ok"
    wire = outcome["wire"]
    assert (wire[0]["direction"], wire[0]["server"], wire[0]["connection"]) == ("out", "fs", 1)
    assert wire[0]["message"]["method"] == "server/discover"  # the probe: the file server is 2026-07-28
    first, retried = [w["message"] for w in wire if w["message"].get("method") == "tools/call"]
    response = wire[-1]["message"]
    assert retried == outcome["request"] and response == outcome["response"]
    assert response["id"] == retried["id"] == outcome["mcp_id"] != first["id"]
    # the file server asked for the roots (input_required): the wire shows the retry carrying them
    assert "inputResponses" not in first["params"] and "roots" in retried["params"]["inputResponses"]
    assert proc.stderr == ""


def test_call_wire_without_json_prints_the_lines(workspace: Path) -> None:
    proc = toolrelay("call", "fs__read_text_file", '{"path": "notes.txt", "head": 1}', "--wire",
                     cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith('>> fs#1 {"jsonrpc":"2.0","id":1,"method":"server/discover"')
    assert re.match(r'<< fs#1 \{"jsonrpc":"2.0","id":\d+,"result":', lines[lines.index("line 1") - 1])


@pytest.mark.parametrize("strict", [[], ["--strict"]])
def test_tools_report_json_is_the_report(workspace: Path, strict: list[str]) -> None:
    proc = toolrelay("tools", "--report", "--json", *strict, cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    by_alias = {entry["alias"]: entry for entry in report}
    assert len(by_alias) == 6
    read = by_alias["fs__read_text_file"]
    assert read["server"] == "fs" and read["tool"] == "read_text_file"
    assert read["strict"] is True and read["fallback_reason"] is None
    assert {"pointer": "/properties/head", "note": "made nullable (optional)"} in read["changes"]
    assert all(isinstance(note, str) for entry in report for note in entry["notes"])


def test_tools_report_prints_the_same_report_as_text(workspace: Path) -> None:
    text = toolrelay("tools", "--report", cwd=workspace).stdout
    report = json.loads(toolrelay("tools", "--report", "--json", cwd=workspace).stdout)
    for entry in report:
        assert f"{entry['alias']}  ({entry['server']}/{entry['tool']}): strict\n" in text
        for change in entry["changes"]:
            assert f"  - {change['pointer'] or '/'}: {change['note']}\n" in text


def test_wire_and_wire_json_list_the_same_messages_and_name_the_fallback_initialize(workspace: Path) -> None:
    (workspace / "late.json").write_text(json.dumps({"mcpServers": {"fs": late_file_server(workspace)}}))
    call = ("call", "fs__read_text_file", '{"path": "notes.txt", "head": 1}', "--config", "late.json")
    text = toolrelay(*call, "--wire", cwd=workspace)
    as_json = toolrelay(*call, "--wire", "--json", cwd=workspace)
    assert text.returncode == 0 and as_json.returncode == 0, text.stderr + as_json.stderr
    lines = text.stdout.splitlines()
    printed = [(line[:2], json.loads(line.split(" ", 2)[2])) for line in lines if line[:3] in (">> ", "<< ")]
    wire = json.loads(as_json.stdout)["wire"]
    assert printed == [(">>" if w["direction"] == "out" else "<<", w["message"]) for w in wire]
    sent = "fallback initialize (sent beside a server/discover not yet answered)"
    refused = "fallback initialize refused (expected: the server speaks 2026-07-28)"
    notes = [line for line in lines if line.startswith("-- ")]
    assert notes == [f"-- fs#1 id 2: {said}" for said in (sent, refused)]
    assert [(w["message"]["id"], w["note"]) for w in wire if "note" in w] == [(2, sent), (2, refused)]
