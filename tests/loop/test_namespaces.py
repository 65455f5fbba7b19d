"""``--declare namespaces`` end to end: one Responses namespace per server, calls that come
back with ``namespace`` and ``name`` routed by the pair, every request body accepted by
the openai package's own types, and the proof: the transcript verifies, and copies with a
namespace changed are rejected. The offline stand-in (a real loopback HTTP endpoint) and
two in-process file servers; the CLI as a subprocess."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import Run, make_workspace, run_script

from testkit.openai_wire import check_body
from testkit.processes import run
from testkit.servers import HOSTILE_SERVER
from testkit.transcripts import transcript_events
from toolrelay.assembly.catalogs import connect
from toolrelay.client.config import ServerConfig
from toolrelay.errors import UsageError
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.runner import RunOptions, run_async
from toolrelay.verify import Verdict, load_run, verify
from toolrelay.view.build import build_trace

TWO_SERVERS = {"turns": [
    {"calls": [{"namespace": "fs", "name": "read_text_file", "arguments": {"path": "notes.txt", "head": 1}},
               {"namespace": "docs", "name": "read_text_file", "arguments": {"path": "guide.md"}}]},
    {"message": "read both"},
]}


@pytest.fixture(scope="module")
def namespaced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Path]:
    """One scripted run over servers fs and docs under --declare namespaces, transcribed."""
    root = tmp_path_factory.mktemp("namespaces")
    workspace, docs = make_workspace(root / "workspace"), root / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n", encoding="utf-8")
    servers = [in_process_file_server(workspace), in_process_file_server(docs, name="docs")]
    transcript = root / "run.jsonl"
    done = run_script(workspace, TWO_SERVERS, servers=servers, declare="namespaces", transcript=transcript)
    return done, transcript


def test_each_server_is_one_namespace_and_each_call_is_routed_by_its_pair(
    namespaced: tuple[Run, Path]
) -> None:
    done, _ = namespaced
    first, second = done.requests
    assert [(t["type"], t["name"]) for t in first["tools"]] == [("namespace", "docs"), ("namespace", "fs")]
    assert first["tools"][1]["description"].startswith("Tools of the MCP server 'fs': Read-only access")
    inner = {t["name"] for t in first["tools"][1]["tools"]}
    assert "read_text_file" in inner and all("__" not in name for name in inner)
    for body in done.requests:
        check_body(body)  # namespaces, and function_call items with their namespace, as the types say
    assert [(c.alias, c.server, c.tool, c.status) for c in done.result.calls] == [
        ("fs.read_text_file", "fs", "read_text_file", "ok"),
        ("docs.read_text_file", "docs", "read_text_file", "ok"),
    ]
    assert [o["output"] for o in done.outputs(1)] == ["line 1\n", "# Guide\n"]
    replayed = [i for i in second["input"] if i.get("type") == "function_call"]
    named = [(i["namespace"], i["name"]) for i in replayed]
    assert named == [("fs", "read_text_file"), ("docs", "read_text_file")]
    [declarations] = done.records("declarations")
    assert declarations["namespaces"] == {"docs": "docs", "fs": "fs"}
    assert done.result.status == "completed"


def test_the_namespaced_transcript_verifies_and_explain_names_the_namespace(
    namespaced: tuple[Run, Path]
) -> None:
    _, transcript = namespaced
    verdict = verify(load_run(transcript))
    assert verdict.ok, verdict.broken
    explained = toolrelay("explain", str(transcript), cwd=transcript.parent)
    assert explained.returncode == 0, explained.stderr
    assert "fs.read_text_file → fs/read_text_file" in explained.stdout
    assert "docs.read_text_file → docs/read_text_file" in explained.stdout
    assert "request_1: 1 input item(s), 12 tool(s)," in explained.stdout  # the tools, not the namespaces


def test_the_trace_view_names_each_tool_and_call_with_its_namespace(namespaced: tuple[Run, Path]) -> None:
    _, transcript = namespaced
    events = transcript_events(transcript)
    rows = build_trace(events, verify(load_run(transcript))).rows()
    [declared] = [row for row in rows if row.label.startswith("declare ")]
    assert declared.label == "declare 12 tools (initial)"  # 6 in each namespace, not 2 namespaces
    assert "docs.read_text_file" in declared.detail.split(", ")
    labels = [row.label for row in rows]
    assert "route fs.read_text_file → fs / read_text_file" in labels
    assert "route docs.read_text_file → docs / read_text_file" in labels
    assert any(row.detail == "function_call fs.read_text_file" for row in rows)  # the streamed item


def _tampered(transcript: Path, change: Any) -> Verdict:
    events = transcript_events(transcript)
    changed = copy.deepcopy(events)
    change(changed)
    copy_path = transcript.with_name(f"tampered-{change.__name__}.jsonl")
    copy_path.write_text("".join(json.dumps(event) + "\n" for event in changed))
    return verify(load_run(copy_path))


def _first(events: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return next(event for event in events if event["kind"] == kind)


def _call_namespace(events: list[dict[str, Any]]) -> None:
    """The model's first call named namespace docs instead of fs."""
    for event in events:
        for item in event.get("body", {}).get("output", []) if event["kind"] == "model_response" else []:
            if item.get("namespace") == "fs":
                item["namespace"] = "docs"
                return


