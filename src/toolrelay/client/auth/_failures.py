"""What makes a sign-in or a refresh fail, inside this package; ``session.py`` turns each
into a ``TransportError`` naming the server (so these never escape a public call)."""

from __future__ import annotations

__all__ = ["GrantRefused", "NoResourceMetadata", "SignInFailed"]


class SignInFailed(Exception):
    """The sign-in cannot go on: the message says why, never with a secret in it."""


class GrantRefused(SignInFailed):
    """The authorization server refused a refresh token (``invalid_grant``): it expired or
    was revoked, so only a new sign-in helps."""


class NoResourceMetadata(SignInFailed):
    """The server publishes no resource metadata where it was looked for: it may not use
    OAuth at all (a sign-in the user asked for then waits for the server's 401)."""
