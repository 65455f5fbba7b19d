"""Small messages that must point the right way: server versions, call failures by their
kind, JSON-RPC error data, a subcommand's own usage, one wording for a missing file."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from cli_helpers import config, honest_server, make_workspace, toolrelay

from toolrelay.cli.progress import ProgressPrinter
from toolrelay.events import ServerReady


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "workspace")


def connected_line(server_info: dict[str, object]) -> str:
    shown = io.StringIO()
    ProgressPrinter(shown)(ServerReady(server="sdk", connection=1, protocol_version="2025-06-18",
                                       server_info=server_info, capabilities={}))
    return shown.getvalue()


def test_a_server_without_a_version_is_shown_without_a_gap() -> None:
    unversioned = "· connected sdk (interop-sdk, MCP 2025-06-18)\n"
    assert connected_line({"name": "interop-sdk", "version": ""}) == unversioned
    assert connected_line({"name": "interop-sdk"}) == unversioned
    versioned = "· connected sdk (files 1.2, MCP 2025-06-18)\n"
    assert connected_line({"name": "files", "version": "1.2"}) == versioned


def test_a_call_timeout_is_called_a_timeout(workspace: Path) -> None:
    mcp = config(workspace / "mcp.json", honest=honest_server(shutdown_grace=0.2))
    proc = toolrelay("call", "honest__sleep", '{"seconds": 30}', "--timeout", "0.5", "--config", str(mcp),
                     cwd=workspace)
    assert proc.returncode == 3
    assert proc.stderr == (
        "toolrelay call: timeout: tools/call request 4 got no answer within 0.5 s (a cancellation was sent)\n"
    )


def test_call_shows_the_json_rpc_error_data(workspace: Path) -> None:
    mcp = config(workspace / "mcp.json", honest=honest_server())
    proc = toolrelay("call", "honest__reject", "{}", "--config", str(mcp), cwd=workspace)
    assert proc.returncode == 3
    assert proc.stderr == (
        'toolrelay call: protocol error -32602: reject refuses every call (data: {"why": "by design"})\n'
    )


def test_a_bad_option_prints_the_subcommands_usage(workspace: Path) -> None:
    proc = toolrelay("tools", "--bogus", cwd=workspace)
    assert proc.returncode == 2
    assert proc.stderr == ("usage: toolrelay tools [-h] [options] (see toolrelay tools --help)\n"
                           "toolrelay tools: error: unrecognized arguments: --bogus\n")
    top = toolrelay("--bogus", cwd=workspace)
    assert top.returncode == 2
    assert top.stderr.startswith("usage: toolrelay [-h] [options] COMMAND (see toolrelay --help)\n")


def test_a_missing_file_is_said_the_same_way_for_config_and_script(workspace: Path) -> None:
    missing_config = toolrelay("tools", "--config", "nope.json", cwd=workspace)
    missing_script = toolrelay("run", "x", "--model", "offline", "--script", "nope.json", cwd=workspace)
    assert missing_config.returncode == missing_script.returncode == 2
    said = "No such file or directory"
    assert missing_config.stderr == f"toolrelay tools: error: cannot read config nope.json: {said}\n"
    assert missing_script.stderr == f"toolrelay run: error: cannot read script nope.json: {said}\n"
