"""Who may talk to the HTTP server: Host and Origin (DNS rebinding), the bearer token, the
bind address. Real loopback server in a thread, raw httpx2 requests."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import Iterator

import httpx2
import pytest
from http_helpers import BASE_HEADERS, init_message, open_session, post, rpc_error

from conftest import require_or_skip
from testkit.mcp_http import running_server
from testkit.servers.echo_service import EchoService
from toolrelay.errors import TransportError, UsageError
from toolrelay.server.http import serve_http

TOKEN = "s3cret-token-value-0123456789"
ALLOWED = "https://app.example.com"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with running_server(allowed_origins=[ALLOWED]) as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def token_url() -> Iterator[str]:
    with running_server(token=TOKEN) as endpoint:
        yield endpoint


@pytest.fixture
def client() -> Iterator[httpx2.Client]:
    with httpx2.Client(timeout=10) as http:
        yield http


def _initialize(client: httpx2.Client, url: str, **headers: str) -> httpx2.Response:
    return post(client, url, init_message(), headers=headers)


# -- Host and Origin --------------------------------------------------------------------


@pytest.mark.parametrize("host", ["evil.example.com", "evil.example.com:80", "127.0.0.1.evil.example.com"])
def test_foreign_host_is_403(client: httpx2.Client, url: str, host: str) -> None:
    reply = _initialize(client, url, host=host)
    assert reply.status_code == 403
    assert rpc_error(reply)["message"] == (
        f"Forbidden: Host {host!r} is not this server's address "
        "(DNS rebinding protection; use localhost, 127.0.0.1 or [::1])"
    )
    assert "mcp-session-id" not in reply.headers


@pytest.mark.parametrize("host", ["localhost", "localhost:9", "127.0.0.1:1234", "[::1]:8080", "LOCALHOST"])
def test_loopback_host_with_any_port_is_allowed(client: httpx2.Client, url: str, host: str) -> None:
    assert _initialize(client, url, host=host).status_code == 200


@pytest.mark.parametrize("origin", ["http://evil.example.com", "https://localhost.evil.example.com", "null",
                                   "http://app.example.com", "file://localhost"])
def test_foreign_origin_is_403(client: httpx2.Client, url: str, origin: str) -> None:
    reply = _initialize(client, url, origin=origin)
    assert reply.status_code == 403
    assert rpc_error(reply)["message"] == (
        f"Forbidden: Origin {origin!r} is not allowed (DNS rebinding protection; "
        "allowed: localhost, 127.0.0.1, [::1] and the configured origins)"
    )


@pytest.mark.parametrize("origin", ["http://localhost:3000", "http://127.0.0.1", "https://[::1]:8443",
                                   ALLOWED, ALLOWED + "/", "HTTPS://APP.EXAMPLE.COM"])
def test_loopback_or_configured_origin_is_allowed(client: httpx2.Client, url: str, origin: str) -> None:
    assert _initialize(client, url, origin=origin).status_code == 200


def test_host_and_origin_are_checked_on_every_request(client: httpx2.Client, url: str) -> None:
    session = open_session(client, url)
    tools = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    foreign = post(client, url, tools, session=session, headers={"origin": "http://evil.example.com"})
    assert foreign.status_code == 403
    forged = client.delete(url, headers={"mcp-session-id": session, "host": "evil.example.com"})
    assert forged.status_code == 403
    assert post(client, url, tools, session=session).status_code == 200  # the forged DELETE did nothing


# -- bearer token ------------------------------------------------------------------------


def test_missing_token_is_401_with_a_challenge(client: httpx2.Client, token_url: str) -> None:
    reply = _initialize(client, token_url)
    assert reply.status_code == 401
    assert reply.headers["www-authenticate"] == "Bearer"
    assert rpc_error(reply)["message"] == (
        "Unauthorized: this server requires an 'Authorization: Bearer' token")


@pytest.mark.parametrize(
    "value", [f"Bearer {TOKEN}x", "Bearer", f"Basic {TOKEN}", TOKEN, f"Bearer {TOKEN[:-1]}"])
def test_wrong_token_is_401(client: httpx2.Client, token_url: str, value: str) -> None:
    reply = _initialize(client, token_url, authorization=value)
    assert reply.status_code == 401
    assert reply.headers["www-authenticate"] == 'Bearer error="invalid_token"'
    assert rpc_error(reply)["message"] == "Unauthorized: the bearer token is not valid"


def test_right_token_is_needed_on_every_request(client: httpx2.Client, token_url: str) -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    reply = _initialize(client, token_url, **auth)
    assert reply.status_code == 200
    session = reply.headers["mcp-session-id"]
    tools = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert post(client, token_url, tools, session=session).status_code == 401  # the session is no credential
    assert post(client, token_url, tools, session=session, headers=auth).status_code == 200
    assert post(client, token_url, tools, session=session, headers={"authorization": f"bearer {TOKEN}"}
                ).status_code == 200  # the scheme name is case-insensitive


def test_token_never_reaches_the_logs(
    client: httpx2.Client, token_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolrelay")
    _initialize(client, token_url, authorization="Bearer wrong-guess")
    _initialize(client, token_url, authorization=f"Bearer {TOKEN}")
    assert any("401" in record.getMessage() for record in caplog.records)  # the refusal was logged
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert TOKEN not in logged and "wrong-guess" not in logged


def test_empty_token_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="the HTTP bearer token must not be empty"):
        asyncio.run(serve_http(EchoService(), token=""))


# -- bind address ----------------------------------------------------------------------------


def test_default_bind_is_127_0_0_1() -> None:
    with running_server() as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")


def test_ipv6_loopback_url_has_brackets_and_works() -> None:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        require_or_skip("no IPv6 loopback ([::1]) on this machine")
    with running_server(host="::1") as url, httpx2.Client(timeout=10) as client:
        assert url.startswith("http://[::1]:")
        assert post(client, url, init_message()).status_code == 200


def test_non_loopback_bind_warns(caplog: pytest.LogCaptureFixture) -> None:
    # 192.0.2.1 (TEST-NET-1) is not on this machine: the warning comes first, then the bind
    # fails, so no port is ever opened to the network.
    caplog.set_level(logging.WARNING, logger="toolrelay")
    with pytest.raises(TransportError) as failed:
        asyncio.run(serve_http(EchoService(), host="192.0.2.1"))
    assert str(failed.value) == "cannot listen on 192.0.2.1:0: cannot assign requested address"
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        "serving MCP over HTTP on 192.0.2.1, which other machines can reach; no bearer token is set, "
        "so anyone who can connect may call the tools"
    ]


def test_non_loopback_bind_with_token_warns_without_the_token(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="toolrelay")
    with pytest.raises(TransportError):
        asyncio.run(serve_http(EchoService(), host="192.0.2.1", token=TOKEN))
    messages = [r.getMessage() for r in caplog.records]
    assert messages == ["serving MCP over HTTP on 192.0.2.1, which other machines can reach"]


def test_refusal_bodies_are_json_even_for_garbage(client: httpx2.Client, url: str) -> None:
    headers = {**BASE_HEADERS, "host": "evil.example.com"}
    reply = client.post(url, content=json.dumps({"x": 1}), headers=headers)
    assert reply.status_code == 403 and rpc_error(reply)["code"] == -32600


# -- browsers (CORS) ---------------------------------------------------------------------------

PREFLIGHT = {"access-control-request-method": "POST",
             "access-control-request-headers": "content-type, mcp-session-id"}


@pytest.mark.parametrize("origin", ["http://localhost:6274", ALLOWED])
def test_preflight_from_an_allowed_origin(client: httpx2.Client, url: str, origin: str) -> None:
    reply = client.options(url, headers={"origin": origin, **PREFLIGHT})
    assert reply.status_code == 204 and reply.content == b""
    assert reply.headers["access-control-allow-origin"] == origin
    assert reply.headers["access-control-allow-methods"] == "GET, POST, DELETE"
    allowed = {h.strip() for h in reply.headers["access-control-allow-headers"].split(",")}
    assert {"content-type", "accept", "authorization", "mcp-session-id", "mcp-protocol-version"} <= allowed


def test_preflight_from_a_foreign_origin_is_403(client: httpx2.Client, url: str) -> None:
    reply = client.options(url, headers={"origin": "http://evil.example.com", **PREFLIGHT})
    assert reply.status_code == 403
    assert "access-control-allow-origin" not in reply.headers


def test_preflight_needs_no_token_but_the_request_does(client: httpx2.Client, token_url: str) -> None:
    origin = {"origin": "http://localhost:3000"}
    assert client.options(token_url, headers={**origin, **PREFLIGHT}).status_code == 204
    refused = _initialize(client, token_url, **origin)
    assert refused.status_code == 401
    assert refused.headers["access-control-allow-origin"] == origin["origin"]  # the page can read why


def test_allowed_origin_can_read_the_session_id(client: httpx2.Client, url: str) -> None:
    reply = _initialize(client, url, origin=ALLOWED)
    assert reply.headers["access-control-allow-origin"] == ALLOWED
    assert reply.headers["access-control-expose-headers"] == "mcp-session-id"
    assert reply.headers["vary"] == "origin"
    plain = _initialize(client, url)  # no Origin: not a browser, no CORS headers
    assert "access-control-allow-origin" not in plain.headers
