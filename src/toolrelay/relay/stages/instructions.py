"""Stage 2, request (instructions): the run's own instructions plus each server's.

A server may send ``instructions`` in its ``initialize`` result: how to use its tools.
A host passes them on to the model; toolrelay adds one labelled block per server after
the user's own instructions, in config order. They are the server's words, not the
user's: ``--no-server-instructions`` leaves them out (for a server one does not trust),
and each block is capped so a server cannot fill the context.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = ["MAX_SERVER_INSTRUCTIONS", "server_block", "with_server_instructions"]

MAX_SERVER_INSTRUCTIONS: Final = 8_000
"""Characters of one server's instructions passed on; the rest is cut with a note."""


def server_block(server: str, text: str) -> str:
    """One server's instructions, labelled with its name (and cut to the cap)."""
    kept = text.strip()
    if len(kept) > MAX_SERVER_INSTRUCTIONS:
        extra = len(kept) - MAX_SERVER_INSTRUCTIONS
        kept = kept[:MAX_SERVER_INSTRUCTIONS] + f"\n[… {extra} more characters cut by toolrelay]"
    return f'Instructions from the MCP server "{server}" (about its tools):\n{kept}'


def with_server_instructions(own: str | None, servers: Mapping[str, str] | None) -> str | None:
    """``own`` followed by each server's labelled block; None when there is nothing."""
    blocks = [server_block(name, text) for name, text in (servers or {}).items() if text.strip()]
    parts = [own] if own else []
    return "\n\n".join(parts + blocks) or None
