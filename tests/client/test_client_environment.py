"""What a server process gets: a minimal environment, the variables its config names, a log file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from client_helpers import Recorder, open_connection, run, stdio_config

from toolrelay.client.connection import Connection
from toolrelay.client.environment import child_environment, redact
from toolrelay.client.serverlog import default_log_dir
from toolrelay.events import EventStream


def test_child_sees_only_the_minimal_environment_and_named_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    monkeypatch.setenv("TOOLRELAY_TOKEN", "relay-must-not-leak")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-must-not-leak")
    monkeypatch.setenv("LC_TIME", "C")
    config = stdio_config("toolbox_server.py", env={"SERVICE_TOKEN": "named-in-config"})

    async def scenario() -> dict[str, str]:
        async with open_connection(config, tmp_path) as conn:
            exchange = await conn.call_tool("env", {})
            return json.loads(exchange.raise_for_error()["content"][0]["text"])  # type: ignore[no-any-return]

    seen = run(scenario())
    assert seen["SERVICE_TOKEN"] == "named-in-config"
    assert seen["PATH"] and seen["HOME"] and seen["LC_TIME"] == "C"
    for secret in ("OPENAI_API_KEY", "TOOLRELAY_TOKEN", "AWS_SECRET_ACCESS_KEY"):
        assert secret not in seen
    assert "must-not-leak" not in json.dumps(seen)


def test_child_environment_rule() -> None:
    base = {
        "PATH": "/bin",
        "HOME": "/h",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "TZ": "UTC",
        "TMPDIR": "/t",
        "OPENAI_API_KEY": "x",
        "GITHUB_TOKEN": "y",
        "PYTHONPATH": "/p",
    }
    assert child_environment({"API_KEY": "named", "PATH": "/custom"}, base) == {
        "PATH": "/custom",
        "HOME": "/h",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "TZ": "UTC",
        "TMPDIR": "/t",
        "API_KEY": "named",
    }


def test_stderr_goes_to_the_log_file_with_a_header_per_start(tmp_path: Path) -> None:
    config = stdio_config(
        "toolbox_server.py", "--stderr", "server says hello on stderr", env={"TOKEN": "hide-this-token"}
    )

    async def scenario() -> tuple[Path | None, str]:
        async with open_connection(config, tmp_path) as conn:
            await conn.call_tool("echo", {"text": "x"})  # stderr was written before this answer
            return conn.log_path, conn.stderr_tail()

    log_path, tail = run(scenario())
    assert log_path == tmp_path / "t.log"
    assert tail == "server says hello on stderr"
    lines = log_path.read_text().splitlines()
    assert lines[0].startswith("[toolrelay ")
    assert lines[0].endswith(f"starting server t (connection 1): {config.target}")
    assert lines[1] == "server says hello on stderr"
    assert "hide-this-token" not in log_path.read_text()
    run(scenario())  # appended, not replaced
    assert log_path.read_text().count("starting server t (connection 1)") == 2


def test_log_dir_comes_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLRELAY_LOG_DIR", str(tmp_path / "logs"))
    assert default_log_dir() == tmp_path / "logs"
    connection = Connection(stdio_config("minimal_server.py", name="my/server"), EventStream())
    assert connection.log_path == tmp_path / "logs" / "my_server.log"
    monkeypatch.delenv("TOOLRELAY_LOG_DIR")
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    assert default_log_dir() == Path.home() / ".local" / "state" / "toolrelay" / "logs"


def test_unwritable_log_dir_keeps_the_tail_in_memory(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    recorder = Recorder()

    async def scenario() -> str:
        async with open_connection(
            stdio_config("toolbox_server.py", "--stderr", "still kept"), blocked / "x", recorder
        ) as conn:
            await conn.call_tool("echo", {"text": "x"})
            return conn.stderr_tail()

    assert run(scenario()) == "still kept"
    assert any(
        n.startswith("server t: cannot write server log") and n.endswith("stderr kept in memory only")
        for n in recorder.notices()
    )


def test_redact() -> None:
    assert (
        redact("Bearer abc12345 and abc12345", frozenset({"abc12345", "1"}))
        == "Bearer [redacted] and [redacted]"
    )
