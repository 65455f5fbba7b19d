"""A run against a protected server records its sign-in (the exchanges' URLs and statuses,
the outcome) and no secret: not in the transcript, not on the ``view`` page, not in what
``verify`` and ``explain`` print; ``verify`` accepts the new events."""

from __future__ import annotations

import json
from pathlib import Path

from auth_helpers import assert_no_secret, toolrelay, write_config

from testkit.oauth_servers import OAuthOptions, OAuthServers

SCRIPT = {"turns": [{"calls": [{"name": "notes__echo", "arguments": {"text": "hi"}}]}]}


def test_a_sign_in_is_recorded_without_a_secret_and_drawn_by_view(tmp_path: Path) -> None:
    with OAuthServers(OAuthOptions(scopes_supported=["notes:read"])) as servers:
        config = write_config(tmp_path, servers)
        (tmp_path / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
        ran = toolrelay("run", "say hi", "--model", "offline", "--script", "script.json", "--config",
                        str(config), "--auth", "headless", "--yes", "--transcript", "t.jsonl", home=tmp_path)
        assert ran.returncode == 0, ran.stderr
        records = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
        exchanges = [(r["step"], r["method"], r["status"]) for r in records if r["kind"] == "auth_exchange"]
        assert exchanges == [("resource metadata", "GET", 200), ("server metadata", "GET", 200),
                             ("registration", "POST", 201), ("authorization", "GET", 302),
                             ("token", "POST", 200)]
        [authorization] = [r["url"] for r in records if r.get("step") == "authorization"]
        assert "state=" not in authorization and "code_challenge=" not in authorization
        assert "code_challenge_method=S256" in authorization
        [outcome] = [r for r in records if r["kind"] == "auth"]
        said = (outcome["outcome"], outcome["how"], outcome["issuer"])
        assert said == ("signed_in", "headless", servers.issuer)

        verified = toolrelay("verify", "t.jsonl", home=tmp_path)
        assert verified.returncode == 0, verified.stdout + verified.stderr
        viewed = toolrelay("view", "t.jsonl", home=tmp_path)
        assert viewed.returncode == 0, viewed.stderr
        page = (tmp_path / "t.html").read_text(encoding="utf-8")
        assert "OAuth: signed in (headless)" in page
        assert "sign-in · token: POST → HTTP 200" in page
        explained = toolrelay("explain", "t.jsonl", "--all", home=tmp_path)
        assert_no_secret(servers, (tmp_path / "t.jsonl").read_text(), page, ran.stdout, ran.stderr,
                         verified.stdout, explained.stdout)
        assert servers.issued_secrets()  # there were secrets to look for


def test_a_token_learned_while_running_is_redacted_in_every_record(tmp_path: Path) -> None:
    from toolrelay.events import Notice
    from toolrelay.redaction import redact, remember_secret
    from toolrelay.transcript.writer import TranscriptWriter

    token = "at-learned-while-running-0123456789"
    remember_secret(token)
    assert redact(f"the server said: bad token {token}", ()) == "the server said: bad token [redacted]"
    path = tmp_path / "t.jsonl"
    writer = TranscriptWriter(path, run_id="r1", secrets=())
    writer(Notice(level="warning", text=f"server notes rejected {token}"))
    writer.close()
    assert token not in path.read_text() and "[redacted]" in path.read_text()


def test_verify_refuses_a_tampered_sign_in_record(tmp_path: Path) -> None:
    with OAuthServers() as servers:
        config = write_config(tmp_path, servers)
        (tmp_path / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
        ran = toolrelay("run", "say hi", "--model", "offline", "--script", "script.json", "--config",
                        str(config), "--auth", "headless", "--yes", "--transcript", "t.jsonl", home=tmp_path)
        assert ran.returncode == 0, ran.stderr
    path = tmp_path / "t.jsonl"
    lines = path.read_text().splitlines()
    tampered = [line.replace('"status": 200', '"status": "fine"') if '"auth_exchange"' in line else line
                for line in lines]
    path.write_text("\n".join(tampered) + "\n")
    verified = toolrelay("verify", "t.jsonl", home=tmp_path)
    assert verified.returncode == 2
    assert ("has a string as 'status', not an integer or null; toolrelay never writes that, so this "
            "transcript cannot be checked") in verified.stderr, verified.stderr
    assert "auth_exchange" in verified.stderr


def test_a_server_quoting_the_token_in_an_error_shows_it_redacted(tmp_path: Path) -> None:
    with OAuthServers(OAuthOptions(forbid_calls=True)) as servers:
        config = write_config(tmp_path, servers)
        done = toolrelay("call", "notes__echo", '{"text": "hi"}', "--config", str(config), "--auth",
                         "headless", home=tmp_path)
        assert done.returncode == 3
        assert "answered HTTP 403 Forbidden to tools/call request 4: token Bearer [redacted] may not call" \
            in done.stderr, done.stderr
        assert_no_secret(servers, done.stdout, done.stderr)
