"""MCP protocol revisions of the handshake era and how two sides agree on one (sans-IO).

A client asks for one revision in ``initialize``; the server answers with the same one
if it speaks it, else with one it prefers. The client accepts any revision it speaks and
otherwise must disconnect. Revisions after 2025-11-25 (2026-07-28 onwards) drop the
handshake altogether: each request names its revision (``protocol/request_envelope.py``), and
``MODERN_VERSIONS`` lists the ones toolrelay serves that way. By default the client finds
out which era a server speaks by probing (``AUTO``).
"""

from __future__ import annotations

from typing import Final

from ..errors import VersionMismatch

__all__ = [
    "AUTO",
    "DEFAULT_VERSION",
    "LATEST_MODERN_VERSION",
    "LATEST_VERSION",
    "MODERN_VERSIONS",
    "SEED_VERSION",
    "SUPPORTED_VERSIONS",
    "accept_server_version",
    "choose_server_version",
]

# Newest first.
SUPPORTED_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_VERSION: Final = SUPPORTED_VERSIONS[0]
# The stateless era: no handshake; every request carries its revision in ``_meta``.
MODERN_VERSIONS: Final = ("2026-07-28",)
LATEST_MODERN_VERSION: Final = MODERN_VERSIONS[0]
SEED_VERSION: Final = "2025-06-18"
"""What the seed is written against (the demo asks for it, so its files stay the seed's)."""
AUTO: Final = "auto"
"""Not a revision: probe with ``server/discover``, speak 2026-07-28 where the server does,
else the handshake asking ``LATEST_VERSION`` (``client/era_probe.py``)."""
DEFAULT_VERSION: Final = AUTO
"""What the client asks for unless told otherwise (``--protocol-version`` or the config's
``toolrelay.protocolVersion``): the probe."""


def choose_server_version(requested: object) -> str:
    """The server's answer: the client's revision when we speak it, else our latest."""
    if isinstance(requested, str) and requested in SUPPORTED_VERSIONS:
        return requested
    return LATEST_VERSION


def accept_server_version(server_name: str, asked: str, answered: object) -> str:
    """The client's check of the server's answer; raise VersionMismatch naming both."""
    if isinstance(answered, str) and answered in SUPPORTED_VERSIONS:
        return answered
    raise VersionMismatch(
        f"server {server_name} answered protocol version {answered!r} to our {asked!r}; "
        f"toolrelay speaks {', '.join(SUPPORTED_VERSIONS)} "
        "(choose one with --protocol-version)"
    )
