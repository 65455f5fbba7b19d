"""Config files users already have, read unchanged: shapes, expansion, and every error message."""

from __future__ import annotations

import io
import os
import pty
import sys
from pathlib import Path

import pytest
from client_helpers import HERE, Recorder

from toolrelay.client.config import (
    ServerConfig,
    builtin_file_server,
    load_config,
    read_config,
    with_cli_settings,
)
from toolrelay.client.environment import parse_dotenv
from toolrelay.errors import ConfigError

CONFIGS = HERE / "configs"
HOME = str(Path.home())


def write(tmp_path: Path, text: str, name: str = "mcp.json") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def config_error(path: Path, environ: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as caught:
        read_config(path, environ=environ or {})
    assert caught.value.exit_code == 2
    return str(caught.value)


# -- the formats -------------------------------------------------------------------------


def test_claude_desktop_config() -> None:
    servers = load_config(CONFIGS / "claude_desktop_config.json", environ={})
    fs, weather = servers
    assert (fs.name, fs.transport, fs.command) == ("filesystem", "stdio", "npx")
    assert fs.args == (
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/Users/me/Desktop",
        "/Users/me/Downloads",
    )
    assert dict(fs.env) == {"LOG_LEVEL": "info", "API_KEY": "sk-desktop-12345"}
    assert fs.secrets == {"info", "sk-desktop-12345"}
    assert (fs.call_timeout, fs.request_timeout, fs.max_message_bytes, fs.allow, fs.deny) == (
        60.0,
        30.0,
        4 * 1024 * 1024,
        None,
        (),
    )
    assert (weather.command, weather.args, dict(weather.env), weather.cwd) == (
        "uvx",
        ("mcp-weather", "--units", "metric"),
        {},
        None,
    )


def test_cursor_config_with_env_interpolation_and_env_file() -> None:
    environ = {"CURSOR_TEST_KEY": "key-from-environment", "CURSOR_TEST_TOKEN": "tok-123456"}
    local, remote = load_config(CONFIGS / "cursor" / ".cursor" / "mcp.json", environ=environ)
    workspace = str(CONFIGS / "cursor")
    assert local.command == f"{HOME}/bin/mcp-local"
    assert local.args == ("--root", f"{workspace}/src")
    assert dict(local.env) == {  # env wins over envFile
        "DB_URL": "postgres://localhost/dev",
        "API_KEY": "key-from-environment",
        "GREETING": "hello world",
    }
    assert (remote.transport, remote.url) == ("http", "https://api.example.com/mcp")
    assert dict(remote.headers) == {"Authorization": "Bearer tok-123456"}
    assert "Bearer tok-123456" in remote.secrets


def test_vscode_config_jsonc_inputs_and_unsupported_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO())  # not a terminal: nobody to ask
    recorder = Recorder()
    environ = {"TOOLRELAY_INPUT_API_TOKEN": "vs-token-987"}
    local, remote = load_config(
        CONFIGS / "vscode" / ".vscode" / "mcp.json", events=recorder.events, environ=environ
    )
    workspace = CONFIGS / "vscode"
    assert local.args == ("server.py", "--region", "eu-west")  # the input's default (no terminal)
    assert dict(local.env) == {"API_KEY": "vs-token-987"}
    assert local.cwd == str(workspace / "tools")
    assert dict(remote.headers) == {"Authorization": "Bearer vs-token-987"}
    assert (remote.call_timeout, remote.allow, remote.deny) == (120.0, ("read_*",), ("read_secret",))
    assert "vs-token-987" in remote.secrets and "vs-token-987" in local.secrets
    path = CONFIGS / "vscode" / ".vscode" / "mcp.json"
    assert recorder.notices() == [
        f"{path}: server 'legacy' skipped: type \"sse\" (the deprecated HTTP+SSE transport) is not "
        'supported; use the server\'s Streamable HTTP endpoint with "type": "http"',
        f"{path}: server 'socket' skipped: unix:// URLs are not supported (toolrelay speaks Streamable HTTP "
        "over http(s))",
    ]


