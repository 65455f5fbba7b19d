"""The sans-IO pieces of a sign-in, one by one: the config's ``oauth`` block and its
messages, ``WWW-Authenticate`` read, where metadata is looked for (MCP's order), the
canonical resource, and the grant store's files."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from toolrelay.client.auth.challenge import read_challenge
from toolrelay.client.auth.grant import Grant
from toolrelay.client.auth.metadata import canonical_resource, resource_metadata_urls, server_metadata_urls
from toolrelay.client.auth.store import GrantStore, state_directory
from toolrelay.client.auth.tokens import Client, Tokens
from toolrelay.client.config import load_config
from toolrelay.errors import ConfigError


def _load(tmp_path: Path, entry: dict[str, object], **environ: str) -> object:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"notes": entry}}), encoding="utf-8")
    return load_config(path, environ=environ)


def test_the_oauth_block_is_read_with_its_values_expanded_and_the_secret_redacted(tmp_path: Path) -> None:
    oauth = {"clientId": "c1", "clientSecret": "${env:SECRET}", "scopes": ["a", "b"],
             "clientMetadataUrl": "https://example.org/client.json"}
    [server] = _load(tmp_path, {"url": "https://notes.example/mcp", "toolrelay": {"oauth": oauth}},
                     SECRET="very-secret-value")  # type: ignore[misc]
    assert server.oauth.client_secret == "very-secret-value"
    assert server.oauth.scopes == ("a", "b")
    assert "very-secret-value" in server.secrets
    assert "very-secret-value" not in repr(server.oauth)


@pytest.mark.parametrize(("entry", "said"), [
    ({"url": "https://n.example/mcp", "toolrelay": {"oauth": {"clientid": "x"}}},
     'server \'notes\', toolrelay.oauth: unknown key "clientid" (known: clientId, clientSecret, scopes, '
     'clientMetadataUrl)'),
    ({"url": "https://n.example/mcp", "toolrelay": {"oauth": {"clientSecret": "x"}}},
     '"clientSecret" needs "clientId"'),
    ({"url": "https://n.example/mcp", "toolrelay": {"oauth": {"scopes": "a b"}}},
     '"scopes" must be an array of scope names'),
    ({"url": "https://n.example/mcp", "toolrelay": {"oauth": {"clientMetadataUrl": "http://x.example/c"}}},
     '"clientMetadataUrl" must be an https:// URL with a path, got \'http://x.example/c\''),
    ({"command": "x", "toolrelay": {"oauth": {}}},
     '"toolrelay.oauth" is for HTTP servers; a stdio server takes its credentials from its environment'),
])
def test_an_unusable_oauth_block_is_refused_naming_what(tmp_path: Path, entry: dict[str, object],
                                                         said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, entry)
    assert said in str(caught.value)


def test_the_bearer_challenge_is_read_among_others() -> None:
    header = 'Basic realm="x", Bearer resource_metadata="https://m.example/.well-known/x", ' \
             'scope="files:read files:write", error="insufficient_scope"'
    challenge = read_challenge(403, header)
    assert challenge.resource_metadata == "https://m.example/.well-known/x"
    assert challenge.scopes == ("files:read", "files:write")
    assert challenge.insufficient_scope
    assert read_challenge(401, None).resource_metadata is None


def test_metadata_is_looked_for_in_mcps_order() -> None:
    assert resource_metadata_urls("https://m.example/api/mcp", None) == [
        "https://m.example/.well-known/oauth-protected-resource/api/mcp",
        "https://m.example/.well-known/oauth-protected-resource"]
    assert server_metadata_urls("https://as.example/tenant1") == [
        "https://as.example/.well-known/oauth-authorization-server/tenant1",
        "https://as.example/.well-known/openid-configuration/tenant1",
        "https://as.example/tenant1/.well-known/openid-configuration"]
    assert server_metadata_urls("https://as.example") == [
        "https://as.example/.well-known/oauth-authorization-server",
        "https://as.example/.well-known/openid-configuration"]
    assert canonical_resource("HTTPS://Mcp.Example/mcp/") == "https://mcp.example/mcp"


def test_the_store_lives_in_the_state_directory_with_private_files(tmp_path: Path) -> None:
    assert state_directory({"XDG_STATE_HOME": "/x/state"}) == Path("/x/state/toolrelay")
    assert state_directory({}) == Path.home() / ".local" / "state" / "toolrelay"
    store = GrantStore(tmp_path / "toolrelay" / "oauth")
    grant = Grant(server="https://m.example/mcp", resource="https://m.example/mcp",
                  issuer="https://as.example",
                  token_endpoint="https://as.example/token",
                  client=Client(client_id="c", redirect_uri="http://127.0.0.1/callback",
                                registered_by="config"),
                  tokens=Tokens(access_token="at-0123456789"), scopes=("a",), signed_in_at=1.0)
    path = store.save(grant)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert store.load("https://M.example/mcp/") == grant
    assert "at-0123456789" not in repr(grant)
    assert store.forget("https://m.example/mcp") == [path]
    assert store.load("https://m.example/mcp") is None
