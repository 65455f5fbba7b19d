"""``toolrelay files`` on the command line: usage errors, help, sizes, and the --http wiring."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest

from testkit.processes import spawned
from toolrelay.cli.files_cmd import byte_size, listen_address

from .helpers import FILES_CMD, RawClient


def run_files(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FILES_CMD, *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def test_missing_root_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    proc = run_files(str(tmp_path), str(missing))
    assert proc.returncode == 2
    assert proc.stderr == f"toolrelay files: error: ROOT '{missing}' does not exist\n"
    assert proc.stdout == ""


def test_file_root_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x")
    proc = run_files(str(tmp_path / "f.txt"))
    assert proc.returncode == 2
    assert proc.stderr == f"toolrelay files: error: ROOT '{tmp_path / 'f.txt'}' is not a directory\n"


def test_help_lists_the_options() -> None:
    proc = run_files("--help")
    assert proc.returncode == 0
    for option in ("ROOT", "--http [HOST:]PORT", "--allow-origin ORIGIN", "--max-message-bytes BYTES",
                   "--max-result-bytes BYTES", "--sse-hold SECONDS", "TOOLRELAY_TOKEN", "default 4MiB",
                   "default 1MiB"):
        assert option in proc.stdout, option
    assert "--token" not in proc.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--token", "s3cret"], "unrecognized arguments: --token s3cret"),
    (["--max-result-bytes", "0"], "argument --max-result-bytes: invalid size '0'"),
    (["--max-message-bytes", "4 parsecs"], "argument --max-message-bytes: invalid size '4 parsecs'"),
    (["--http", "localhost:http"], "argument --http: invalid address 'localhost:http'"),
    (["--http", "99999"], "argument --http: invalid address '99999'"),
    (["--sse-hold", "-1"], "argument --sse-hold: must be a number of seconds, 0 or more, not '-1'"),
    (["--sse-hold", "nan"], "argument --sse-hold: must be a number of seconds, 0 or more, not 'nan'"),
])
def test_bad_options_are_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    proc = run_files(str(tmp_path), *args)
    assert proc.returncode == 2
    assert message in proc.stderr


def test_byte_sizes_and_addresses() -> None:
    assert [byte_size(text) for text in ("1048576", "512K", "4MiB", "1g", "64 kib")] == [
        1 << 20, 512 << 10, 4 << 20, 1 << 30, 64 << 10]
    assert listen_address("8765") == ("127.0.0.1", 8765)
    assert listen_address("0.0.0.0:0") == ("0.0.0.0", 0)
    assert listen_address("[::1]:9000") == ("::1", 9000)
    with pytest.raises(argparse.ArgumentTypeError):
        listen_address(":80")


def test_message_size_cap_over_stdio(tmp_path: Path) -> None:
    with RawClient(str(tmp_path), "--max-message-bytes", "1K") as client:
        answer = client.exchange("tools/call", {"name": "read_text_file", "arguments": {"path": "x" * 2000}})
        assert answer.raw["error"]["code"] == -32600
        assert "exceeds the size limit" in answer.raw["error"]["message"]
        (tmp_path / "ok.txt").write_text("fine\n")
        assert client.text("read_text_file", {"path": "ok.txt"}) == "fine\n"  # the session goes on


@contextmanager
def http_server(*args: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, list[str]]]:
    """``toolrelay files ... --http``: (URL, stderr lines up to the ready line); Ctrl-C on exit."""
    with spawned([*FILES_CMD, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})}) as proc:
        assert proc.stderr is not None and proc.stdout is not None
        lines: list[str] = []
        for line in proc.stderr:
            lines.append(line)
            if found := re.search(r"serving Streamable HTTP on (http://\S+/mcp)", line):
                break
        else:
            pytest.fail(f"no ready line: {''.join(lines)}")
        yield found.group(1), lines
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 130  # Ctrl-C: the interrupted exit code
        assert proc.stdout.read() == ""  # nothing but the protocol (none on HTTP) on stdout


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "0"}}}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def test_http_on_loopback_with_a_token_from_the_environment(tmp_path: Path) -> None:
    with http_server(str(tmp_path), "--http", "0", env={"TOOLRELAY_TOKEN": "s3cret-token"}) as (url, lines):
        assert url.startswith("http://127.0.0.1:")
        assert "(bearer token required)" in lines[-1]
        assert not any("other machines" in line for line in lines)
        assert not any("s3cret-token" in line for line in lines)
        with httpx2.Client() as client:
            refused = client.post(url, content=json.dumps(INIT), headers=HEADERS)
            assert refused.status_code == 401
            accepted = client.post(url, content=json.dumps(INIT),
                                   headers={**HEADERS, "authorization": "Bearer s3cret-token"})
            assert accepted.status_code == 200
            assert "toolrelay-files" in accepted.text


def test_http_on_another_address_warns(tmp_path: Path) -> None:
    with http_server(str(tmp_path), "--http", "0.0.0.0:0", env={"TOOLRELAY_TOKEN": ""}) as (url, lines):
        assert url.startswith("http://0.0.0.0:")
        assert ("toolrelay files: serving MCP over HTTP on 0.0.0.0, which other machines can reach; "
                "no bearer token is set, so anyone who can connect may call the tools\n") in lines


def test_a_port_in_use_is_a_transport_failure_with_a_hint(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = run_files(str(tmp_path), "--http", f"127.0.0.1:{port}")
    assert proc.returncode == 3
    assert proc.stderr == (
        f"toolrelay files: error: cannot listen on 127.0.0.1:{port}: address already in use "
        "(choose another port, or 0 for any free one)\n"
    )