def test_claude_code_config_with_defaults_and_disabled_entries() -> None:
    loaded = read_config(CONFIGS / "claude_code" / ".mcp.json", environ={"CC_TEST_KEY": "cc-key-55"})
    local, remote = loaded.servers
    assert dict(local.env) == {"KEY": "cc-key-55"}
    assert remote.url == "https://api.example.com/mcp"
    assert dict(remote.headers) == {"Authorization": "Bearer cc-key-55"}
    path = CONFIGS / "claude_code" / ".mcp.json"
    assert loaded.skipped == [f"{path}: server 'off' skipped: it is disabled in the config"]
    base = read_config(path, environ={"CC_TEST_KEY": "k", "CC_TEST_BASE": "http://127.0.0.1:9"}).servers[1]
    assert base.url == "http://127.0.0.1:9/mcp"


def test_inspector_config_streamable_http_and_numbers() -> None:
    everything, stdio_one = load_config(CONFIGS / "inspector.json", environ={})
    assert (everything.transport, everything.url) == ("http", "http://localhost:3001/mcp")
    assert dict(stdio_one.env) == {"PORT": "3000"}


def test_toolrelay_options_and_filters(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '{"mcpServers": {"s": {"command": "x", "toolrelay": {"timeout": 5, '
        '"requestTimeout": 2.5, "maxMessageBytes": 1048576, "deny": ["write_*"], "shutdownGrace": 0.5}}, '
        '"g": {"command": "y", "includeTools": ["a", "b"], "excludeTools": ["b"]}}}',
    )
    s, g = load_config(path, environ={})
    assert (s.call_timeout, s.request_timeout, s.max_message_bytes) == (5.0, 2.5, 1048576)
    assert (s.shutdown_grace, g.shutdown_grace) == (0.5, 2.0)
    assert (s.allows("read_file"), s.allows("write_file")) == (True, False)
    assert (g.allows("a"), g.allows("b"), g.allows("c")) == (True, False, False)


def test_secrets_stay_out_of_repr_and_target() -> None:
    config = ServerConfig(
        name="s",
        transport="stdio",
        command="bridge",
        args=("--header", "Authorization:Bearer abcdef123"),
        env={"TOKEN": "Bearer abcdef123"},
    )
    assert "abcdef123" not in repr(config)
    assert config.target == "bridge --header 'Authorization:[redacted]'"


def test_builtin_file_server(tmp_path: Path) -> None:
    config = builtin_file_server(tmp_path)
    assert (config.name, config.transport, config.command) == ("fs", "stdio", sys.executable)
    assert config.args == ("-m", "toolrelay", "files", str(tmp_path))


def test_input_prompted_on_a_terminal_with_getpass(tmp_path: Path) -> None:
    """A real pseudo-terminal: the password is asked for, not echoed, and used."""
    path = write(
        tmp_path,
        '{"inputs": [{"id": "tok", "description": "Your token", "password": true}], '
        '"servers": {"s": {"command": "x", "env": {"T": "${input:tok}"}}}}',
    )
    script = (
        "from toolrelay.client.config import load_config; import sys; "
        f"print('ENV=' + load_config({str(path)!r})[0].env['T'])"
    )
    pid, fd = pty.fork()
    if pid == 0:  # the child: toolrelay loading the config on a terminal
        os.execv(sys.executable, [sys.executable, "-c", script])
    output = b""
    while b"Your token: " not in output:
        output += os.read(fd, 1024)
    os.write(fd, b"typed-secret-42\n")
    while True:
        try:
            chunk = os.read(fd, 1024)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    text = output.decode()
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert "ENV=typed-secret-42" in text
    assert text.count("typed-secret-42") == 1  # not echoed while typed


def test_dotenv_format() -> None:
    assert parse_dotenv("A=1\n# c\nexport B = two \nC=\"x\\ny\"\nD='$raw'\nE=v # note\n", "f") == {
        "A": "1",
        "B": "two",
        "C": "x\ny",
        "D": "$raw",
        "E": "v",
    }
    with pytest.raises(ConfigError) as caught:
        parse_dotenv("GOOD=1\nnot a pair\n", "f.env")
    assert str(caught.value) == "f.env, line 2: expected KEY=value, got 'not a pair'"


