"""Signing in without a person (``--auth headless``) to a protected MCP server on a local
authorization server, then using and refreshing the stored sign-in."""

from __future__ import annotations

from pathlib import Path

from auth_helpers import assert_no_secret, mode_of, stored_files, toolrelay, write_config
from testkit.oauth_servers import OAuthOptions, OAuthServers


def test_headless_sign_in_lists_the_tools_and_stores_the_tokens_0600(tmp_path: Path) -> None:
    with OAuthServers(OAuthOptions(scopes_supported=["notes:read"])) as servers:
        config = write_config(tmp_path, servers)
        done = toolrelay("tools", "--config", str(config), "--auth", "headless", home=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "notes__echo" in done.stdout
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