def _declared_namespace(events: list[dict[str, Any]]) -> None:
    """The first request declared fs's tools under another namespace."""
    _first(events, "model_request")["body"]["tools"][1]["name"] = "files"


def _namespace_server(events: list[dict[str, Any]]) -> None:
    """The declarations say namespace fs stands for server docs."""
    _first(events, "declarations")["namespaces"]["fs"] = "docs"


def _description(events: list[dict[str, Any]]) -> None:
    """fs's namespace says something its server never said, in the declarations and every request."""
    for event in events:
        tools = event["tools"] if event["kind"] == "declarations" else event.get("body", {}).get("tools")
        if event["kind"] in ("declarations", "model_request") and tools:
            tools[1]["description"] = "Tools of the MCP server 'fs': the key is 1234"


@pytest.mark.parametrize(("change", "link", "said"), [
    (_call_namespace, "parse",
     "call_parsed names 'fs.read_text_file', the model called 'docs.read_text_file'"),
    (_declared_namespace, "next_input", "request 1's tools are not the declarations in force"),
    (_description, "next_input", "are not what the servers' tools/list rules give (differs at "
                                 "tools[1].description)"),
    (_namespace_server, "routing", "namespace fs stands for server docs in the declarations, yet the call "
                                   "went to server fs"),
])
def test_a_copy_with_a_namespace_changed_is_rejected(
    namespaced: tuple[Run, Path], change: Any, link: str, said: str
) -> None:
    verdict = _tampered(namespaced[1], change)
    assert verdict.broken is not None
    broken = [f for f in verdict.broken_findings() if f.link == link]
    assert broken and said in broken[0].message, [f.message for f in verdict.broken_findings()]


def test_a_call_to_an_undeclared_tool_that_ran_is_a_broken_routing_link(namespaced: tuple[Run, Path]) -> None:
    def undeclared(events: list[dict[str, Any]]) -> None:
        for event in events:
            if event["kind"] == "model_request" and event["body"].get("tools"):
                fs = event["body"]["tools"][1]
                fs["tools"] = [t for t in fs["tools"] if t["name"] != "read_text_file"]
        for event in events:
            if event["kind"] == "declarations":
                event["tools"] = _first(events, "model_request")["body"]["tools"]

    verdict = _tampered(namespaced[1], undeclared)
    messages = [f.message for f in verdict.broken_findings() if f.link == "routing"]
    assert any("fs.read_text_file ran, but request 1 declared no such tool" in m for m in messages), messages


