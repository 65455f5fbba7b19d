"""How toolrelay words a message refused for its size (shared by the stdio and HTTP paths)."""

from __future__ import annotations

from ..protocol.jsonrpc import RequestId, id_text

__all__ = ["size_text", "too_large_message"]


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
