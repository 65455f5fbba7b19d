"""How toolrelay words an answer it refuses: too large (the stdio and HTTP paths), not a
JSON-RPC response (the connection, and ``verify`` re-reading a recorded one), or a sampling
request past the per-call cap (the host, and ``verify`` counting them)."""

from __future__ import annotations

from typing import Final

from ..protocol.jsonrpc import RequestId, id_text

__all__ = ["CAP_HINT", "malformed_answer_message", "size_text", "too_large_message"]

CAP_HINT: Final = "(--max-sampling-per-call or the config's maxSamplingPerCall raises the cap)"
"""How toolrelay's refusal of a sampling request past the per-call cap ends (``verify`` counts them)."""


def malformed_answer_message(server: str, method: str, mcp_id: RequestId, reason: str) -> str:
    """``server box sent a malformed answer to tools/call request 3: Invalid Request: ...``."""
    return f"server {server} sent a malformed answer to {method} request {id_text(mcp_id)}: {reason}"


def too_large_message(method: str | None, mcp_id: RequestId | None, size: int | None, limit: int) -> str:
    """``response to tools/call request 7 is 52,428,912 bytes, above the 4 MiB limit``."""
    what = f"response to {method} request {id_text(mcp_id)}" if method else "a message"
    if size is None:  # a stream cut off at the limit: the full size is never known
        return f"{what} exceeds the {size_text(limit)} limit"
    return f"{what} is {size:,} bytes, above the {size_text(limit)} limit"


def size_text(limit: int) -> str:
    """A byte count as people write limits: 4 MiB, 256 KiB, else bytes."""
    for unit, factor in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if limit % factor == 0:
            return f"{limit // factor} {unit}"
    return f"{limit:,} bytes"