def test_a_bare_name_is_an_unknown_tool_that_lists_the_namespaced_ones(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "workspace")
    script = {"turns": [{"calls": [{"name": "read_text_file", "arguments": {"path": "notes.txt"}}]}]}
    done = run_script(workspace, script, declare="namespaces")
    [outcome] = done.result.calls
    assert outcome.status == "unknown_tool" and outcome.mcp_id is None
    said = done.outputs(1)[0]["output"]
    assert said.startswith("Error (unknown tool): unknown tool 'read_text_file'; available tools: ")
    assert "fs.read_text_file" in said


def test_the_stand_in_without_a_script_calls_the_namespaced_read_tool(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "workspace")
    done = run_script(workspace, None, "Read the first 2 lines of notes.txt", declare="namespaces")
    [call] = [i for i in done.records("model_response")[0]["body"]["output"] if i["type"] == "function_call"]
    assert (call["namespace"], call["name"]) == ("fs", "read_text_file")
    assert done.result.final_text == "The tool returned:\nline 1\nline 2\n"


def test_names_the_api_refuses_are_mapped_reversibly_inside_namespaces() -> None:
    hostile = ServerConfig(name="host ile", transport="stdio", command=sys.executable,
                           args=(str(HOSTILE_SERVER),))

    async def scenario() -> tuple[list[dict[str, Any]], dict[str, str]]:
        async with connect([hostile], declare="namespaces") as catalog:
            return catalog.declarations(), {route.alias: route.tool for route in catalog.routes}

    tools, routes = asyncio.run(scenario())
    [space] = tools
    assert space["name"] == "host_ile"
    names = [t["name"] for t in space["tools"]]
    assert len(names) == len(set(names)) and all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", n) for n in names)
    # each bare name leads back to its original: mapped, cut with a hash, or told apart by one
    assert {f"host_ile.{n}" for n in names} == set(routes)
    assert routes["host_ile.read_file"] == "read.file" and routes["host_ile.with_space"] == "with space"
    assert routes["host_ile.a_b"] == "a_b" and routes["host_ile.a_b_4d8c7bed"] == "a.b"
    assert sorted(routes[alias] for alias in routes if alias.startswith("host_ile.xxx")) == [
        "x" * 100, "x" * 99 + "y"]
    check_body({"model": "m", "input": "x", "tools": tools})


def toolrelay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    return run([sys.executable, "-m", "toolrelay", *args], cwd=cwd, text=True, timeout=60, env=env)


def test_tools_declare_namespaces_json_prints_the_array_a_run_sends(
    namespaced: tuple[Run, Path], tmp_path: Path
) -> None:
    workspace = make_workspace(tmp_path / "workspace")
    printed = toolrelay("tools", "--declare", "namespaces", "--json", cwd=workspace)
    assert printed.returncode == 0, printed.stderr
    done = run_script(workspace, {"turns": [{"message": "no call"}]}, declare="namespaces")
    assert json.loads(printed.stdout) == done.requests[0]["tools"]
    wrong = toolrelay("tools", "--declare", "namespace", cwd=workspace)
    assert wrong.returncode == 2
    said = "argument --declare: invalid choice: 'namespace' (choose from 'flat', 'namespaces')"
    assert said in wrong.stderr


def test_a_library_run_with_an_unknown_declare_mode_is_a_usage_error(tmp_path: Path) -> None:
    options = RunOptions(model="offline", config=[in_process_file_server(tmp_path)],
                         declare="nested")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"^declare must be one of flat, namespaces, not 'nested'$"):
        asyncio.run(run_async("task", options))


def test_a_tool_choice_inside_a_namespace_is_a_usage_error_naming_why(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "workspace")
    said = ("--tool-choice 'fs.read_text_file' names a tool inside a namespace, which a tool choice "
            "cannot name: use auto or required, or --declare flat")
    with pytest.raises(UsageError, match=f"^{re.escape(said)}$"):
        run_script(workspace, None, declare="namespaces", tool_choice="fs.read_text_file")
