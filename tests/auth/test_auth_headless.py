"""Signing in without a person (``--auth headless``) to a protected MCP server on a local
authorization server, then using and refreshing the stored sign-in."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from auth_helpers import assert_no_secret, mode_of, stored_files, toolrelay, write_config

from testkit.oauth_servers import OAuthOptions, OAuthServers

HI = '{"text": "hi"}'


def _sign_in(config: Path, home: Path) -> None:
    done = toolrelay("tools", "--config", str(config), "--auth", "headless", home=home)
    assert done.returncode == 0, done.stderr


def test_headless_sign_in_lists_the_tools_and_stores_the_tokens_0600(tmp_path: Path) -> None:
    with OAuthServers(OAuthOptions(scopes_supported=["notes:read"])) as servers:
        config = write_config(tmp_path, servers)
        done = toolrelay("tools", "--config", str(config), "--auth", "headless", home=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "notes__echo" in done.stdout
        assert f"· signed in to notes at {servers.issuer} (headless)\n" in done.stderr
        [asked] = servers.authorizations
        assert asked["code_challenge_method"] == "S256"
        assert asked["resource"] == servers.mcp_url
        assert asked["scope"] == "notes:read"
        [stored] = stored_files(tmp_path)
        assert mode_of(stored) == 0o600 and mode_of(stored.parent) == 0o700
        # the token went to the MCP server only, never to the authorization server
        assert not any(seen.headers.get("authorization", "").startswith("Bearer")
                       for seen in servers.seen_by_as)
        assert_no_secret(servers, done.stdout, done.stderr)

        again = toolrelay("tools", "--config", str(config), "--auth", "never", home=tmp_path)
        assert again.returncode == 0, again.stderr
        assert len(servers.authorizations) == 1  # the stored sign-in was used


def test_an_expired_token_is_refreshed_and_stays_out_of_the_output(tmp_path: Path) -> None:
    with OAuthServers() as servers:
        config = write_config(tmp_path, servers)
        _sign_in(config, tmp_path)
        servers.expire_tokens()
        done = toolrelay("call", "notes__echo", HI, "--config", str(config), "--auth", "never", home=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "hi" in done.stdout
        grants = [seen.params.get("grant_type") for seen in servers.seen_by_as if seen.path == "/token"]
        assert grants == ["authorization_code", "refresh_token"]
        assert servers.seen_by_as[-1].params["resource"] == servers.mcp_url
        assert len(servers.authorizations) == 1
        assert_no_secret(servers, done.stdout, done.stderr)


def test_a_401_on_a_token_that_has_not_expired_refreshes_it_once(tmp_path: Path) -> None:
    with OAuthServers() as servers:
        config = write_config(tmp_path, servers)
        _sign_in(config, tmp_path)
        servers.revoke_access()
        done = toolrelay("call", "notes__echo", HI, "--config", str(config), "--auth", "never", home=tmp_path)
        assert done.returncode == 0, done.stderr
        grants = [seen.params.get("grant_type") for seen in servers.seen_by_as if seen.path == "/token"]
        assert grants == ["authorization_code", "refresh_token"]
        assert len(servers.authorizations) == 1


def test_revoked_tokens_without_a_person_leave_the_server_unavailable_naming_login(tmp_path: Path) -> None:
    with OAuthServers() as servers:
        config = write_config(tmp_path, servers, other=_files_server(tmp_path))
        _sign_in(config, tmp_path)
        servers.revoke_all()
        servers.expire_tokens()
        listed = toolrelay("tools", "--config", str(config), home=tmp_path)
        assert listed.returncode == 0, listed.stderr  # the other server goes on
        assert "other__read_text_file" in listed.stdout
        assert "unavailable: notes" in listed.stdout
        assert (f"server notes needs an OAuth sign-in (no sign-in can happen here): sign in first with "
                f"`toolrelay auth login notes --config {config}`") in listed.stderr
        called = toolrelay("call", "notes__echo", HI, "--config", str(config), home=tmp_path)
        assert called.returncode == 3
        assert f"`toolrelay auth login notes --config {config}`" in called.stderr
        assert_no_secret(servers, listed.stdout, listed.stderr, called.stderr)


def test_a_403_insufficient_scope_signs_in_again_for_both_scopes(tmp_path: Path) -> None:
    options = OAuthOptions(scopes_supported=["notes:read"], call_scope="notes:write")
    with OAuthServers(options) as servers:
        config = write_config(tmp_path, servers)
        done = toolrelay("call", "notes__echo", HI, "--config", str(config), "--auth", "headless",
                         home=tmp_path)
        assert done.returncode == 0, done.stderr
        assert [a.get("scope") for a in servers.authorizations] == ["notes:read", "notes:read notes:write"]


def test_a_step_up_that_never_succeeds_stops_after_two(tmp_path: Path) -> None:
    options = OAuthOptions(scopes_supported=["notes:read"], call_scope="notes:admin",
                           withhold_scope="notes:admin")
    with OAuthServers(options) as servers:
        config = write_config(tmp_path, servers)
        done = toolrelay("call", "notes__echo", HI, "--config", str(config), "--auth", "headless",
                         home=tmp_path)
        assert done.returncode == 3
        assert len(servers.authorizations) == 3  # the sign-in and two step-ups
        assert ("server notes: still refused for insufficient scope after 2 sign-ins for more scope (the "
                "server asks for notes:admin; granted: notes:read)") in done.stderr, done.stderr


def _files_server(root: Path) -> dict[str, object]:
    (root / "notes.txt").write_text("line 1\n", encoding="utf-8")
    return {"command": sys.executable, "args": ["-m", "toolrelay", "files", str(root)]}


def test_a_run_without_a_person_goes_on_without_the_server_that_needs_a_sign_in(tmp_path: Path) -> None:
    with OAuthServers() as servers:
        config = write_config(tmp_path, servers, other=_files_server(tmp_path))
        call = {"name": "other__read_text_file", "arguments": {"path": "notes.txt"}}
        (tmp_path / "script.json").write_text(json.dumps({"turns": [{"calls": [call]}]}), encoding="utf-8")
        ran = toolrelay("run", "read", "--model", "offline", "--script", "script.json", "--config",
                        str(config), home=tmp_path)
        assert ran.returncode == 0, ran.stderr
        assert f"sign in first with `toolrelay auth login notes --config {config}`" in ran.stderr
        assert servers.authorizations == []
