"""What a server process gets: a minimal environment, the variables its config names (its
envFile read as python-dotenv reads it), ``${input:ID}`` answers, a log file."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from client_helpers import Recorder, open_connection, run, stdio_config

from toolrelay.client.config import load_config
from toolrelay.client.connection import Connection
from toolrelay.client.environment import child_environment, parse_dotenv, redact
from toolrelay.client.stderr_log import default_log_dir
from toolrelay.errors import ConfigError
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
    connection = Connection(stdio_config("minimal_echo_server.py", name="my/server"), EventStream())
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


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("A='x y' # note", "x y"),  # a comment after a quoted value is not part of it
        ('A="x y" # note', "x y"),
        ("A=x y # note", "x y"),
        ("A=x#y", "x#y"),  # '#' starts a comment only after a space
        ("export A = two ", "two"),
        ('A="a\\nb\\t\\"c\\""', 'a\nb\t"c"'),  # double quotes read escapes
        ("A='a\\nb'", "a\\nb"),  # single quotes keep every character
        ("A=", ""),
        ("A=''", ""),
        ('A=""', ""),
        ('A="two\nlines"', "two\nlines"),  # a quoted value may span lines
        ("A=${HOME}/x", "${HOME}/x"),  # not expanded, as in VS Code's envFile
        ('A="${UNSET:-fallback}"', "${UNSET:-fallback}"),
    ],
)
def test_dotenv_values_are_read_as_python_dotenv_reads_them(line: str, value: str) -> None:
    assert parse_dotenv(f"# a comment line\n{line}\n", "f.env") == {"A": value}


def test_a_name_without_equals_sets_nothing() -> None:
    assert parse_dotenv("A=1\nLONELY\nB=2\n", "f.env") == {"A": "1", "B": "2"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('A=1\nB="unterminated\nC=3\n', "f.env, line 2: expected KEY=value, got 'B=\"unterminated' "
         "(the double quote is not closed)"),
        ("A='open\n", "f.env, line 1: expected KEY=value, got \"A='open\" (the single quote is not closed)"),
        ('A="x" junk\n', "f.env, line 1: expected KEY=value, got 'A=\"x\" junk'"),
        ("GOOD=1\nnot a pair\n", "f.env, line 2: expected KEY=value, got 'not a pair'"),
    ],
)
def test_a_statement_dotenv_cannot_parse_names_its_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_dotenv(text, "f.env")
    assert str(caught.value) == message


def test_env_file_values_reach_the_server_config(tmp_path: Path) -> None:
    (tmp_path / "server.env").write_text("export TOKEN='x y' # a note\nRAW=${HOME}\nPLAIN=from-file\n")
    config = tmp_path / "mcp.json"
    entry = '{"command": "x", "envFile": "server.env", "env": {"PLAIN": "from-env"}}'
    config.write_text(f'{{"mcpServers": {{"s": {entry}}}}}')
    (server,) = load_config(config, environ={"HOME": "/home/someone"})
    assert dict(server.env) == {"TOKEN": "x y", "RAW": "${HOME}", "PLAIN": "from-env"}  # env wins


@pytest.mark.parametrize(
    "variable", ["TOOLRELAY_INPUT_apiKey", "TOOLRELAY_INPUT_APIKEY"], ids=["as written", "upper case"]
)
def test_input_answered_by_the_variable_named_as_written_or_upper_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO())  # not a terminal: nobody to ask
    config = tmp_path / "mcp.json"
    config.write_text('{"servers": {"s": {"command": "x", "env": {"K": "${input:apiKey}"}}}}')
    (server,) = load_config(config, environ={variable: "answer-1234"})
    assert dict(server.env) == {"K": "answer-1234"}


def test_input_named_as_written_wins_over_upper_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    config = tmp_path / "mcp.json"
    config.write_text('{"servers": {"s": {"command": "x", "env": {"K": "${input:api-key}"}}}}')
    environ = {"TOOLRELAY_INPUT_api-key": "as-written", "TOOLRELAY_INPUT_API_KEY": "upper"}
    (server,) = load_config(config, environ=environ)
    assert dict(server.env) == {"K": "as-written"}
