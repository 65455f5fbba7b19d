"""The checks every request to the MCP HTTP endpoint passes, as pure functions.

Each check raises ``Refusal`` (an HTTP status plus the JSON-RPC error a client shows)
or returns nothing. Order of use: Host and Origin (DNS rebinding), the bearer token,
then the headers a POST (or GET) must carry, then the MCP-Protocol-Version header. A browser page
from an allowed Origin also gets the CORS headers that let it read the answers.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from ..httpserver import HttpRequest
from ..protocol.jsonrpc import INVALID_REQUEST, RequestId
from ..protocol.versions import SUPPORTED_VERSIONS

__all__ = [
    "LOOPBACK_NAMES",
    "AccessPolicy",
    "Refusal",
    "check_get_headers",
    "check_origin",
    "check_post_headers",
    "check_protocol_version",
    "check_token",
    "cors_headers",
    "preflight_headers",
]

LOOPBACK_NAMES: Final = frozenset({"localhost", "127.0.0.1", "::1"})
_CORS_REQUEST_HEADERS: Final = (
    "accept, authorization, content-type, last-event-id, mcp-method, mcp-name, mcp-protocol-version, "
    "mcp-session-id"
)
_SHOWN_MAX: Final = 120  # characters of a client-supplied value quoted back in a message


class Refusal(Exception):
    """A request refused before it reached a session: status, message, extra headers."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: int = INVALID_REQUEST,
        request_id: RequestId | None = None,
        headers: Sequence[tuple[str, str]] = (),
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.request_id = request_id
        self.headers = headers


@dataclass(slots=True, kw_only=True, frozen=True)
class AccessPolicy:
    """Who may talk to the endpoint: the Host names, the Origins, the token."""

    bind_host: str
    token: str | None = None
    allowed_origins: frozenset[str] = frozenset()

    @property
    def wildcard(self) -> bool:
        """Bound to every interface: the machine's own names are not known in advance."""
        return self.bind_host in ("0.0.0.0", "::", "")

    @classmethod
    def build(cls, bind_host: str, token: str | None, allowed_origins: Iterable[str]) -> AccessPolicy:
        return cls(
            bind_host=_bare_host(bind_host),
            token=token,
            allowed_origins=frozenset(_normal_origin(origin) for origin in allowed_origins),
        )


def check_origin(request: HttpRequest, policy: AccessPolicy) -> None:
    """Host and Origin (DNS rebinding protection); 403 when either is foreign."""
    _check_host(request.header("host"), policy)
    _check_origin(request.header("origin"), policy)


def check_token(request: HttpRequest, policy: AccessPolicy) -> None:
    """The bearer token, when the server has one; 401 without it.

    A CORS preflight (OPTIONS) needs none: browsers never send credentials with it.
    """
    if policy.token is None or request.method == "OPTIONS":
        return
    value = request.header("authorization")
    challenge = [("www-authenticate", "Bearer")]
    if value is None:
        raise Refusal(401, "Unauthorized: this server requires an 'Authorization: Bearer' token",
                      headers=challenge)
    scheme, _, given = value.partition(" ")
    # Compare in constant time so the token cannot be guessed byte by byte.
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), policy.token.encode()):
        raise Refusal(401, "Unauthorized: the bearer token is not valid",
                      headers=[("www-authenticate", 'Bearer error="invalid_token"')])


def cors_headers(request: HttpRequest) -> list[tuple[str, str]]:
    """For a request whose Origin passed the check: what lets that page read the answer."""
    origin = request.header("origin")
    if origin is None:
        return []
    return [
        ("access-control-allow-origin", origin.strip()),
        ("access-control-expose-headers", "mcp-session-id"),
        ("vary", "origin"),
    ]


def preflight_headers() -> list[tuple[str, str]]:
    """The answer to a CORS preflight from an allowed Origin (with ``cors_headers``)."""
    return [
        ("access-control-allow-methods", "GET, POST, DELETE"),
        ("access-control-allow-headers", _CORS_REQUEST_HEADERS),
        ("access-control-max-age", "600"),
    ]


def _check_host(value: str | None, policy: AccessPolicy) -> None:
    if value is None:  # h11 already refuses an HTTP/1.1 request without Host
        raise Refusal(403, "Forbidden: the request has no Host header")
    host = _bare_host(value)
    # Bound to all interfaces, an address literal is also accepted: DNS rebinding needs a
    # name (the attacker's), so an IP address in Host cannot be one.
    if host in LOOPBACK_NAMES or host == policy.bind_host or (policy.wildcard and _is_address(host)):
        return
    raise Refusal(
        403,
        f"Forbidden: Host {_shown(value)} is not this server's address "
        "(DNS rebinding protection; use localhost, 127.0.0.1 or [::1])",
    )


def _check_origin(value: str | None, policy: AccessPolicy) -> None:
    if value is None:  # not a browser, or a same-origin request: nothing to check
        return
    parts = urlsplit(value.strip())
    if parts.scheme in ("http", "https") and (parts.hostname or "") in LOOPBACK_NAMES:
        return
    if _normal_origin(value) in policy.allowed_origins:
        return
    raise Refusal(
        403,
        f"Forbidden: Origin {_shown(value)} is not allowed "
        "(DNS rebinding protection; allowed: localhost, 127.0.0.1, [::1] and the configured origins)",
    )


def check_post_headers(request: HttpRequest) -> None:
    """A POST must send JSON (415) and accept both JSON and SSE answers (406)."""
    if _media_types(request.header("content-type")) != ["application/json"]:
        raise Refusal(415, "Unsupported Media Type: Content-Type must be application/json")
    accepted = set(_media_types(request.header("accept")))
    if not {"application/json", "text/event-stream"} <= accepted:
        raise Refusal(
            406, "Not Acceptable: the Accept header must list both application/json and text/event-stream"
        )


def check_get_headers(request: HttpRequest) -> None:
    """A GET opens an event stream: it must accept one (406)."""
    if "text/event-stream" not in _media_types(request.header("accept")):
        raise Refusal(406, "Not Acceptable: a GET opens an event stream; the Accept header must list "
                           "text/event-stream")


def check_protocol_version(value: str | None) -> None:
    """The MCP-Protocol-Version header, when sent, must name a revision toolrelay speaks (400).

    A supported revision other than the negotiated one is accepted, as the official SDK
    servers and the conformance suite (``server-sse-multiple-streams``) expect; the
    session keeps the negotiated revision's behaviour."""
    if value is None:  # the spec says: assume 2025-03-26, which we accept
        return
    if value not in SUPPORTED_VERSIONS:
        raise Refusal(
            400,
            f"Bad Request: unsupported MCP-Protocol-Version {_shown(value)} "
            f"(supported: {', '.join(SUPPORTED_VERSIONS)})",
        )


def _media_types(value: str | None) -> list[str]:
    if value is None:
        return []
    return [part.split(";", 1)[0].strip().lower() for part in value.split(",") if part.strip()]


def _bare_host(value: str) -> str:
    """``[::1]:8080`` → ``::1``; ``Localhost:80`` → ``localhost``."""
    host = value.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    if host.count(":") == 1:  # name or IPv4 with a port; a bare IPv6 address has several colons
        return host.split(":", 1)[0]
    return host


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _normal_origin(value: str) -> str:
    return value.strip().rstrip("/").lower()


def _shown(value: str) -> str:
    """A client-supplied value, quoted and shortened, for an error message."""
    short = value if len(value) <= _SHOWN_MAX else value[:_SHOWN_MAX] + "..."
    return repr(short)
