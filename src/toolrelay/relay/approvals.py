"""Saved approvals: the terminal prompt's ``s`` (always for this tool on this server), kept
for later runs in the state folder, as pins are (``client/state_files.py``: 0600 files in
0700 folders)::

    $XDG_STATE_HOME/toolrelay/approvals/<server>-<hash of name and command line or URL>.json
        {"server": "notes", "target": "notes-server --dir ~/n",
         "tools": {"write_note": {"digest": "sha256:...", "savedAt": "2026-12-02T08:00:00Z"}}}

An approval holds for the server identity it was given on (its config name and its command
line or URL) and for the tool's definition as it was then (its digest): a server started
another way, or a tool whose definition changed since, is asked about again.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ..client.config import ServerConfig
from ..client.state_files import state_directory, write_private
from ..errors import UsageError

__all__ = ["ApprovalStore"]

_UNSAFE: Final = re.compile(r"[^A-Za-z0-9.-]+")


class ApprovalStore:
    """The saved approvals of every server identity (``root``: the folder holding them)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else state_directory() / "approvals"

    def path(self, config: ServerConfig) -> Path:
        identity = f"{config.name}\n{config.target}".encode()
        readable = _UNSAFE.sub("_", config.name).strip("_")[:60] or "server"
        return self.root / f"{readable}-{hashlib.sha256(identity).hexdigest()[:16]}.json"

    def has_any(self) -> bool:
        """Whether any approval was ever saved here (without reading the files)."""
        return self.root.is_dir() and any(self.root.glob("*.json"))

    def load(self, config: ServerConfig) -> dict[str, str]:
        """Tool name → the digest of the definition it was approved with ({} when none)."""
        return {name: str(entry["digest"]) for name, entry in self._entries(config).items()}

    def _entries(self, config: ServerConfig) -> dict[str, dict[str, Any]]:
        path = self.path(config)
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            tools = document["tools"]
            if not all(isinstance(entry, dict) and isinstance(entry["digest"], str)
                       for entry in tools.values()):
                raise ValueError("not an approvals file")
            return dict(tools)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not an approvals file"
            raise UsageError(f"cannot read the saved approvals of server {config.name} in {path}: {why}; "
                             "move it away") from None

    def save(self, config: ServerConfig, tool: str, digest: str) -> Path:
        """Keep the approval of ``tool`` (as defined by ``digest``) for later runs."""
        path = self.path(config)
        tools = self._entries(config)
        tools[tool] = {"digest": digest, "savedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        document = {"server": config.name, "target": config.target, "tools": dict(sorted(tools.items()))}
        write_private(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n",
                      private_from=self.root.parent, what=f"the saved approvals of server {config.name}")
        return path

    def approved(self, config: ServerConfig, digests: Mapping[str, str]) -> set[str]:
        """The tools of ``digests`` (name → the digest listed now) approved as they are now."""
        return {name for name, digest in self.load(config).items() if digests.get(name) == digest}
