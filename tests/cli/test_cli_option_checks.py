"""Options and files are checked before any server or model starts: a usage error is the
first and only thing the user reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import config, make_workspace, missing_command, toolrelay


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "workspace")


def test_a_missing_script_is_said_before_the_file_server_notice(workspace: Path) -> None:
    proc = toolrelay("run", "x", "--model", "offline", "--script", "missing.json", cwd=workspace)
    assert proc.returncode == 2
    assert proc.stderr == "toolrelay run: error: cannot read script missing.json: No such file or directory\n"


def test_a_missing_script_is_said_before_any_server_starts(workspace: Path) -> None:
    mcp = config(workspace / "mcp.json", gone=missing_command())
    proc = toolrelay("run", "x", "--model", "offline", "--script", "missing.json", "--config", str(mcp),
                     cwd=workspace)
    assert proc.returncode == 2
    assert proc.stderr == "toolrelay run: error: cannot read script missing.json: No such file or directory\n"


def test_a_missing_key_is_said_before_the_file_server_notice(workspace: Path) -> None:
    proc = toolrelay("run", "x", "--model", "gpt-4.1", cwd=workspace)
    assert proc.returncode == 2
    assert proc.stderr.startswith("toolrelay run: error: no API key for ")
    assert proc.stderr.count("\n") == 1


@pytest.mark.parametrize("option", ["--timeout", "--call-timeout"])
@pytest.mark.parametrize("value", ["0", "-1", "nan", "soon"])
def test_run_timeouts_must_be_positive_seconds(workspace: Path, option: str, value: str) -> None:
    proc = toolrelay("run", "x", "--model", "offline", option, value, cwd=workspace)
    assert proc.returncode == 2
    said = f"toolrelay run: error: argument {option}: must be a number of seconds above 0, not {value!r}"
    assert said in proc.stderr
    assert "no --config" not in proc.stderr and "turn 1" not in proc.stderr


def test_call_timeout_must_be_positive_seconds(workspace: Path) -> None:
    proc = toolrelay("call", "fs__read_text_file", '{"path": "notes.txt"}', "--timeout", "0", cwd=workspace)
    assert proc.returncode == 2
    said = "toolrelay call: error: argument --timeout: must be a number of seconds above 0, not '0'"
    assert said in proc.stderr


def test_demo_checks_its_folder_before_it_announces_the_run(workspace: Path) -> None:
    (workspace / "a.txt").write_text("x")
    proc = toolrelay("demo", "--out", "a.txt/demo", cwd=workspace)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (
        "toolrelay demo: error: cannot write the demo folder a.txt/demo: a.txt is a file, not a folder\n"
    )


def test_demo_checks_the_model_key_before_it_announces_the_run(workspace: Path) -> None:
    proc = toolrelay("demo", "--model", "gpt-4.1", "--out", "d", cwd=workspace)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("toolrelay demo: error: no API key for ")


REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]  # in date order


def test_protocol_versions_are_listed_auto_first_then_in_date_order(workspace: Path) -> None:
    shown = " ".join(toolrelay("tools", "--help", cwd=workspace).stdout.split())
    assert "protocolVersion: auto (default: probe, " in shown
    assert f"or one to pin ({', '.join(REVISIONS)})" in shown
    refused = toolrelay("tools", "--protocol-version", "2027", cwd=workspace)
    assert refused.returncode == 2
    choices = ", ".join(repr(revision) for revision in ["auto", *REVISIONS])
    assert f"invalid choice: '2027' (choose from {choices})" in refused.stderr
    pinned = config(workspace / "mcp.json", x={"command": "true", "toolrelay": {"protocolVersion": "2027"}})
    in_config = toolrelay("tools", "--config", str(pinned), cwd=workspace)
    assert in_config.returncode == 2
    assert f"must be one of auto, {', '.join(REVISIONS)}, got '2027'" in in_config.stderr
