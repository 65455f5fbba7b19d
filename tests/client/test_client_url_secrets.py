"""Credentials in an MCP server's URL (secret-named query parameters, user info) are never
shown or recorded: not in the transcript, the trace page, ``--wire`` runs, notices or errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from client_helpers import free_port

from testkit.mcp_http_stub import StubBehaviour, StubServer
from toolrelay.client.config import ServerConfig
from toolrelay.redaction import redact_url

KEY = "sk-url-secret-0123456789"
PASSWORD = "pw-in-userinfo-98765"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AZURE_OPENAI_"))}
    return subprocess.run([sys.executable, "-m", "toolrelay", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)


def secret_url(base: str) -> str:
    scheme, rest = base.split("://", 1)
    return f"{scheme}://alice:{PASSWORD}@{rest}?api_key={KEY}&region=eu"


def write_config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"h": {"type": "http", "url": url}}}))
    return path


def test_a_url_is_shown_without_its_credentials() -> None:
    assert redact_url(f"https://alice:{PASSWORD}@mcp.example/mcp?api_key={KEY}&region=eu") == (
        "https://mcp.example/mcp?region=eu"
    )
    for name in ("apiKey", "access_token", "X-Api-Key", "client_secret", "password", "auth", "sig"):
        assert redact_url(f"https://h.example/mcp?{name}=v&keep=1") == "https://h.example/mcp?keep=1", name
    config = ServerConfig(name="h", transport="http", url=f"https://{KEY}@h.example/mcp")
    assert config.target == "https://h.example/mcp"
    assert KEY in config.secrets  # so any text quoting it (an error body, stderr) is redacted too


def test_the_transcript_and_the_trace_page_never_hold_the_urls_credentials(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"calls": [{"name": "h__echo", "arguments": {"text": "hi"}}]},
                                            {"message": "done"}]}))
    with StubServer(StubBehaviour()) as stub:
        config = write_config(tmp_path, secret_url(stub.url))
        ran = cli("run", "x", "--model", "offline", "--script", str(script), "--config", str(config),
                  "--transcript", "t.jsonl", "--json", cwd=tmp_path)
        called = cli("call", "h__echo", '{"text": "hi"}', "--wire", "--config", str(config), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert called.returncode == 0, called.stderr
    drawn = cli("view", "t.jsonl", "-o", "page.html", cwd=tmp_path)
    assert drawn.returncode == 0, drawn.stderr
    transcript = (tmp_path / "t.jsonl").read_text()
    [starting] = [json.loads(line) for line in transcript.splitlines() if '"server_starting"' in line]
    assert starting["target"] == stub.url + "?region=eu"
    page = (tmp_path / "page.html").read_text()
    assert stub.url + "?region=eu" in page
    for text in (transcript, page, ran.stdout + ran.stderr, called.stdout + called.stderr):
        assert KEY not in text and PASSWORD not in text


@pytest.mark.parametrize("verb", ["call", "tools"])
def test_an_unreachable_server_is_named_without_the_urls_credentials(tmp_path: Path, verb: str) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    config = write_config(tmp_path, secret_url(url))
    args = ["call", "h__echo", "{}"] if verb == "call" else ["tools"]
    proc = cli(*args, "--config", str(config), cwd=tmp_path)
    assert proc.returncode == 3
    assert f"cannot connect to server h at {url}?region=eu: connection refused" in proc.stderr
    assert KEY not in proc.stderr + proc.stdout and PASSWORD not in proc.stderr + proc.stdout
