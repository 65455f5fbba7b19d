"""The catalog across real servers: toolrelay's file server, the Node reference server,
an official-SDK server and a server with hostile names — through the CLI and the library."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from testkit.processes import run
from testkit.servers import HOSTILE_SERVER as HOSTILE
from testkit.servers import SDK_SERVER
from toolrelay.assembly.catalogs import connect
from toolrelay.client.config import ServerConfig
from toolrelay.events import EventStream, Notice

ALIAS = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


_STARTED: dict[tuple[tuple[str, ...], Path | None], Future[subprocess.CompletedProcess[str]]] = {}
"""The module's CLI commands started ahead, two at a time (``started_ahead``), by (args, cwd)."""


def _toolrelay_now(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "toolrelay", *args], text=True, timeout=120, cwd=cwd)


def toolrelay(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI as a real process: its result if ``started_ahead`` started this command, else run now."""
    ahead = _STARTED.pop((args, cwd), None)
    return ahead.result() if ahead is not None else _toolrelay_now(*args, cwd=cwd)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("workspace")
    (root / "notes.txt").write_text("one\ntwo\nthree\n")
    return root


@pytest.fixture(scope="module")
def config(workspace: Path, node_fs_server: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("config") / "mcp.json"
    roots = {"roots": [str(workspace)]}  # the file servers' roots (else toolrelay offers the cwd)
    servers = {
        "fs": {"command": sys.executable, "args": ["-m", "toolrelay", "files", str(workspace)],
               "toolrelay": roots},
        "node.ref": {"command": node_fs_server[0], "args": [*node_fs_server[1:], str(workspace)],
                     "toolrelay": roots},
        "host ile": {"command": sys.executable, "args": [str(HOSTILE)]},
        "sdk": {"command": sys.executable, "args": [str(SDK_SERVER), "stdio"]},
    }
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


@pytest.fixture(scope="module")
def declared(config: Path) -> list[dict[str, Any]]:
    proc = toolrelay("tools", "--config", str(config), "--json")
    assert proc.returncode == 0, proc.stderr
    tools: list[dict[str, Any]] = json.loads(proc.stdout)
    return tools


def _commands_ahead(config: str, declared: list[dict[str, Any]]) -> dict[str, list[tuple[str, ...]]]:
    """By test: its CLI commands on the four servers, to start ahead."""
    long_aliases = sorted(t["name"] for t in declared if "xxxxxxxxxx" in t["name"])
    read = ("call", "fs__read_text_file")
    return {
        "test_the_table_lists_every_tool_with_its_server": [("tools", "--config", config)],
        "test_strict_report_names_every_change_and_fallback": [
            ("tools", "--config", config, "--strict", "--report")],
        "test_a_call_reaches_the_original_tool_name_with_unchanged_arguments": [
            ("call", "host_ile__read_file", '{"path": "a/b.txt"}', "--config", config)],
        "test_the_long_names_reach_their_own_tools": [
            ("call", alias, "{}", "--config", config) for alias in long_aliases],
        "test_the_node_server_answers_through_its_alias": [
            ("call", "node_ref__read_text_file", '{"path": "notes.txt", "head": 2}', "--config", config)],
        "test_call_exit_codes_and_messages": [
            (*read, '{"path": "/etc/passwd"}', "--config", config),
            (*read, '{"path": 5}', "--config", config),
            ("call", "fs__nope", "{}", "--config", config),
            (*read, "{path}", "--config", config)],
        "test_call_arguments_nested_too_deep_are_a_usage_error": [
            (*read, "[" * 5000 + "]" * 5000, "--config", config)],
    }


@pytest.fixture(scope="module", autouse=True)
def started_ahead(request: pytest.FixtureRequest) -> Iterator[None]:
    """The selected tests' CLI commands on the four servers (about 2.5 s each, most of it
    the servers' start-up) run two at a time, started before the first test; each test
    still judges its own command's result. A command started but never asked for (its
    test's command changed) fails the module: keep the list true.

    Under ``pytest -n`` nothing is started ahead: a worker collects every test but runs
    only those the scheduler hands it, one at a time and not known in advance, so it
    cannot tell its own tests' commands from another worker's (each command then runs when
    its test asks, and the workers are the parallelism)."""
    selected = {item.name for item in request.session.items if item.module is request.module}
    if hasattr(request.config, "workerinput") or not selected & set(_commands_ahead("", [])):
        yield
        return
    config = str(request.getfixturevalue("config"))
    by_test = _commands_ahead(config, request.getfixturevalue("declared"))
    commands = [args for test, listed in by_test.items() if test in selected for args in listed]
    with ThreadPoolExecutor(max_workers=2) as pool:
        _STARTED.update({(args, None): pool.submit(_toolrelay_now, *args) for args in commands})
        yield
        unused = [key[0][:2] for key in _STARTED]
        _STARTED.clear()
    assert not unused, f"started ahead but no test asked for them: {unused}"


def test_every_alias_is_valid_and_unique(declared: list[dict[str, Any]]) -> None:
    names = [t["name"] for t in declared]
    assert all(ALIAS.match(n) for n in names), [n for n in names if not ALIAS.match(n)]
    assert len(names) == len(set(names))
    keys = {"type", "name", "description", "parameters", "strict"}
    assert all(set(t) - {"output_schema"} == keys for t in declared)
    # --structured-output auto: only a schema that says more than the text is declared (the
    # SDK's add returns {"result": int}, the reference server's read_media_file an array of
    # parts; the file servers' {"content": text} only wraps the text)
    assert [t["name"] for t in declared if "output_schema" in t] == ["node_ref__read_media_file", "sdk__add"]
    assert all(t["type"] == "function" and t["strict"] is False for t in declared)


def test_two_servers_offering_read_text_file_get_different_aliases(declared: list[dict[str, Any]]) -> None:
    names = {t["name"] for t in declared}
    assert "fs__read_text_file" in names
    assert "node_ref__read_text_file" in names  # "." mapped, the tool name kept
    assert "host_ile__read_text_file" in names


def test_the_declaration_keeps_the_rule(declared: list[dict[str, Any]]) -> None:
    nested = next(t for t in declared if t["name"] == "host_ile__nested")
    parameters = nested["parameters"]
    assert "$schema" not in parameters  # the one normalisation the API demands
    assert parameters["properties"]["options"]["properties"]["mode"]["default"] == "safe"
    assert parameters["$defs"]["point"]["required"] == ["x", "y"]


def test_the_table_lists_every_tool_with_its_server(config: Path, declared: list[dict[str, Any]]) -> None:
    proc = toolrelay("tools", "--config", str(config))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:5] == ["ALIAS", "SERVER", "TOOL", "READ-ONLY", "STRICT"]
    assert f"{len(declared)} tool(s) from 4 server(s)" in proc.stdout
    fs_row = next(line for line in lines if line.startswith("fs__read_text_file "))
    assert fs_row.split()[1:5] == ["fs", "read_text_file", "yes", "no"]


def test_strict_report_names_every_change_and_fallback(config: Path) -> None:
    proc = toolrelay("tools", "--config", str(config), "--strict", "--report")
    assert proc.returncode == 0, proc.stderr
    report = proc.stdout
    assert "fs__read_text_file  (fs/read_text_file): strict" in report
    assert "/properties/head" in report and "nullable" in report
    assert "host_ile__open_object  (host ile/open_object): non-strict (fell back:" in report


def test_a_call_reaches_the_original_tool_name_with_unchanged_arguments(config: Path) -> None:
    proc = toolrelay("call", "host_ile__read_file", '{"path": "a/b.txt"}', "--config", str(config))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"arguments": {"path": "a/b.txt"}, "tool": "read.file"}


def test_the_long_names_reach_their_own_tools(declared: list[dict[str, Any]], config: Path) -> None:
    long_aliases = sorted(t["name"] for t in declared if "xxxxxxxxxx" in t["name"])
    assert len(long_aliases) == 2 and all(len(a) <= 64 for a in long_aliases)
    reached = set()
    for alias in long_aliases:
        proc = toolrelay("call", alias, "{}", "--config", str(config))
        assert proc.returncode == 0, proc.stderr
        reached.add(json.loads(proc.stdout)["tool"])
    assert reached == {"x" * 100, "x" * 99 + "y"}


def test_the_node_server_answers_through_its_alias(config: Path) -> None:
    proc = toolrelay(
        "call", "node_ref__read_text_file", '{"path": "notes.txt", "head": 2}', "--config", str(config)
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("one\ntwo")


def test_call_exit_codes_and_messages(config: Path) -> None:
    denied = toolrelay("call", "fs__read_text_file", '{"path": "/etc/passwd"}', "--config", str(config))
    assert denied.returncode == 1
    assert denied.stdout.strip() == "Access denied - path outside allowed directories"
    assert "the tool reported an error (isError: true" in denied.stderr
    rejected = toolrelay("call", "fs__read_text_file", '{"path": 5}', "--config", str(config))
    assert rejected.returncode == 1
    assert "invalid arguments" in rejected.stderr and "path" in rejected.stderr
    unknown = toolrelay("call", "fs__nope", "{}", "--config", str(config))
    assert unknown.returncode == 2
    assert "toolrelay call: unknown tool 'fs__nope'; available tools:" in unknown.stderr
    not_json = toolrelay("call", "fs__read_text_file", "{path}", "--config", str(config))
    assert not_json.returncode == 2 and "arguments must be JSON text" in not_json.stderr


def test_call_arguments_nested_too_deep_are_a_usage_error(config: Path) -> None:
    deep = toolrelay("call", "fs__read_text_file", "[" * 5000 + "]" * 5000, "--config", str(config))
    assert deep.returncode == 2 and "Traceback" not in deep.stderr
    assert "arguments must be JSON text" in deep.stderr and "nested deeper than 512 levels" in deep.stderr


def test_wire_shows_the_exact_json_rpc_lines_with_ids(workspace: Path) -> None:
    proc = toolrelay(
        "call", "fs__read_text_file", '{"path": "notes.txt", "head": 1}', "--wire", cwd=workspace
    )
    assert proc.returncode == 0, proc.stderr
    wire = [line for line in proc.stdout.splitlines() if line.startswith((">> ", "<< "))]
    assert all(line.startswith((">> fs#1 ", "<< fs#1 ")) for line in wire)
    messages = [(line[:2], json.loads(line.split(" ", 2)[2])) for line in wire]
    first, retried = [m for way, m in messages if way == ">>" and m.get("method") == "tools/call"]
    [response] = [m for way, m in messages if way == "<<" and m.get("id") == retried["id"]]
    assert response["result"]["content"] == [{"type": "text", "text": "one\n"}]
    # before reading, the file server (2026-07-28) asked for toolrelay's roots with an
    # input_required answer; the call went again with them: the directory it ran in
    [asked] = [m for way, m in messages if way == "<<" and m.get("id") == first["id"]]
    assert asked["result"]["resultType"] == "input_required"
    given = retried["params"]["inputResponses"]["roots"]["roots"]
    assert given == [{"uri": workspace.resolve().as_uri(), "name": workspace.name}]


def test_a_transport_failure_exits_3_with_the_servers_words(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "broken": {
                        "command": sys.executable,
                        "args": ["-c", "import sys; sys.stderr.write('no config found\\n'); sys.exit(4)"],
                    }
                }
            }
        )
    )
    proc = toolrelay("tools", "--config", str(config))
    assert proc.returncode == 3
    assert "server broken exited (code 4): no config found" in proc.stderr


def test_a_bad_config_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text('{"mcpServers": {"x": {"command": 5}}}')
    proc = toolrelay("tools", "--config", str(config))
    assert proc.returncode == 2
    assert str(config) in proc.stderr


def test_library_connect_declares_and_calls(workspace: Path) -> None:
    fs = ServerConfig(
        name="fs",
        transport="stdio",
        command=sys.executable,
        args=("-m", "toolrelay", "files", str(workspace)),
        roots=(str(workspace),),  # else toolrelay offers the cwd, outside what it serves
    )

    async def main() -> None:
        async with connect([fs], strict=True) as catalog:
            tools = catalog.declarations()
            assert {t["name"] for t in tools} >= {"fs__read_text_file", "fs__list_directory"}
            outcome = await catalog.call(
                "fs__read_text_file", '{"path": "notes.txt", "head": null, "tail": 1}'
            )
            assert outcome.status == "ok" and outcome.result is not None
            assert outcome.result["content"][0]["text"] == "three\n"
            assert outcome.request is not None
            assert outcome.request["params"]["arguments"] == {"path": "notes.txt", "tail": 1}
            assert outcome.response is not None and outcome.response["id"] == outcome.mcp_id
            bad = await catalog.call("fs__read_text_file", '{"path": "notes.txt", "head": NaN}')
            assert bad.status == "invalid_arguments" and "NaN" in bad.message

    asyncio.run(main())


def test_a_server_that_fails_to_start_is_left_out_and_reported(workspace: Path) -> None:
    fs = ServerConfig(
        name="fs",
        transport="stdio",
        command=sys.executable,
        args=("-m", "toolrelay", "files", str(workspace)),
        roots=(str(workspace),),  # else toolrelay offers the cwd, outside what it serves
    )
    broken = ServerConfig(
        name="broken",
        transport="stdio",
        command=sys.executable,
        args=("-c", "import sys; sys.stderr.write('missing API token\\n'); sys.exit(2)"),
    )
    notices: list[str] = []

    async def main() -> None:
        events = EventStream()
        events.subscribe(lambda e: notices.append(e.to_record()["text"]) if isinstance(e, Notice) else None)
        async with connect([fs, broken], events=events) as catalog:
            assert sorted(catalog.unavailable) == ["broken"]
            assert catalog.available == ["fs"]
            assert {r.server for r in catalog.routes} == {"fs"}
            assert catalog.servers_named_by("broken__anything") == ["broken"]
            assert catalog.servers_named_by("fs__read_text_file") == ["fs"]
            assert catalog.servers_named_by("nobody__x") == []
            outcome = await catalog.call("broken__anything", "{}")
            assert outcome.status == "unknown_tool"

    asyncio.run(main())
    assert notices == ["server broken unavailable: server broken exited (code 2): missing API token"]
