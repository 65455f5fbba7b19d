"""A server entry's ``"toolrelay": {"oauth": {...}}`` block, read and checked.

    "toolrelay": {"oauth": {"clientId": "...", "clientSecret": "${env:SECRET}",
                            "scopes": ["files:read"], "clientMetadataUrl": "https://.../client.json"}}

``clientId`` (with ``clientSecret`` for a confidential client) is a pre-registered client:
it is used first. ``clientMetadataUrl`` is the URL of a Client ID Metadata Document that
describes toolrelay; it becomes the client id wherever the authorization server supports
such documents. ``scopes`` replaces the scopes toolrelay would ask for (those of the 401,
else those the server's metadata lists). Values are expanded like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from ...errors import ConfigError
from ..environment import ExpansionContext, expand

__all__ = ["OAUTH_KEYS", "OAuthSettings", "read_oauth"]

OAUTH_KEYS: Final = ("clientId", "clientSecret", "scopes", "clientMetadataUrl")


@dataclass(frozen=True, slots=True, kw_only=True)
class OAuthSettings:
    """What the config says about signing in to one server."""

    client_id: str | None = None
    """A pre-registered client id."""
    client_secret: str | None = None
    """Its secret (a confidential client); a secret, never shown."""
    scopes: tuple[str, ...] | None = None
    """The scopes to ask for, instead of those the server names."""
    client_metadata_url: str | None = None
    """The Client ID Metadata Document's URL, used as client id where supported."""

    def __repr__(self) -> str:  # the secret never shows
        return f"OAuthSettings(client_id={self.client_id!r}, scopes={self.scopes!r})"


def read_oauth(raw: Any, context: ExpansionContext, where: str) -> OAuthSettings:
    """The ``oauth`` block of an entry; ConfigError naming the key for anything unusable."""
    where = f"{where}, toolrelay.oauth"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: must be an object")
    unknown = sorted(set(raw) - set(OAUTH_KEYS))
    if unknown:
        raise ConfigError(f'{where}: unknown key "{unknown[0]}" (known: {", ".join(OAUTH_KEYS)})')
    text = {key: _text(raw, key, context, where) for key in ("clientId", "clientSecret", "clientMetadataUrl")}
    if text["clientSecret"] is not None and text["clientId"] is None:
        raise ConfigError(f'{where}: "clientSecret" needs "clientId"')
    metadata_url = text["clientMetadataUrl"]
    if metadata_url is not None:
        _check_metadata_url(metadata_url, where)
    return OAuthSettings(
        client_id=text["clientId"], client_secret=text["clientSecret"],
        scopes=_scopes(raw["scopes"], context, where) if "scopes" in raw else None,
        client_metadata_url=metadata_url,
    )


def _text(raw: dict[str, Any], key: str, context: ExpansionContext, where: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f'{where}: "{key}" must be a non-empty string')
    return expand(value, context, f"{where}.{key}")


def _scopes(raw: Any, context: ExpansionContext, where: str) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(s, str) for s in raw):
        raise ConfigError(f'{where}: "scopes" must be an array of scope names')
    scopes = [expand(s, context, f"{where}.scopes") for s in raw]
    if any(not s or " " in s for s in scopes):
        raise ConfigError(f'{where}: "scopes" must hold scope names without spaces')
    return tuple(scopes)


def _check_metadata_url(url: str, where: str) -> None:
    """A client id that is a URL must be https with a path (the CIMD rules)."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname or parts.path in ("", "/") or parts.fragment:
        raise ConfigError(f'{where}: "clientMetadataUrl" must be an https:// URL with a path, got {url!r}')
