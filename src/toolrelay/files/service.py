"""``FileService``: the hardened, read-only file server as a ``ToolService``.

The transports (stdio, Streamable HTTP) and ``ServerSession`` handle the protocol; this
class only maps a tool name to its function, picks the call's effective roots from its
context, and turns a ``ToolFailure`` into an ``isError`` result. An unknown tool name is
a protocol error (``UnknownTool`` → JSON-RPC -32602); everything the caller can correct
(arguments, paths, access, file content) is a tool execution error.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Sequence

from .._version import __version__
from ..protocol.jsonrpc import JSONObject
from ..server.app import CallContext, UnknownTool
from .declarations import TOOLS, declarations
from .failures import ToolFailure
from .results import error_result
from .roots import RootPolicy
from .sandbox import KERNEL_LOCATE, Root
from .tools import HANDLERS, Limits

__all__ = ["FileService"]

log = logging.getLogger("toolrelay.files")

INSTRUCTIONS = (
    "Read-only access to the files under the allowed directories (see list_allowed_directories). "
    "Paths may be absolute or relative to an allowed directory. read_text_file's head and tail "
    "return exactly what head -n N and tail -n N print."
)

if {tool["name"] for tool in TOOLS} != set(HANDLERS):  # a declaration without a handler, or the reverse
    raise RuntimeError("files: tool declarations and handlers disagree")


class FileService:
    """Serves the six read-only file tools inside ``roots`` (narrowed by client roots)."""

    name = "toolrelay-files"
    version = __version__
    instructions: str | None = INSTRUCTIONS
    uses_client_roots = True
    """Client roots narrow access: in MCP 2026-07-28 a client that declares roots is asked
    for them with each call (``server/stateless.py``)."""

    def __init__(
        self,
        roots: Sequence[Root],
        *,
        limits: Limits | None = None,
        kernel_locate: bool = KERNEL_LOCATE,
    ) -> None:
        self.limits = limits or Limits()
        self.roots = RootPolicy(roots, kernel_locate=kernel_locate)

    def tools(self) -> list[JSONObject]:
        return declarations()

    def call(
        self, name: str, arguments: JSONObject, context: CallContext
    ) -> JSONObject | Awaitable[JSONObject]:
        handler = HANDLERS.get(name)
        if handler is None:
            raise UnknownTool(name)
        try:
            outcome = handler(arguments, self.roots.sandbox(context), self.limits)
        except ToolFailure as failure:
            return error_result(failure.message)
        except OSError as exc:
            return _unexpected(name, exc)
        if isinstance(outcome, dict):
            return outcome
        return _settle(name, outcome)


async def _settle(name: str, pending: Awaitable[JSONObject]) -> JSONObject:
    try:
        return await pending
    except ToolFailure as failure:
        return error_result(failure.message)
    except OSError as exc:
        return _unexpected(name, exc)


def _unexpected(name: str, exc: OSError) -> JSONObject:
    """Safety net for an OS error no tool translated: its text may hold a resolved path, so only
    the error's kind is told (and logged in full on stderr)."""
    log.warning("%s failed: %r", name, exc)
    return error_result(f"{name} failed: {os.strerror(exc.errno) if exc.errno else type(exc).__name__}")
