"""Token requests and answers (OAuth 2.1): the authorization code and the refresh token,
with the client authentication the server supports (``client_secret_basic``,
``client_secret_post`` or ``none``), and the ``resource`` indicator (RFC 8707) in each.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote_plus

from ...protocol import json_depth
from ._failures import GrantRefused, SignInFailed

__all__ = [
    "Client", "TokenCall", "Tokens", "bearer_token_ok", "code_request", "read_tokens", "refresh_request",
    "token_error",
]

_B64TOKEN: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
"""RFC 6750's b64token: all an ``Authorization: Bearer`` header may carry (no space, no line break)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Client:
    """The client toolrelay is at one authorization server."""

    client_id: str
    client_secret: str | None = None
    auth_method: str = "none"
    """How it authenticates at the token endpoint: client_secret_basic, client_secret_post, none."""
    redirect_uri: str
    registered_by: str
    """``config`` (pre-registered), ``metadata document`` (CIMD) or ``registration`` (DCR)."""
    expires_at: float | None = None
    """When a registration's secret expires (``client_secret_expires_at``), if it does."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Tokens:
    """What a token endpoint granted."""

    access_token: str
    refresh_token: str | None = None
    expires_at: float | None = None
    """Epoch seconds; None when the server did not say."""
    scope: str | None = None

    def expired(self, now: float, margin: float = 30.0) -> bool:
        """Whether the access token expires within ``margin`` seconds."""
        return self.expires_at is not None and self.expires_at - margin <= now


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenCall:
    """A POST to the token endpoint: form fields and headers."""

    form: dict[str, str]
    headers: dict[str, str]


def code_request(client: Client, *, code: str, verifier: str, resource: str) -> TokenCall:
    """Redeem an authorization code (with its PKCE verifier)."""
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": client.redirect_uri,
            "code_verifier": verifier, "resource": resource}
    return _authenticated(client, form)


def refresh_request(client: Client, *, refresh_token: str, resource: str) -> TokenCall:
    """Trade a refresh token for a new access token."""
    return _authenticated(client, {"grant_type": "refresh_token", "refresh_token": refresh_token,
                                   "resource": resource})


def _authenticated(client: Client, form: dict[str, str]) -> TokenCall:
    """The client's authentication, as its method says."""
    headers = {"accept": "application/json"}
    if client.auth_method == "client_secret_basic" and client.client_secret is not None:
        pair = f"{quote_plus(client.client_id)}:{quote_plus(client.client_secret)}"  # RFC 6749 §2.3.1
        headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    elif client.auth_method == "client_secret_post" and client.client_secret is not None:
        form |= {"client_id": client.client_id, "client_secret": client.client_secret}
    else:
        form |= {"client_id": client.client_id}
    return TokenCall(form=form, headers=headers)


def read_tokens(body: bytes, now: float, *, previous_refresh: str | None = None) -> Tokens:
    """A successful token answer; a refresh that brings no new refresh token keeps the old one."""
    document = _object(body)
    access = document.get("access_token")
    if not isinstance(access, str) or not access:
        raise SignInFailed("the token answer has no access_token")
    if not bearer_token_ok(access):  # the value is never quoted: it may be a working token
        raise SignInFailed("the token answer's access_token has characters a Bearer token cannot carry "
                           "(RFC 6750 allows letters, digits, -._~+/ and a trailing =): refused")
    kind = document.get("token_type")
    if not isinstance(kind, str) or kind.lower() != "bearer":
        raise SignInFailed(f"the token answer's token_type is {kind!r}, not Bearer")
    lifetime = document.get("expires_in")
    expires_at = None
    if isinstance(lifetime, (int, float)) and not isinstance(lifetime, bool) and math.isfinite(lifetime):
        expires_at = now + max(0.0, float(lifetime))
    refresh = document.get("refresh_token")
    scope = document.get("scope")
    if not isinstance(refresh, str):
        refresh = previous_refresh
    return Tokens(access_token=access, refresh_token=refresh, expires_at=expires_at,
                  scope=scope if isinstance(scope, str) else None)


def bearer_token_ok(token: str) -> bool:
    """Whether ``token`` can go in an ``Authorization: Bearer`` header as it is (RFC 6750)."""
    return _B64TOKEN.fullmatch(token) is not None


def token_error(status: int, body: bytes, *, refreshing: bool) -> SignInFailed:
    """A refused token request, in words (the server's ``error`` and description); a refused
    refresh token is a ``GrantRefused``."""
    try:
        document = _object(body)
    except SignInFailed:
        document = {}
    error = document.get("error")
    described = document.get("error_description")
    said = f"{error}" if isinstance(error, str) else f"HTTP {status}"
    if isinstance(described, str) and described:
        said += f" ({described[:200]})"
    if refreshing and error in ("invalid_grant", "invalid_token", "unauthorized_client", "invalid_client"):
        return GrantRefused(f"the refresh token was refused: {said}")
    return SignInFailed(f"the token endpoint answered HTTP {status}: {said}")


def _object(body: bytes) -> Mapping[str, Any]:
    try:
        document = json_depth.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise SignInFailed("the token endpoint did not answer JSON") from None
    if not isinstance(document, dict):
        raise SignInFailed("the token endpoint did not answer a JSON object")
    return document
