"""``toolrelay auth login / status / logout`` end to end: the person's sign-in (the URL
printed with ``--no-browser``, followed here by an HTTP client as a browser would, back to
toolrelay's loopback listener), headless login, what status shows, and logout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest
from auth_helpers import assert_no_secret, mode_of, stored_files, toolrelay, write_config

from testkit.everything_http import free_port
from testkit.oauth_servers import OAuthOptions, OAuthServers
from testkit.processes import spawned


def _printed_url(stderr: list[str], lines: object) -> str:
    for line in lines:  # type: ignore[attr-defined]
        stderr.append(line)
        if line.startswith("  http"):
            return str(line.strip())
    raise AssertionError("no URL printed: " + "".join(stderr))


def test_login_without_browser_prints_the_url_and_takes_the_code_on_loopback(tmp_path: Path) -> None:
    with OAuthServers(OAuthOptions(scopes_supported=["notes:read"])) as servers:
        config = write_config(tmp_path, servers)
        environment = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
        command = [sys.executable, "-m", "toolrelay", "auth", "login", "notes", "--config", str(config),
                   "--no-browser"]
        with spawned(command, cwd=tmp_path, env=environment, text=True, stdin=subprocess.DEVNULL,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            stderr: list[str] = []
            url = _printed_url(stderr, proc.stderr)
            assert url.startswith(f"{servers.as_origin}/authorize?")
            landed = httpx2.get(url, follow_redirects=True, timeout=30)  # the browser
            assert landed.status_code == 200
            assert "Signed in" in landed.text
            assert landed.url.host == "127.0.0.1" and landed.url.path == "/callback"
            out, rest = proc.communicate(timeout=60)
        assert proc.returncode == 0, "".join(stderr) + rest
        [stored] = stored_files(tmp_path)
        assert mode_of(stored) == 0o600
        assert out == f"signed in to notes at {servers.issuer} (scopes: notes:read)\nstored in {stored}\n"
        assert_no_secret(servers, out, "".join(stderr), rest)

        used = toolrelay("call", "notes__echo", '{"text": "hi"}', "--config", str(config), home=tmp_path)
        assert used.returncode == 0, used.stderr


def test_a_person_slower_than_the_request_timeout_still_signs_in(tmp_path: Path) -> None:
    """The resource metadata is named by the 401 only, and the config allows requests 1 s:
    the sign-in happens before the first request, so the person may take longer."""
    with OAuthServers(OAuthOptions(prm_path="/custom/metadata.json")) as servers:
        config = write_config(tmp_path, servers)
        entry = json.loads(config.read_text())
        entry["mcpServers"]["notes"]["toolrelay"] = {"requestTimeout": 1}
        config.write_text(json.dumps(entry))
        environment = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
        command = [sys.executable, "-m", "toolrelay", "auth", "login", "notes", "--config", str(config),
                   "--no-browser"]
        with spawned(command, cwd=tmp_path, env=environment, text=True, stdin=subprocess.DEVNULL,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            stderr: list[str] = []
            url = _printed_url(stderr, proc.stderr)
            time.sleep(1.5)  # the person reads the page: longer than any request may take
            assert httpx2.get(url, follow_redirects=True, timeout=30).status_code == 200
            out, rest = proc.communicate(timeout=60)
        assert proc.returncode == 0, "".join(stderr) + rest
        assert out.startswith(f"signed in to notes at {servers.issuer}")


def test_a_forged_redirect_to_the_listener_is_refused(tmp_path: Path) -> None:
    with OAuthServers() as servers:
        config = write_config(tmp_path, servers)
        environment = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
        command = [sys.executable, "-m", "toolrelay", "auth", "login", "notes", "--config", str(config),
                   "--no-browser"]
        with spawned(command, cwd=tmp_path, env=environment, text=True, stdin=subprocess.DEVNULL,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            stderr: list[str] = []
            url = _printed_url(stderr, proc.stderr)
            redirect = httpx2.URL(url).params["redirect_uri"]
            forged = httpx2.get(f"{redirect}?code=stolen&state=not-the-one", timeout=30)
            assert forged.status_code == 400
            assert "does not belong to the sign-in toolrelay started" in forged.text
            _, rest = proc.communicate(timeout=60)
        assert proc.returncode == 3
        assert ("toolrelay auth: error: server notes unavailable: server notes: OAuth sign-in failed: the "
                "authorization answer's state is not the request's (a stale or forged redirect): refused"
                ) in rest
        assert stored_files(tmp_path) == []


def test_headless_login_status_and_logout(tmp_path: Path) -> None:
    with OAuthServers(OAuthOptions(scopes_supported=["notes:read"])) as servers:
        config = write_config(tmp_path, servers)
        login = toolrelay("auth", "login", "notes", "--config", str(config), "--auth", "headless",
                          home=tmp_path)
        assert login.returncode == 0, login.stderr
        assert login.stdout.startswith(f"signed in to notes at {servers.issuer} (scopes: notes:read)\n")
        status = toolrelay("auth", "status", "--config", str(config), home=tmp_path)
        assert status.returncode == 0
        assert (f"notes ({servers.mcp_url}): signed in at {servers.issuer} (scopes: notes:read); the token "
                "expires in 59 min, refreshable") in status.stdout
        assert_no_secret(servers, login.stdout, login.stderr, status.stdout)
        logout = toolrelay("auth", "logout", "notes", "--config", str(config), home=tmp_path)
        assert logout.stdout == "signed out of notes: its stored sign-in is deleted\n"
        assert stored_files(tmp_path) == []
        again = toolrelay("auth", "logout", "notes", "--config", str(config), home=tmp_path)
        assert again.stdout == "no sign-in stored for notes\n"
        empty = toolrelay("auth", "status", home=tmp_path)
        assert empty.stdout.startswith("no stored sign-ins (in ")


def test_login_names_what_is_wrong_with_its_arguments(tmp_path: Path) -> None:
    with OAuthServers() as servers:
        config = write_config(tmp_path, servers, local={"command": "true"})
        unknown = toolrelay("auth", "login", "nope", "--config", str(config), home=tmp_path)
        assert unknown.returncode == 2
        said = f"toolrelay auth: error: no server 'nope' in {config} (servers: notes, local)"
        assert said in unknown.stderr
        local = toolrelay("auth", "login", "local", "--config", str(config), home=tmp_path)
        assert local.returncode == 2
        assert "server local is a local process, not a remote (HTTP) server" in local.stderr
        bare = toolrelay("auth", "login", "notes", home=tmp_path)
        assert bare.returncode == 2
        assert "name the config that holds server 'notes' with --config FILE (or give its URL)" in bare.stderr


@pytest.mark.parametrize("how", [["--auth", "headless"], ["--no-browser"]], ids=["headless", "person"])
def test_login_to_a_server_that_is_down_says_it_cannot_be_reached(tmp_path: Path, how: list[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"notes": {"url": url}}}), encoding="utf-8")
    login = toolrelay("auth", "login", "notes", "--config", str(config), *how, home=tmp_path)
    assert login.returncode == 3
    assert login.stderr == ("toolrelay auth: error: server notes unavailable: cannot connect to server "
                            f"notes at {url}: connection refused\n")
    assert stored_files(tmp_path) == []


def test_login_when_the_authorization_server_is_down_names_what_was_not_reached(tmp_path: Path) -> None:
    with OAuthServers() as servers:
        servers.stop_authorization_server()
        config = write_config(tmp_path, servers)
        login = toolrelay("auth", "login", "notes", "--config", str(config), "--auth", "headless",
                          home=tmp_path)
    assert login.returncode == 3
    assert login.stderr == ("toolrelay auth: error: server notes unavailable: server notes: OAuth sign-in "
                            f"failed: cannot reach {servers.issuer}/.well-known/oauth-authorization-server "
                            "(server metadata): connection refused\n")
