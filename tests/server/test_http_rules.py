"""The request checks as pure functions, for the cases a loopback test server cannot show:
other bind addresses, Host spellings, which address counts as loopback."""

from __future__ import annotations

import pytest

from toolrelay.httpserver import HttpRequest
from toolrelay.loopback import is_loopback
from toolrelay.server.http_rules import AccessPolicy, Refusal, check_origin


def _request(host: str, origin: str | None = None) -> HttpRequest:
    headers = [("host", host)] + ([("origin", origin)] if origin is not None else [])
    return HttpRequest(method="POST", path="/mcp", headers=headers, body=b"")


def _refused(request: HttpRequest, policy: AccessPolicy) -> int | None:
    try:
        check_origin(request, policy)
    except Refusal as refusal:
        return refusal.status
    return None


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.0.0.2", True), ("localhost", True), ("::1", True), ("[::1]", True),
    ("0.0.0.0", False), ("::", False), ("192.168.1.5", False), ("example.com", False), ("LocalHost", True),
])
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_specific_bind_address_is_an_allowed_host() -> None:
    policy = AccessPolicy.build("192.168.1.5", None, ())
    assert _refused(_request("192.168.1.5:8765"), policy) is None
    assert _refused(_request("localhost:8765"), policy) is None
    assert _refused(_request("192.168.1.6:8765"), policy) == 403
    assert _refused(_request("fileserver.lan:8765"), policy) == 403


@pytest.mark.parametrize("bind", ["0.0.0.0", "::", "[::]"])
def test_wildcard_bind_accepts_address_literals_never_names(bind: str) -> None:
    policy = AccessPolicy.build(bind, None, ())
    for host in ("192.168.1.5:8765", "10.1.2.3", "[fe80::1]:8765", "[::1]:1"):
        assert _refused(_request(host), policy) is None, host
    for host in ("evil.example.com", "evil.example.com:8765", "fileserver.lan"):
        assert _refused(_request(host), policy) == 403, host


def test_loopback_bind_refuses_other_addresses_in_host() -> None:
    policy = AccessPolicy.build("127.0.0.1", None, ())
    assert _refused(_request("10.1.2.3:8765"), policy) == 403


def test_origin_rule_is_independent_of_the_bind() -> None:
    policy = AccessPolicy.build("0.0.0.0", None, ["http://dashboard.lan:3000/"])
    assert _refused(_request("10.0.0.1", "http://dashboard.lan:3000"), policy) is None
    assert _refused(_request("10.0.0.1", "http://10.0.0.1:3000"), policy) == 403
