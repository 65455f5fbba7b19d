"""Tool failures of the file service: what the model sees when a call cannot succeed.

A ``ToolFailure`` ends one tool call and becomes a ``CallToolResult`` with
``isError: true`` (never a JSON-RPC error), so the model can read it and correct
itself. Operating-system errors are translated here, once, into messages that name
only what the caller asked for: never a resolved path, never a path outside the roots.
"""

from __future__ import annotations

import errno
import os
from typing import Final

__all__ = ["ACCESS_DENIED", "ToolFailure", "denied", "os_failure"]

ACCESS_DENIED: Final = "Access denied - path outside allowed directories"

# errno → what the caller is told (with the path as they wrote it).
_OS_MESSAGES: Final[dict[int, str]] = {
    errno.ENOENT: "No such file or directory",
    errno.ENOTDIR: "Not a directory",
    errno.EISDIR: "Is a directory",
    errno.EACCES: "Permission denied",
    errno.EPERM: "Operation not permitted",
    errno.ENAMETOOLONG: "File name too long",
    errno.ENXIO: "Not a regular file",
}


class ToolFailure(Exception):
    """One tool call failed; ``message`` is the text the caller receives."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def denied() -> ToolFailure:
    """The one denial text: it reveals nothing about what exists outside the roots."""
    return ToolFailure(ACCESS_DENIED)


def os_failure(exc: OSError, requested: str) -> ToolFailure:
    """An OSError on a path inside the roots, described without the resolved path."""
    if exc.errno == errno.ELOOP:  # a symlink loop, or a link where none may be
        return denied()
    reason = _OS_MESSAGES.get(exc.errno or 0) or os.strerror(exc.errno or 0) or type(exc).__name__
    return ToolFailure(f"{reason}: {requested}")
