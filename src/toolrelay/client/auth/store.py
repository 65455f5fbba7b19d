"""Grants on disk, in the user's state directory: one file per server and authorization
server, readable by the user alone.

    $XDG_STATE_HOME/toolrelay/oauth/       (default ~/.local/state/toolrelay/oauth/)
        127.0.0.1_8000_mcp-3f2a.../        one folder per MCP server (its canonical URL)
            as.example.com-9b1c....json    one file per authorization server (its issuer)

Folders are 0700, files 0600, written whole (``client/state_files.py``), so a crash
never leaves half a token behind. A file this version cannot read is left alone and
treated as absent.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from ..state_files import state_directory, write_private
from .grant import Grant, grant_from_json
from .metadata import canonical_resource

__all__ = ["GrantStore", "state_directory"]

_UNSAFE: Final = re.compile(r"[^A-Za-z0-9.-]+")


def _slug(url: str) -> str:
    """A readable, unique file name for a URL: host, port and path, then a hash."""
    parts = urlsplit(url)
    readable = _UNSAFE.sub("_", f"{parts.hostname or ''}_{parts.port or ''}{parts.path}").strip("_")[:60]
    return f"{readable}-{hashlib.sha256(url.encode()).hexdigest()[:16]}"


class GrantStore:
    """The grants of every server signed in to (``root``: the folder holding them)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else state_directory() / "oauth"

    def folder(self, server_url: str) -> Path:
        return self.root / _slug(canonical_resource(server_url))

    def path(self, server_url: str, issuer: str) -> Path:
        return self.folder(server_url) / f"{_slug(issuer)}.json"

    def load(self, server_url: str) -> Grant | None:
        """The server's most recent grant, if any."""
        grants = [grant for _, grant in self._read(self.folder(server_url)) if grant is not None]
        return max(grants, key=lambda grant: grant.signed_in_at, default=None)

    def all(self) -> list[tuple[Path, Grant | None]]:
        """Every stored grant (None where a file cannot be read), server by server."""
        if not self.root.is_dir():
            return []
        found: list[tuple[Path, Grant | None]] = []
        for folder in sorted(self.root.iterdir()):
            found.extend(self._read(folder))
        return found

    def save(self, grant: Grant) -> Path:
        """Write ``grant`` (replacing the server's earlier one at the same issuer)."""
        path = self.path(grant.server, grant.issuer)
        write_private(path, json.dumps(grant.to_json(), indent=2), private_from=self.root.parent,
                      what="the sign-in")
        return path

    def forget(self, server_url: str) -> list[Path]:
        """Delete every grant of the server; the files removed."""
        folder = self.folder(server_url)
        removed = [path for path, _ in self._read(folder)]
        for path in removed:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        with contextlib.suppress(OSError):
            folder.rmdir()
        return removed

    def _read(self, folder: Path) -> list[tuple[Path, Grant | None]]:
        if not folder.is_dir():
            return []
        found: list[tuple[Path, Grant | None]] = []
        for path in sorted(folder.glob("*.json")):
            try:
                grant = grant_from_json(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                grant = None
            found.append((path, grant))
        return found
