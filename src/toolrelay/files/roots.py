"""Which directories a call may touch: the command line's roots, narrowed by the client's.

Unlike the reference server (where the client's roots replace the command-line ones), a
client's roots can only *narrow* access: the effective roots are the intersection of the
two sets of subtrees. A client root inside a command-line root narrows to it; a
command-line root inside a client root stays as it is; anything else gives nothing.
Started without a ROOT, the server serves exactly the client's roots, and until it has
some, every call fails with a message saying why.

Client root URIs must be ``file://`` URIs of existing directories; others are ignored
(and logged). Symlinks are resolved once, when the client's list arrives.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Final
from urllib.parse import unquote, urlsplit

from ..errors import UsageError
from ..server.app import CallContext
from .failures import ToolFailure
from .sandbox import KERNEL_LOCATE, Root, Sandbox, within

__all__ = ["RootPolicy", "narrow", "root_from_argument", "root_from_uri"]

log = logging.getLogger("toolrelay.files")

_CACHE_SIZE: Final = 64

NO_ROOTS: Final = (
    "No allowed directories: the server was started without a ROOT directory and the client "
    "offers no roots. Start the server with ROOT directories, or use a client that declares MCP roots."
)
EMPTY_CLIENT_ROOTS: Final = (
    "No allowed directories yet: the client's roots list is empty. "
    "Add a root (a file:// URI of a local directory) in the client."
)
UNUSABLE_CLIENT_ROOTS: Final = (
    "No allowed directories: none of the client's roots is a local directory "
    "(each must be a file:// URI of an existing directory)."
)
DISJOINT_CLIENT_ROOTS: Final = (
    "No allowed directories: none of the client's roots lies inside the directories "
    "this server was started with."
)


def root_from_argument(path: str) -> Root:
    """A command-line ROOT; ``UsageError`` with a message for the user when unusable."""
    given = os.path.abspath(os.path.expanduser(path))
    try:
        real = os.path.realpath(given, strict=True)
    except FileNotFoundError:
        raise UsageError(f"ROOT {path!r} does not exist") from None
    except OSError as exc:
        raise UsageError(f"ROOT {path!r} cannot be used: {exc.strerror}") from None
    if not os.path.isdir(real):
        raise UsageError(f"ROOT {path!r} is not a directory")
    return Root(real=real, given=given)


def root_from_uri(uri: str) -> Root | None:
    """A client root from its URI, or None (logged) when it is not a local directory."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        log.warning("ignoring client root %r: not a local file:// URI", uri)
        return None
    given = unquote(parts.path)
    if "\x00" in given or not os.path.isabs(given):
        log.warning("ignoring client root %r: not an absolute path", uri)
        return None
    try:
        real = os.path.realpath(given, strict=True)
    except OSError:
        log.warning("ignoring client root %r: it does not exist", uri)
        return None
    if not os.path.isdir(real):
        log.warning("ignoring client root %r: not a directory", uri)
        return None
    return Root(real=real, given=os.path.normpath(given))


def narrow(server_roots: Sequence[Root], client_roots: Sequence[Root]) -> list[Root]:
    """The intersection of the two sets of subtrees, without nested duplicates."""
    found: list[Root] = []
    for client in client_roots:
        for server in server_roots:
            if within(client.real, server.real):
                found.append(client)
            elif within(server.real, client.real):
                found.append(server)
    return _outermost(found)


def _outermost(roots: Sequence[Root]) -> list[Root]:
    """Drop roots that repeat or lie inside another one (order kept)."""
    kept: list[Root] = []
    for root in roots:
        if any(within(root.real, other.real) for other in kept):
            continue
        kept = [other for other in kept if not within(other.real, root.real)]
        kept.append(root)
    return kept


class RootPolicy:
    """Turns a call's context (the client's roots) into the Sandbox for that call."""

    def __init__(self, roots: Sequence[Root], *, kernel_locate: bool = KERNEL_LOCATE) -> None:
        self.server_roots = tuple(roots)
        self._kernel = kernel_locate
        self._server_sandbox = Sandbox(self.server_roots, kernel_locate=kernel_locate)
        # A client's list changes rarely: resolve each distinct list once (several HTTP
        # sessions may each have their own).
        self._cache: dict[tuple[tuple[str, ...], str | None], Sandbox | ToolFailure] = {}

    def sandbox(self, context: CallContext) -> Sandbox:
        """The effective roots of this call; ToolFailure when there are none."""
        if context.client_roots is None:  # the client has no roots capability
            if not self.server_roots:
                raise ToolFailure(NO_ROOTS)
            return self._server_sandbox
        key = (tuple(context.client_roots), context.roots_error)
        found = self._cache.get(key)
        if found is None:
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            found = self._cache[key] = self._from_client(context.client_roots, context.roots_error)
        if isinstance(found, ToolFailure):
            raise ToolFailure(found.message)
        return found

    def _from_client(self, uris: Sequence[str], error: str | None) -> Sandbox | ToolFailure:
        if error is not None or not uris:  # the client named no roots: nothing to narrow
            if self.server_roots:
                return self._server_sandbox
            return ToolFailure(f"No allowed directories yet: {error}." if error else EMPTY_CLIENT_ROOTS)
        client = [root for root in map(root_from_uri, uris) if root is not None]
        if not client:
            return ToolFailure(UNUSABLE_CLIENT_ROOTS)
        effective = narrow(self.server_roots, client) if self.server_roots else _outermost(client)
        if not effective:
            return ToolFailure(DISJOINT_CLIENT_ROOTS)
        log.info("effective roots from the client: %s", ", ".join(root.real for root in effective))
        return Sandbox(effective, kernel_locate=self._kernel)
