"""Where a server's authorization metadata is, and what makes a document acceptable.

Protected Resource Metadata (RFC 9728) is tried at the URL the 401 names, then at the
path-based well-known URL, then at the root one. The authorization server's metadata
(RFC 8414, OpenID Connect discovery) is tried in the order MCP gives: for an issuer with a
path ``/tenant1``, ``/.well-known/oauth-authorization-server/tenant1``, then
``/.well-known/openid-configuration/tenant1``, then ``/tenant1/.well-known/openid-configuration``;
for one without, the first two without the path.

A document is refused when it would let one server obtain a token meant for another:
resource metadata whose ``resource`` is not this server (another origin, another path),
and server metadata whose ``issuer`` is not the one its URL was built from. Endpoints must
be https (plain http only on loopback), and PKCE S256 must be advertised.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from ...protocol import json_depth
from ._failures import SignInFailed

__all__ = [
    "ResourceMetadata",
    "ServerMetadata",
    "canonical_resource",
    "check_endpoint",
    "read_resource_metadata",
    "read_server_metadata",
    "resource_metadata_urls",
    "secure_url",
    "server_metadata_urls",
]

_PRM: Final = "/.well-known/oauth-protected-resource"
_OAUTH: Final = "/.well-known/oauth-authorization-server"
_OPENID: Final = "/.well-known/openid-configuration"
_LOOPBACK: Final = frozenset({"localhost", "127.0.0.1", "::1"})


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceMetadata:
    """An MCP server's Protected Resource Metadata."""

    resource: str
    """The resource indicator to ask tokens for (RFC 8707), as the server wrote it."""
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerMetadata:
    """An authorization server's metadata, as far as toolrelay uses it."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None
    scopes_supported: tuple[str, ...] | None
    token_auth_methods: tuple[str, ...]
    """``token_endpoint_auth_methods_supported`` (RFC 8414's default: client_secret_basic)."""
    client_id_documents: bool
    """``client_id_metadata_document_supported``."""
    iss_in_response: bool
    """``authorization_response_iss_parameter_supported`` (RFC 9207)."""


def canonical_resource(url: str) -> str:
    """The canonical URI of an MCP server: lower-case scheme and host, no query, no
    fragment, no trailing slash (``HTTPS://Mcp.Example/mcp/`` → ``https://mcp.example/mcp``)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), _netloc(url), parts.path.rstrip("/"), "", ""))


def resource_metadata_urls(server_url: str, named: str | None) -> list[str]:
    """Where to look for the server's resource metadata, in order."""
    parts = urlsplit(server_url)
    origin = f"{parts.scheme.lower()}://{_netloc(server_url)}"
    path = parts.path.rstrip("/")
    urls = [named] if named else []
    if path:
        urls.append(f"{origin}{_PRM}{path}")
    urls.append(f"{origin}{_PRM}")
    return list(dict.fromkeys(urls))


def server_metadata_urls(issuer: str) -> list[str]:
    """Where to look for an authorization server's metadata, in MCP's order."""
    parts = urlsplit(issuer)
    origin = f"{parts.scheme.lower()}://{_netloc(issuer)}"
    path = parts.path.rstrip("/")
    if path:
        return [f"{origin}{_OAUTH}{path}", f"{origin}{_OPENID}{path}", f"{origin}{path}{_OPENID}"]
    return [f"{origin}{_OAUTH}", f"{origin}{_OPENID}"]


def read_resource_metadata(body: bytes, server_url: str) -> ResourceMetadata:
    """The resource metadata in ``body``, checked against the server it is for."""
    document = _object(body, "the resource metadata")
    resource = document.get("resource")
    if not isinstance(resource, str) or not resource:
        raise SignInFailed("the resource metadata names no resource")
    if urlsplit(resource).fragment or not _covers(resource, server_url):
        raise SignInFailed(f"the resource metadata is for {resource}, not for this server "
                           f"({canonical_resource(server_url)}): refused")
    servers = document.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not all(isinstance(s, str) for s in servers):
        raise SignInFailed("the resource metadata names no authorization server")
    for issuer in servers:
        check_endpoint(issuer, "authorization server")
    return ResourceMetadata(resource=resource, authorization_servers=tuple(servers),
                            scopes_supported=_strings(document.get("scopes_supported")))


def read_server_metadata(body: bytes, issuer: str) -> ServerMetadata:
    """The authorization server metadata in ``body``, for ``issuer`` exactly."""
    document = _object(body, "the authorization server metadata")
    said = document.get("issuer")
    if not isinstance(said, str) or not _same_issuer(said, issuer):
        raise SignInFailed(f"the authorization server metadata is for issuer {said!r}, not {issuer!r}: "
                           "refused")
    methods = _strings(document.get("code_challenge_methods_supported")) or ()
    if "S256" not in methods:
        raise SignInFailed(f"the authorization server {issuer} does not advertise PKCE with S256 "
                           "(code_challenge_methods_supported): refused")
    endpoints = {key: document.get(key) for key in ("authorization_endpoint", "token_endpoint")}
    for key, value in endpoints.items():
        if not isinstance(value, str):
            raise SignInFailed(f"the authorization server metadata has no {key}")
        check_endpoint(value, key.replace("_", " "))
    registration = document.get("registration_endpoint")
    if registration is not None and not isinstance(registration, str):
        registration = None
    if registration is not None:
        check_endpoint(registration, "registration endpoint")
    return ServerMetadata(
        issuer=said, authorization_endpoint=str(endpoints["authorization_endpoint"]),
        token_endpoint=str(endpoints["token_endpoint"]), registration_endpoint=registration,
        scopes_supported=_strings(document.get("scopes_supported")),
        token_auth_methods=_strings(document.get("token_endpoint_auth_methods_supported"))
        or ("client_secret_basic",),
        client_id_documents=document.get("client_id_metadata_document_supported") is True,
        iss_in_response=document.get("authorization_response_iss_parameter_supported") is True,
    )


def _same_issuer(said: str, asked: str) -> bool:
    """Identical, allowing only the trailing slash of an issuer without a path."""
    return said == asked or (urlsplit(asked).path in ("", "/") and said.rstrip("/") == asked.rstrip("/"))


def _covers(resource: str, server_url: str) -> bool:
    """Whether ``resource`` names this server: same origin, and a path the server's starts with."""
    mine, theirs = urlsplit(canonical_resource(server_url)), urlsplit(canonical_resource(resource))
    if (mine.scheme, mine.netloc) != (theirs.scheme, theirs.netloc):
        return False
    return mine.path == theirs.path or mine.path.startswith(theirs.path.rstrip("/") + "/")


def secure_url(url: str) -> bool:
    """https, or plain http on this machine only (``localhost``, ``127.0.0.1``, ``[::1]``):
    where a token or a client's secret may go."""
    parts = urlsplit(url)
    return parts.scheme == "https" or (parts.scheme == "http" and (parts.hostname or "") in _LOOPBACK)


def check_endpoint(url: str, what: str) -> None:
    """Refuse an endpoint that is not ``secure_url`` (or has no host, or a fragment)."""
    parts = urlsplit(url)
    if not secure_url(url) or not parts.hostname or parts.fragment:
        raise SignInFailed(f"the {what} {url!r} is not an https URL (plain http only on loopback): refused")


def _netloc(url: str) -> str:
    """``host[:port]`` in lower case, IPv6 in brackets, without user info."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{parts.port}" if parts.port else host


def _object(body: bytes, what: str) -> Mapping[str, Any]:
    try:
        document = json_depth.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise SignInFailed(f"{what} is not JSON") from None
    if not isinstance(document, dict):
        raise SignInFailed(f"{what} is not a JSON object")
    return document


def _strings(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None
