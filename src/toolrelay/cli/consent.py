"""Consent on the terminal: ``toolrelay run`` asks before a tool not marked read-only runs,
and every command asks before a server's sampling request goes to the model.

The question shows server, tool and arguments (for sampling: the server, the whole
prompt, the token limit); questions from concurrent calls are asked one at a time.
Without a terminal (and without ``--yes``) the call is refused with ``NO_TERMINAL_HINT``,
a sampling request with ``NO_TERMINAL_SAMPLING_HINT`` (the server gets error -1). The
approval policies themselves are in ``relay/stages/consent.py`` and ``client/host``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, TextIO

from ..client.host import SamplingApprover, SamplingRequest, refusing_approval
from ..relay.stages.consent import Approver
from ..relay.stages.route import Route

__all__ = [
    "NO_TERMINAL_HINT",
    "NO_TERMINAL_SAMPLING_HINT",
    "sampling_approver",
    "terminal_approver",
    "terminal_sampling_approver",
]

NO_TERMINAL_HINT = "no terminal to ask on; rerun with --yes to approve all calls"
NO_TERMINAL_SAMPLING_HINT = "no terminal to ask on; rerun with --yes to approve sampling requests"


def terminal_approver(
    ask_in: TextIO | None = None, ask_out: TextIO | None = None, lock: asyncio.Lock | None = None
) -> Approver:
    """Ask on the terminal, one question at a time even when calls run concurrently (``lock``
    is shared with the other prompts)."""
    lock = lock or asyncio.Lock()
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


def sampling_approver(yes: bool, lock: asyncio.Lock | None = None) -> SamplingApprover:
    """--yes approves every sampling request; a terminal asks; otherwise they are refused."""
    if yes:
        return _approve_sampling
    if sys.stdin.isatty() and sys.stderr.isatty():
        return terminal_sampling_approver(lock=lock)
    return refusing_approval(NO_TERMINAL_SAMPLING_HINT)


async def _approve_sampling(request: SamplingRequest) -> str | None:
    return None


def terminal_sampling_approver(ask_in: TextIO | None = None, ask_out: TextIO | None = None,
                               lock: asyncio.Lock | None = None) -> SamplingApprover:
    """Show which server asks the model, and the whole prompt; ask before it is sent."""
    guard = lock or asyncio.Lock()
    stdin = ask_in or sys.stdin
    stderr = ask_out or sys.stderr

    def ask(request: SamplingRequest) -> str:
        during = f", during call {request.call_id}" if request.call_id else ""
        tools = f", with {len(request.tools)} tool(s)" if request.tools else ""
        prompt = "\n".join("  " + line for line in request.prompt_text().splitlines())
        stderr.write(
            f"\nServer {request.server} asks the model for a message (sampling, up to {request.max_tokens} "
            f"tokens{tools}{during}):\n{prompt}\nSend it to the model? [y/N] "
        )
        stderr.flush()
        return stdin.readline().strip().lower()

    async def approve(request: SamplingRequest) -> str | None:
        async with guard:
            answer = await asyncio.to_thread(ask, request)
        return None if answer in ("y", "yes") else "the user declined"

    return approve
