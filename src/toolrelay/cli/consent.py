"""Consent on the terminal: ``toolrelay run`` asks before a tool not marked read-only runs.

The question shows server, tool and arguments; questions from concurrent calls are asked
one at a time. Without a terminal (and without ``--yes``) the call is refused with
``NO_TERMINAL_HINT``. The approval policies themselves are in ``relay/consent.py``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, TextIO

from ..relay.consent import Approver
from ..relay.route import Route

__all__ = ["NO_TERMINAL_HINT", "terminal_approver"]

NO_TERMINAL_HINT = "no terminal to ask on; rerun with --yes to approve all calls"


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
