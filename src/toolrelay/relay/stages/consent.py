"""Consent: a tool whose annotations do not say ``readOnlyHint: true`` runs only after approval.

Annotations are hints from the server; only an explicit read-only hint skips the
question. Who approves is the caller's choice, an ``Approver`` callback: ``approve_all``
(``--yes``), ``refusing(hint)`` (nobody can approve; the model is told why), or one that
asks someone (the CLI's terminal prompt lives in ``cli/consent.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .route import Route

__all__ = ["LIBRARY_HINT", "Approver", "approve_all", "refusing"]

Approver = Callable[[Route, dict[str, Any]], Awaitable[str | None]]
"""Asked before a tool that is not read-only runs: None approves, a string is the refusal."""

LIBRARY_HINT = "pass approve= to approve calls"


async def approve_all(route: Route, arguments: dict[str, Any]) -> str | None:
    """``--yes``: every call is approved."""
    return None


def refusing(hint: str) -> Approver:
    """Nobody can approve: every call that needs consent is refused, with ``hint``."""

    async def refuse(route: Route, arguments: dict[str, Any]) -> str | None:
        why = "needs consent" if route.read_only else "is not marked read-only"  # read-only: a policy asks
        return f"tool {route.tool} on server {route.server} {why} and was not approved ({hint})"

    return refuse
