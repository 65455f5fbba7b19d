"""PKCE with S256 (RFC 7636) and the ``state`` of one authorization request."""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass, field

__all__ = ["Pkce", "s256"]


def _random_text() -> str:
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()


def s256(verifier: str) -> str:
    """BASE64URL(SHA256(verifier)), without padding."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


@dataclass(frozen=True, slots=True)
class Pkce:
    """One authorization request's secrets: the code verifier and the state (43 characters
    each, from 256 random bits)."""

    verifier: str = field(default_factory=_random_text)
    state: str = field(default_factory=_random_text)

    @property
    def challenge(self) -> str:
        return s256(self.verifier)
