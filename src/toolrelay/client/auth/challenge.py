"""``WWW-Authenticate`` read: what a 401 or 403 of an MCP server asks for (RFC 6750, RFC 9728).

    WWW-Authenticate: Bearer resource_metadata="https://mcp.example/.well-known/oauth-
        protected-resource/mcp", scope="files:read", error="insufficient_scope"

A header may hold several challenges (``Basic realm="x", Bearer scope="a"``); the Bearer
one is read. Parameter values are tokens or quoted strings (with ``\\`` escapes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = ["Challenge", "read_challenge"]

_ITEM: Final = re.compile(
    r'\s*(?P<name>[!#$%&\'*+.^_`|~0-9A-Za-z-]+)'
    r'(?:\s*=\s*(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<token>[^\s,"]+)))?\s*,?'
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Challenge:
    """The Bearer challenge of one 401 / 403 answer (every field None when absent)."""

    status: int
    resource_metadata: str | None = None
    """The URL of the server's Protected Resource Metadata (RFC 9728)."""
    scope: str | None = None
    """The scopes the server asks for (space-separated), authoritative when given."""
    error: str | None = None
    """``invalid_token``, ``insufficient_scope``, ..."""
    error_description: str | None = None

    @property
    def scopes(self) -> tuple[str, ...] | None:
        return tuple(self.scope.split()) if self.scope is not None else None

    @property
    def insufficient_scope(self) -> bool:
        """A 403 that asks for more scopes: a step-up (SEP-835)."""
        return self.status == 403 and self.error == "insufficient_scope"


def read_challenge(status: int, header: str | None) -> Challenge:
    """The Bearer challenge in ``header`` (an empty one when there is none)."""
    params = _bearer_params(header or "")
    return Challenge(
        status=status, resource_metadata=params.get("resource_metadata"), scope=params.get("scope"),
        error=params.get("error"), error_description=params.get("error_description"),
    )


def _bearer_params(header: str) -> dict[str, str]:
    """The auth-params of the Bearer challenge; later schemes end it."""
    params: dict[str, str] = {}
    scheme: str | None = None
    position = 0
    while position < len(header):
        item = _ITEM.match(header, position)
        if item is None or item.end() == position:
            break
        position = item.end()
        quoted = item.group("quoted")
        value = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else item.group("token")
        if value is None:  # a bare token: the next challenge's scheme
            scheme = item.group("name").lower()
            continue
        if scheme == "bearer":
            params.setdefault(item.group("name").lower(), value)
    return params
