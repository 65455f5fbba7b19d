"""An OAuth sign-in in a traced run is an ``oauth {server}`` span under the run, each HTTP
exchange an event on it (step, method, status, host), and no token, client secret, code
or URL query in any span, attribute or event of the exported file (searched, as the auth
tests search the transcript). A real authorization server and protected MCP server on
loopback (``testkit.oauth_servers``), the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from test_otel_cli import attributes, spans_in

from testkit.oauth_servers import OAuthOptions, OAuthServers

SCRIPT = {"turns": [{"calls": [{"name": "notes__echo", "arguments": {"text": "hi"}}]}]}


def test_a_sign_in_is_a_span_with_its_exchanges_and_no_secret(tmp_path: Path) -> None:
    with OAuthServers(OAuthOptions(scopes_supported=["notes:read"])) as servers:
        (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"notes": {"url": servers.mcp_url}}}))
        (tmp_path / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
        ran = subprocess.run(
            [sys.executable, "-m", "toolrelay", "run", "say hi", "--model", "offline", "--script",
             "script.json", "--config", "mcp.json", "--auth", "headless", "--yes", "--otel-file",
             "spans.jsonl", "--quiet"],
            cwd=tmp_path, capture_output=True, text=True, timeout=60,
            env={**env, "XDG_STATE_HOME": str(tmp_path / "state")})
        assert ran.returncode == 0, ran.stderr
        exported = (tmp_path / "spans.jsonl").read_text(encoding="utf-8")
        secrets = servers.issued_secrets()
        assert secrets  # there were secrets to look for
        for secret in secrets:
            assert secret not in exported and secret.strip() not in exported
        assert "code_challenge" not in exported and "state=" not in exported
        issuer_host = servers.issuer.split("//", 1)[1].split(":", 1)[0]
    spans = spans_in(tmp_path / "spans.jsonl")
    [run] = [s for s in spans if s["name"] == "invoke_agent toolrelay"]
    [sign_in] = [s for s in spans if s["name"] == "oauth notes"]
    assert sign_in["parentSpanId"] == run["spanId"]
    assert sign_in.get("status", {}).get("code", 0) != 2  # signed in: not ERROR
    said = attributes(sign_in)
    assert (said["toolrelay.auth.outcome"], said["toolrelay.auth.how"]) == ("signed_in", "headless")
    assert said["toolrelay.auth.issuer"] == issuer_host
    steps = [(e["name"], attributes(e)["http.request.method"], attributes(e).get("http.response.status_code"))
             for e in sign_in["events"]]
    assert steps == [("resource metadata", "GET", "200"), ("server metadata", "GET", "200"),
                     ("registration", "POST", "201"), ("authorization", "GET", "302"),
                     ("token", "POST", "200")]
