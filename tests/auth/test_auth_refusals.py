"""What a sign-in refuses, each with its message: a forged ``state``, an authorization
server without PKCE S256, metadata naming another issuer, resource metadata for another
server; and the token endpoint authentication each kind of client uses."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from auth_helpers import assert_no_secret, stored_files, toolrelay, write_config

from testkit.oauth_servers import OAuthOptions, OAuthServers
from toolrelay.client.auth._failures import SignInFailed
from toolrelay.client.auth.challenge import read_challenge
from toolrelay.client.auth.flow import SignInPlan, sign_in


def _sign_in_fails(tmp_path: Path, options: OAuthOptions) -> tuple[str, OAuthServers]:
    with OAuthServers(options) as servers:
        config = write_config(tmp_path, servers)
        done = toolrelay("tools", "--config", str(config), "--auth", "headless", home=tmp_path)
        assert done.returncode == 3, done.stderr
        assert stored_files(tmp_path) == []
        assert_no_secret(servers, done.stdout, done.stderr)
        return done.stderr, servers


def test_an_answer_with_another_state_is_refused(tmp_path: Path) -> None:
    said, servers = _sign_in_fails(tmp_path, OAuthOptions(wrong_state=True))
    assert ("server notes unavailable: server notes: OAuth sign-in failed: the authorization answer's "
            "state is not the request's (a stale or forged redirect): refused") in said
    assert not [seen for seen in servers.seen_by_as if seen.path == "/token"]  # the code was not redeemed


def test_an_authorization_server_without_s256_is_refused(tmp_path: Path) -> None:
    said, servers = _sign_in_fails(tmp_path, OAuthOptions(s256=False))
    assert (f"OAuth sign-in failed: the authorization server {servers.issuer} does not advertise PKCE with "
            "S256 (code_challenge_methods_supported): refused") in said
    assert servers.authorizations == []


def test_metadata_naming_another_issuer_is_refused(tmp_path: Path) -> None:
    said, servers = _sign_in_fails(tmp_path, OAuthOptions(metadata_issuer="https://elsewhere.example"))
    assert (f"OAuth sign-in failed: the authorization server metadata is for issuer "
            f"'https://elsewhere.example', not '{servers.issuer}': refused") in said
    assert servers.authorizations == []


def test_resource_metadata_for_another_origin_is_refused(tmp_path: Path) -> None:
    said, servers = _sign_in_fails(tmp_path, OAuthOptions(resource="https://attacker.example/mcp"))
    assert ("OAuth sign-in failed: the resource metadata is for https://attacker.example/mcp, not for this "
            f"server ({servers.mcp_url}): refused") in said
    assert servers.seen_by_as == []  # nothing was asked of its authorization server


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post", "none"])
def test_a_registered_client_authenticates_as_the_server_supports(tmp_path: Path, method: str) -> None:
    with OAuthServers(OAuthOptions(auth_methods=[method])) as servers:
        config = write_config(tmp_path, servers)
        done = toolrelay("tools", "--config", str(config), "--auth", "headless", home=tmp_path)
        assert done.returncode == 0, done.stderr
        [token] = [seen for seen in servers.seen_by_as if seen.path == "/token"]
        assert token.headers.get("authorization", "").startswith("Basic") == (method == "client_secret_basic")
        assert ("client_secret" in token.params) == (method == "client_secret_post")
        assert token.params["resource"] == servers.mcp_url


def test_a_preregistered_client_from_the_config_is_used_with_its_secret(tmp_path: Path) -> None:
    with OAuthServers(OAuthOptions(registration=False, auth_methods=["client_secret_basic"])) as servers:
        servers.preregister("toolrelay-notes", "s3cret-from-env-42", "client_secret_basic")
        oauth = {"clientId": "toolrelay-notes", "clientSecret": "${env:NOTES_SECRET}"}
        config = write_config(tmp_path, servers, oauth)
        done = toolrelay("tools", "--config", str(config), "--auth", "headless", home=tmp_path,
                         env={"NOTES_SECRET": "s3cret-from-env-42"})
        assert done.returncode == 0, done.stderr
        [token] = [seen for seen in servers.seen_by_as if seen.path == "/token"]
        expected = base64.b64encode(b"toolrelay-notes:s3cret-from-env-42").decode()
        assert token.headers["authorization"] == f"Basic {expected}"
        assert not [seen for seen in servers.seen_by_as if seen.path == "/register"]


def test_no_way_to_register_names_the_config_key(tmp_path: Path) -> None:
    said, _ = _sign_in_fails(tmp_path, OAuthOptions(registration=False))
    assert ('offers no way to register toolrelay (no registration endpoint, no client id metadata '
            'documents): add "clientId" to the server\'s "toolrelay": {"oauth": {...}} in the config') in said


def test_headless_against_a_login_page_says_a_person_is_needed(tmp_path: Path) -> None:
    said, _ = _sign_in_fails(tmp_path, OAuthOptions(login_page=True))
    assert ("OAuth sign-in failed: the authorization server answered the authorization request with HTTP "
            "200, not a redirect: it wants a person to sign in") in said


def test_a_token_no_header_can_carry_is_refused_and_shows_nowhere(tmp_path: Path) -> None:
    """A token answer whose access_token ends in CR LF: refused when read, never sent, and
    neither the message, the transcript nor any log or stored file holds its value."""
    with OAuthServers(OAuthOptions(token_suffix="\r\n")) as servers:
        config = write_config(tmp_path, servers)
        transcript = tmp_path / "run.jsonl"
        ran = toolrelay("run", "hi", "--model", "offline", "--config", str(config), "--auth", "headless",
                        "--transcript", str(transcript), home=tmp_path,
                        env={"TOOLRELAY_LOG_DIR": str(tmp_path / "logs")})
        assert not any("authorization" in seen.headers for seen in servers.seen_by_mcp)
    assert ran.returncode == 3, ran.stderr  # its only server is unavailable
    assert ("toolrelay run: error: server notes unavailable: server notes: OAuth sign-in failed: the token "
            "answer's access_token has characters a Bearer token cannot carry (RFC 6750 allows letters, "
            "digits, -._~+/ and a trailing =): refused") in ran.stderr
    assert stored_files(tmp_path) == []
    written = [path.read_text(encoding="utf-8", errors="replace") for path in tmp_path.rglob("*")
               if path.is_file()]
    assert transcript.is_file()
    assert_no_secret(servers, ran.stdout, ran.stderr, *written)


def test_a_stored_token_no_header_can_carry_is_not_used(tmp_path: Path) -> None:
    with OAuthServers() as servers:
        config = write_config(tmp_path, servers)
        signed = toolrelay("tools", "--config", str(config), "--auth", "headless", home=tmp_path)
        assert signed.returncode == 0, signed.stderr
        [stored] = stored_files(tmp_path)
        record = json.loads(stored.read_text(encoding="utf-8"))
        record["tokens"]["access_token"] += "\r\n"  # edited by hand
        stored.write_text(json.dumps(record), encoding="utf-8")
        listed = toolrelay("tools", "--config", str(config), home=tmp_path)
        status = toolrelay("auth", "status", "--config", str(config), home=tmp_path)
        assert not any(seen.headers.get("authorization", "").endswith("\r\n") for seen in servers.seen_by_mcp)
    assert listed.returncode == 3
    assert "server notes needs an OAuth sign-in (no sign-in can happen here)" in listed.stderr
    assert f"{stored}: unreadable (delete it, or sign in again)" in status.stdout
    assert_no_secret(servers, listed.stdout, listed.stderr, status.stdout)


def test_no_token_goes_in_cleartext_to_a_server_off_loopback(tmp_path: Path) -> None:
    """127.0.0.2 reaches this machine on Linux, but is not one of the addresses a token may
    go to over plain http (localhost, 127.0.0.1, [::1]): neither a sign-in nor a look for
    the resource metadata happens, asked for by a 401 or by ``auth login``."""
    with OAuthServers(OAuthOptions(mcp_host="127.0.0.2")) as servers:
        config = write_config(tmp_path, servers)
        listed = toolrelay("tools", "--config", str(config), "--auth", "headless", home=tmp_path)
        login = toolrelay("auth", "login", "notes", "--config", str(config), "--auth", "headless",
                          home=tmp_path)
        assert not any("authorization" in seen.headers for seen in servers.seen_by_mcp)
        assert not any(seen.path.startswith("/.well-known/") for seen in servers.seen_by_mcp)
        assert servers.seen_by_as == []
    said = ("server notes unavailable: server notes: OAuth sign-in failed: the server's URL "
            f"{servers.mcp_url} is not https, and a token goes over plain http only to this machine "
            "(localhost, 127.0.0.1, [::1]): refused\n")
    assert (listed.returncode, listed.stderr) == (3, f"toolrelay tools: error: {said}")
    assert (login.returncode, login.stderr) == (3, f"toolrelay auth: error: {said}")
    assert stored_files(tmp_path) == []


def test_resource_metadata_named_at_a_plain_http_url_off_loopback_is_not_fetched() -> None:
    challenge = read_challenge(401, 'Bearer resource_metadata="http://metadata.example/prm"')
    flow = sign_in(SignInPlan(server_url="https://notes.example/mcp", headless=True, now=0.0,
                              challenge=challenge))
    with pytest.raises(SignInFailed) as refused:
        next(flow)  # its first step would be the GET
    assert str(refused.value) == ("the resource metadata URL 'http://metadata.example/prm' is not an https "
                                  "URL (plain http only on loopback): refused")
