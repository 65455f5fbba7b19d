"""Consent on the terminal: ``toolrelay run`` asks before a tool not marked read-only runs,
and every command asks before a server's sampling request goes to the model.

The question shows server, tool and arguments (for sampling: the server, the whole
prompt, the token limit); questions from concurrent calls are asked one at a time. A
call's question takes ``y`` (this call), ``a`` (always for this tool, this run), ``s``
(always for this tool on this server: saved in the state folder, ``relay/approvals.py``)
or ``n``; ``a`` and ``s`` go into the run's ``ConsentMemory``, which the policy consults
before asking again and records as it does (``relay/policy.py``).
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
from ..errors import UsageError
from ..relay.approvals import ApprovalStore
from ..relay.policy import NO_POLICY, Policy
from ..relay.stages.consent import Approver, ConsentMemory
from ..relay.stages.route import Route

__all__ = [
    "NO_TERMINAL_HINT",
    "NO_TERMINAL_SAMPLING_HINT",
    "remembering",
    "sampling_approver",
    "terminal_approver",
    "terminal_sampling_approver",
]

NO_TERMINAL_HINT = "no terminal to ask on; rerun with --yes to approve all calls"
NO_TERMINAL_SAMPLING_HINT = "no terminal to ask on; rerun with --yes to approve sampling requests"


CALL_QUESTION = ("Allow? [y] this call, [a] always for this tool this run, "
                 "[s] always for this tool on this server (saved), [N]o: ")
_REMEMBER = {"a": "run", "always": "run", "s": "saved", "save": "saved"}


def terminal_approver(
    ask_in: TextIO | None = None, ask_out: TextIO | None = None, lock: asyncio.Lock | None = None,
    memory: ConsentMemory | None = None,
) -> Approver:
    """Ask on the terminal, one question at a time even when calls run concurrently (``lock``
    is shared with the other prompts); ``a`` and ``s`` answers go into ``memory`` (without
    one, only ``y`` and ``n`` are offered)."""
    lock = lock or asyncio.Lock()
    stdin = ask_in or sys.stdin
    stderr = ask_out or sys.stderr

    def ask(route: Route, arguments: dict[str, Any]) -> str:
        shown = json.dumps(arguments, ensure_ascii=False)
        why = "a policy rule asks" if route.read_only else "not marked read-only"
        stderr.write(
            f"\nThe model wants to run {route.tool} on server {route.server} ({why})\n"
            f"  arguments: {shown[:2000]}\n{CALL_QUESTION if memory is not None else 'Allow? [y/N] '}"
        )
        stderr.flush()
        return stdin.readline().strip().lower()

    async def approve(route: Route, arguments: dict[str, Any]) -> str | None:
        async with lock:
            if memory is not None and memory.remembered(route.server, route.tool) is not None:
                return None  # answered while this call waited for its turn to ask
            answer = await asyncio.to_thread(ask, route, arguments)
        if answer in ("y", "yes"):
            return None
        if memory is not None and answer in _REMEMBER:
            try:
                memory.remember(route.server, route.tool, _REMEMBER[answer])
            except UsageError as exc:  # the state folder cannot be written: it holds for this run
                stderr.write(f"toolrelay: {exc}; approved for this run only\n")
                memory.remember(route.server, route.tool, "run")
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


def remembering(policy: Policy | None, *, asking: bool, store: ApprovalStore | None = None) -> Policy | None:
    """The run's policy with a ``ConsentMemory`` (``a`` and ``s`` answers, and the approvals
    saved by earlier runs) when anyone could be asked: the terminal prompt, or a saved
    approval standing in for it; a policy of no rules when no file gives one (it only
    remembers, and records what it remembered). None when nobody asks and nothing is saved."""
    store = store or ApprovalStore()
    if policy is None and not asking and not store.has_any():
        return policy
    chosen = policy or Policy(rules=(), source=NO_POLICY)
    chosen.remember(ConsentMemory(), store)
    return chosen