# -- errors ------------------------------------------------------------------------------


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    assert config_error(missing) == f"cannot read config {missing}: No such file or directory"
    assert config_error(tmp_path) == f"cannot read config {tmp_path}: it is a directory"
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe{")
    assert config_error(binary).startswith(f"cannot read config {binary}: not UTF-8 text")


def test_malformed_json_names_line_and_column(tmp_path: Path) -> None:
    path = write(
        tmp_path, '{\n  // fine\n  "mcpServers": {\n    "a": {"command": "x"}\n    "b": {}\n  }\n}\n'
    )
    assert config_error(path) == f"{path}: invalid JSON at line 5, column 5: Expecting ',' delimiter"


def test_a_config_nested_too_deep_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{\n  // deep\n  "mcpServers": ' + "[" * 5000 + "]" * 5000 + "\n}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ={})
    assert str(caught.value) == f"{path}: invalid JSON at line 3, column 528: nested deeper than 512 levels"


def test_roots_are_absolute_against_the_project_folder_or_false(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '{"mcpServers": {"a": {"command": "x", "toolrelay": {"roots": ["docs", "~/notes", "${env:DATA}"]}}, '
        '"b": {"command": "y", "toolrelay": {"roots": false}}, "c": {"command": "z"}}}',
        name=".vscode/mcp.json",
    )
    a, b, c = load_config(path, environ={"DATA": "/srv/data"})
    assert a.roots == (str(tmp_path / "docs"), f"{HOME}/notes", "/srv/data")
    assert (a.offer_roots, b.offer_roots, b.roots) == (True, False, None)
    assert (c.offer_roots, c.roots) == (True, None)  # none named: no roots declared


def test_root_flags_name_the_roots_of_every_server_but_those_that_refuse_roots(tmp_path: Path) -> None:
    path = write(tmp_path, '{"mcpServers": {"a": {"command": "x", "toolrelay": {"roots": ["docs"]}}, '
                           '"b": {"command": "y", "toolrelay": {"roots": false}}, "c": {"command": "z"}}}')
    servers = [*load_config(path, environ={}), builtin_file_server(tmp_path / "served")]
    a, b, c, fs = with_cli_settings(servers, roots=[tmp_path / "one", "~/two"])
    assert a.roots == c.roots == (str(tmp_path / "one"), f"{HOME}/two")  # over a's own
    assert (b.offer_roots, b.roots) == (False, None)
    assert fs.roots == (str(tmp_path / "served"),)  # the built-in file server keeps what it serves
    assert with_cli_settings(servers) == servers


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[]", "expected a JSON object at the top level"),
        (
            '{"tools": {}}',
            'no servers: expected an "mcpServers" object (Claude Desktop, Cursor, Claude Code) '
            'or a "servers" object (VS Code)',
        ),
        ('{"mcpServers": []}', '"mcpServers" must be an object of servers by name'),
        ('{"mcpServers": {}}', "defines no servers"),
        (
            '{"mcpServers": {"a": {"command": "x"}}, "servers": {"a": {"command": "y"}}}',
            "server 'a' is defined twice",
        ),
        ('{"mcpServers": {"a": "npx server"}}', "server 'a': expected an object, got a string"),
        (
            '{"mcpServers": {"a": {"command": "x", "url": "http://h/mcp"}}}',
            'server \'a\': has both "command" and "url"; add "type": "stdio" or "http"',
        ),
        (
            '{"mcpServers": {"a": {"args": []}}}',
            'server \'a\': needs "command" (a stdio server) or "url" (an HTTP server)',
        ),
        (
            '{"mcpServers": {"a": {"command": "x", "args": "--flag"}}}',
            "server 'a': \"args\" must be an array of strings",
        ),
        (
            '{"mcpServers": {"a": {"command": "x", "env": {"K": null}}}}',
            "server 'a': \"env.K\" must be a string, got null",
        ),
        (
            '{"mcpServers": {"a": {"url": "ftp://h/x"}}}',
            "server 'a': \"url\" must be an http:// or https:// URL, got 'ftp://h/x'",
        ),
        (
            '{"mcpServers": {"a": {"command": "x", "toolrelay": {"timout": 3}}}}',
            "server 'a': unknown key \"toolrelay.timout\" "
            "(known: allow, alwaysLoad, deny, isolate, logLevel, maxCallTime, maxMessageBytes, "
            "maxSamplingPerCall, oauth, pins, protocolVersion, requestTimeout, roots, shutdownGrace, "
            "timeout)",
        ),
        (
            '{"mcpServers": {"a": {"command": "x", "toolrelay": {"timeout": 0}}}}',
            "server 'a', toolrelay.timeout: must be a positive number of seconds, got 0",
        ),
        (
            '{"mcpServers": {"a": {"command": "x", "toolrelay": {"shutdownGrace": "soon"}}}}',
            "server 'a', toolrelay.shutdownGrace: must be a positive number of seconds, got 'soon'",
        ),
        (
            '{"mcpServers": {"a": {"command": "x", "toolrelay": {"roots": "/srv"}}}}',
            "server 'a', toolrelay.roots: must be an array of directory paths, or false to offer no roots",
        ),
        (
            '{"mcpServers": {"a": {"command": "x", "toolrelay": {"roots": [""]}}}}',
            "server 'a', toolrelay.roots: must be an array of directory paths, or false to offer no roots",
        ),
        (
            '{"mcpServers": {"a": {"url": "http://h/mcp", "headers": {"X-Key": "k\\r\\nHost: evil"}}}}',
            "server 'a': \"headers.X-Key\" holds a line break or NUL, which would split the HTTP "
            "request (after any ${...} was expanded)",
        ),
        (
            '{"mcpServers": {"a": {"url": "http://h/mcp", "headers": {"X Key": "k"}}}}',
            "server 'a': \"headers\" has 'X Key', which is not an HTTP header name",
        ),
        ('{"mcpServers": {"a": {"command": "x", "envFile": "missing.env"}}}', None),
    ],
)
def test_structural_errors(tmp_path: Path, text: str, message: str | None) -> None:
    path = write(tmp_path, text)
    if message is None:
        message = f"server 'a': cannot read envFile {tmp_path / 'missing.env'}: No such file or directory"
    assert config_error(path) == f"{path}: {message}"


