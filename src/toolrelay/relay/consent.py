"""Consent: a tool whose annotations do not say ``readOnlyHint: true`` runs only after approval.

Annotations are hints from the server; only an explicit read-only hint skips the
question. On a terminal the user is asked (server, tool and arguments shown); ``--yes``
approves everything; with neither, the call is refused and the model is told why.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, TextIO

from .loop import Approver
from .route import Route

__all__ = [
    "LIBRARY_HINT", "NO_TERMINAL_HINT", "approve_all", "refusing", "terminal_approver",
]


async def approve_all(route: Route, arguments: dict[str, Any]) -> str | None:
    """``--yes``: every call is approved."""
    return None


def refusing(hint: str) -> Approver:
    """Nobody can approve: every call that needs consent is refused, with ``hint``."""

    async def refuse(route: Route, arguments: dict[str, Any]) -> str | None:
        return (
            f"tool {route.tool} on server {route.server} is not marked read-only and was not "
            f"approved ({hint})"
        )

    return refuse


NO_TERMINAL_HINT = "no terminal to ask on; rerun with --yes to approve all calls"
LIBRARY_HINT = "pass approve= to approve calls"


def terminal_approver(ask_in: TextIO | None = None, ask_out: TextIO | None = None) -> Approver:
    """Ask on the terminal, one question at a time even when calls run concurrently."""
    lock = asyncio.Lock()
    stdin = ask_in or sys.stdin
    stderr = ask_out or sys.stderr

    def ask(route: Route, arguments: dict[str, Any]) -> str:
        shown = json.dumps(arguments, ensure_ascii=False)
        stderr.write(
            f"\nThe model wants to run {route.tool} on server {route.server} (not marked read-only)\n"
            f"  arguments: {shown[:2000]}\nAllow? [y/N] "
        )
        stderr.flush()
        return stdin.readline().strip().lower()

    async def approve(route: Route, arguments: dict[str, Any]) -> str | None:
        async with lock:
            answer = await asyncio.to_thread(ask, route, arguments)
        if answer in ("y", "yes"):
            return None
        return f"the user declined to run {route.tool} on server {route.server}"

    return approve
