"""Which client toolrelay is at an authorization server, in MCP's order of preference:

1. a client pre-registered in the config (``clientId``, with ``clientSecret`` if it has one);
2. a Client ID Metadata Document (``clientMetadataUrl``), where the server supports them;
3. the client registered earlier at this server (kept with the grant), for the same redirect;
4. Dynamic Client Registration (RFC 7591) at the server's ``registration_endpoint``.

Without any of them the server cannot be signed in to, and the message says what to add.
"""

from __future__ import annotations

import math
from typing import Any, Final

from ...protocol import json_depth
from ._failures import SignInFailed
from .metadata import ServerMetadata
from .settings import OAuthSettings
from .tokens import Client

__all__ = ["CLIENT_NAME", "choose_client", "read_registration", "registration_body"]

CLIENT_NAME: Final = "toolrelay"
_SECRET_METHODS: Final = ("client_secret_basic", "client_secret_post")


def choose_client(
    settings: OAuthSettings | None, metadata: ServerMetadata, earlier: Client | None, redirect_uri: str,
    now: float,
) -> Client | None:
    """The client to use without registering, or None when one must be registered now."""
    if settings is not None and settings.client_id is not None:
        return Client(client_id=settings.client_id, client_secret=settings.client_secret,
                      auth_method=_secret_method(metadata) if settings.client_secret else "none",
                      redirect_uri=redirect_uri, registered_by="config")
    if settings is not None and settings.client_metadata_url is not None and metadata.client_id_documents:
        return Client(client_id=settings.client_metadata_url, redirect_uri=redirect_uri,
                      registered_by="metadata document")
    if earlier is not None and _still_usable(earlier, redirect_uri, now):
        return earlier
    if metadata.registration_endpoint is not None:
        return None
    raise SignInFailed(
        f"the authorization server {metadata.issuer} offers no way to register toolrelay (no "
        'registration endpoint, no client id metadata documents): add "clientId" to the server\'s '
        '"toolrelay": {"oauth": {...}} in the config'
    )


def _still_usable(earlier: Client, redirect_uri: str, now: float) -> bool:
    """A client registered before, for this redirect, whose secret has not expired."""
    fresh = earlier.expires_at is None or earlier.expires_at > now
    return earlier.registered_by == "registration" and earlier.redirect_uri == redirect_uri and fresh


def registration_body(metadata: ServerMetadata, redirect_uri: str) -> dict[str, Any]:
    """The Dynamic Client Registration request: a native (loopback) client."""
    return {
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": _registered_method(metadata),
        "application_type": "native",
    }


def read_registration(body: bytes, metadata: ServerMetadata, redirect_uri: str) -> Client:
    """The client the registration answer describes."""
    try:
        document = json_depth.loads(body)
    except (ValueError, UnicodeDecodeError):
        document = None
    if not isinstance(document, dict) or not isinstance(document.get("client_id"), str):
        raise SignInFailed("the registration answer has no client_id")
    secret = document.get("client_secret")
    secret = secret if isinstance(secret, str) and secret else None
    method = document.get("token_endpoint_auth_method")
    if not isinstance(method, str):
        method = _registered_method(metadata)
    if method in _SECRET_METHODS and secret is None:
        method = "none"
    expires = document.get("client_secret_expires_at")
    expires_at = float(expires) if isinstance(expires, (int, float)) and not isinstance(expires, bool) \
        and math.isfinite(expires) and expires > 0 else None
    return Client(client_id=document["client_id"], client_secret=secret, auth_method=method,
                  redirect_uri=redirect_uri, registered_by="registration", expires_at=expires_at)


def _registered_method(metadata: ServerMetadata) -> str:
    """A public client where allowed; else a secret sent as the server prefers."""
    return "none" if "none" in metadata.token_auth_methods else _secret_method(metadata)


def _secret_method(metadata: ServerMetadata) -> str:
    supported = metadata.token_auth_methods
    return next((method for method in _SECRET_METHODS if method in supported), "client_secret_basic")