def test_a_header_whose_variable_holds_a_line_break_is_refused_without_its_value(tmp_path: Path) -> None:
    path = write(tmp_path, '{"mcpServers": {"remote": {"url": "https://h/mcp", '
                           '"headers": {"Authorization": "Bearer ${env:MY_TOKEN}"}}}}')
    message = config_error(path, environ={"MY_TOKEN": "tok-secret-42\r\nX-Injected: 1"})
    assert message == (f"{path}: server 'remote': \"headers.Authorization\" holds a line break or NUL, "
                       "which would split the HTTP request (after any ${...} was expanded)")
    assert "tok-secret-42" not in message


def test_undefined_variable_names_variable_and_server(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '{"mcpServers": {"remote": {"url": "https://h/mcp", '
        '"headers": {"Authorization": "Bearer ${env:MY_TOKEN}"}}}}',
    )
    assert config_error(path) == (
        f"{path}: server 'remote', headers.Authorization: variable MY_TOKEN is not set "
        "(from ${env:MY_TOKEN}); set it in the environment or write ${MY_TOKEN:-default}"
    )


def test_input_without_value_off_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO())  # not a terminal: nobody to ask
    path = write(tmp_path, '{"servers": {"s": {"command": "x", "env": {"K": "${input:api-key}"}}}}')
    assert config_error(path) == (
        f"{path}: server 's', env.K: ${{input:api-key}} needs a value: set TOOLRELAY_INPUT_API_KEY in the "
        "environment or run toolrelay on a terminal to be asked"
    )


def test_every_entry_unsupported_is_an_error(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '{"servers": {"old": {"type": "sse", "url": "https://h/sse"}, '
        '"ws": {"type": "websocket", "url": "wss://h"}, "odd": {"type": ["http"], "url": "http://h"}}}',
    )
    assert config_error(path) == (
        f"{path}: no usable server: {path}: server 'old' skipped: type \"sse\" (the deprecated HTTP+SSE "
        'transport) is not supported; use the server\'s Streamable HTTP endpoint with "type": "http"; '
        f"{path}: server 'ws' skipped: transport type 'websocket' is not supported (toolrelay speaks stdio "
        f"and http); {path}: server 'odd' skipped: transport type ['http'] is not supported (toolrelay "
        "speaks stdio and http)"
    )


def test_environment_values_expanded_into_args_or_urls_are_redacted(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        '{"mcpServers": {"bridge": {"command": "bridge",'
        ' "args": ["--token", "${env:BRIDGE_TOKEN}", "${HOME_DIR}"]},'
        ' "remote": {"url": "https://example.test/mcp?key=${REMOTE_KEY}"}}}'
    )
    environ = {"BRIDGE_TOKEN": "tok-0123456789", "HOME_DIR": "/srv/projects", "REMOTE_KEY": "k-9876543210"}
    bridge, remote = read_config(path, environ=environ).servers
    assert bridge.args == ("--token", "tok-0123456789", "/srv/projects")  # the server gets the real value
    assert "tok-0123456789" not in bridge.target and "[redacted]" in bridge.target
    assert remote.target == "https://example.test/mcp"  # a secret-named parameter is not shown at all
