"""Servers that cannot start or cannot be reached, as the CLI reports them: counted as
unavailable, named with their reason, and each failure said once."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import (
    config,
    crashing_at_start,
    file_server,
    honest_server,
    make_workspace,
    missing_command,
    refused_url,
    toolrelay,
    write_json,
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "workspace")


def test_tools_counts_the_connected_servers_and_names_the_unavailable_ones(workspace: Path) -> None:
    servers = {"fs": file_server(workspace), "gone": missing_command(), "down": refused_url()}
    proc = toolrelay("tools", "--config", str(config(workspace / "mcp.json", **servers)), cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert "\n6 tool(s) from 1 server(s); unavailable: down, gone\n" in proc.stdout
    gone = ("! server gone unavailable: cannot start server gone: "
            "command '/nonexistent/toolrelay-test-server' not found")
    assert proc.stderr.count(gone) == 1
    assert proc.stderr.count("! server down unavailable: cannot connect to server down at ") == 1
    assert proc.stderr.count("connection refused") == 1


def test_tools_exits_3_when_no_server_is_available_and_says_each_reason_once(workspace: Path) -> None:
    mcp = config(workspace / "mcp.json", gone=missing_command(), down=refused_url())
    proc = toolrelay("tools", "--config", str(mcp), cwd=workspace)
    assert proc.returncode == 3
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines[0] == "toolrelay tools: error: no server is available:"
    assert lines[1].startswith("  server gone unavailable: cannot start server gone: command ")
    assert lines[2].startswith("  server down unavailable: cannot connect to server down at ")
    assert len(lines) == 3


def test_a_server_that_crashes_at_start_is_reported_once(workspace: Path) -> None:
    mcp = config(workspace / "mcp.json", broken=crashing_at_start("missing API token"))
    proc = toolrelay("tools", "--config", str(mcp), cwd=workspace)
    assert proc.returncode == 3
    assert proc.stderr == (
        "toolrelay tools: error: server broken unavailable: "
        "server broken exited (code 2): missing API token\n"
    )


def test_call_of_an_unavailable_servers_tool_names_the_server_and_why(workspace: Path) -> None:
    mcp = config(workspace / "mcp.json", fs=file_server(workspace), gone=missing_command())
    proc = toolrelay("call", "gone__read", "{}", "--config", str(mcp), cwd=workspace)
    assert proc.returncode == 3
    assert "unknown tool" not in proc.stderr
    assert proc.stderr == (
        "toolrelay call: error: server gone unavailable: cannot start server gone: "
        "command '/nonexistent/toolrelay-test-server' not found\n"
    )


def test_call_finds_the_server_of_an_alias_whose_name_was_mapped(workspace: Path) -> None:
    servers = {"fs": file_server(workspace), "my.box": crashing_at_start("no token")}
    mcp = config(workspace / "mcp.json", **servers)
    proc = toolrelay("call", "my_box__echo", "{}", "--config", str(mcp), cwd=workspace)
    assert proc.returncode == 3
    assert proc.stderr == (
        "toolrelay call: error: server my.box unavailable: server my.box exited (code 2): no token\n"
    )


def test_call_when_the_only_server_is_unavailable(workspace: Path) -> None:
    mcp = config(workspace / "mcp.json", gone=missing_command())
    proc = toolrelay("call", "gone__read", "{}", "--config", str(mcp), cwd=workspace)
    assert proc.returncode == 3
    assert proc.stderr.startswith("toolrelay call: error: server gone unavailable: cannot start server gone")
    assert proc.stderr.count("\n") == 1


def test_a_server_crashing_in_a_call_is_said_once(workspace: Path) -> None:
    mcp = config(workspace / "mcp.json", honest=honest_server())
    proc = toolrelay("call", "honest__crash", "{}", "--config", str(mcp), cwd=workspace)
    assert proc.returncode == 3
    assert proc.stderr.count("honest_server: crashing on purpose") == 1, proc.stderr


def test_a_server_crashing_in_a_run_is_said_once(workspace: Path) -> None:
    mcp = config(workspace / "mcp.json", honest=honest_server())
    crash = {"name": "honest__crash", "arguments": {}}
    script = write_json(workspace / "s.json", {"turns": [{"calls": [crash]}]})
    args = ("run", "x", "--model", "offline", "--script", str(script), "--config", str(mcp))
    shown = toolrelay(*args, cwd=workspace)
    assert shown.returncode == 0, shown.stderr
    assert shown.stderr.count("honest_server: crashing on purpose") == 1, shown.stderr
    assert "! server honest exited (code 3): honest_server: crashing on purpose" in shown.stderr
    assert "honest__crash → honest/crash · mcp id 4 · " in shown.stderr
    assert "toolrelay run: 1 of 1 call(s) failed (see the call lines above)" in shown.stderr
    quiet = toolrelay(*args, "--quiet", cwd=workspace)
    assert quiet.stderr == (
        "toolrelay run: 1 of 1 call(s) failed:\n"
        "  call_offline_0001 honest__crash: transport error: server honest exited (code 3): "
        "honest_server: crashing on purpose\n"
    )


def test_protocol_version_flag_wins_over_the_config_pin(workspace: Path) -> None:
    pinned = {**file_server(workspace), "toolrelay": {"protocolVersion": "2026-07-28"}}
    mcp = config(workspace / "mcp.json", fs=pinned)
    args = ("run", "Read the first 3 lines of notes.txt", "--model", "offline", "--config", str(mcp))
    by_config = toolrelay(*args, cwd=workspace)
    assert by_config.returncode == 0, by_config.stderr
    assert ", MCP 2026-07-28)\n" in by_config.stderr
    by_flag = toolrelay(*args, "--protocol-version", "2025-06-18", cwd=workspace)
    assert by_flag.returncode == 0, by_flag.stderr
    assert ", MCP 2025-06-18)\n" in by_flag.stderr and "line 3" in by_flag.stdout
