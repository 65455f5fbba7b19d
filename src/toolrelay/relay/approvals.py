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
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..client.config import ServerConfig
from ..client.state_files import state_directory, write_private
from ..errors import UsageError

__all__ = ["ApprovalStore", "SavedApprovals"]

_UNSAFE: Final = re.compile(r"[^A-Za-z0-9.-]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class SavedApprovals:
    """One file of saved approvals: the server identity it was given on, and its tools."""

    path: Path
    server: str
    target: str
    """The server's command line or URL when the approvals were saved."""
    tools: Mapping[str, Mapping[str, Any]]
    """Tool name → ``{"digest", "savedAt"}``."""


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
        return dict(_read(self.path(config), f"server {config.name}").get("tools", {}))

    def saved(self) -> list[SavedApprovals]:
        """Every file of saved approvals, by server name (UsageError naming an unreadable one)."""
        found = []
        for path in sorted(self.root.glob("*.json")) if self.root.is_dir() else []:
            document = _read(path, "a server")
            server, target = document.get("server"), document.get("target")
            if not isinstance(server, str) or not isinstance(target, str):
                raise UsageError(f"cannot read the saved approvals in {path}: not an approvals file; "
                                 "move it away")
            found.append(SavedApprovals(path=path, server=server, target=target, tools=document["tools"]))
        return sorted(found, key=lambda saved: (saved.server, saved.target))

    def forget(self, saved: SavedApprovals, tools: Collection[str]) -> None:
        """Drop the approvals of ``tools`` from ``saved``'s file (the file itself once empty)."""
        kept = {name: entry for name, entry in saved.tools.items() if name not in tools}
        if not kept:
            saved.path.unlink(missing_ok=True)
            return
        document = {"server": saved.server, "target": saved.target, "tools": kept}
        write_private(saved.path, json.dumps(document, indent=2, ensure_ascii=False) + "\n",
                      private_from=self.root.parent, what=f"the saved approvals of server {saved.server}")

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


def _read(path: Path, whose: str) -> dict[str, Any]:
    """An approvals file's document ({} when there is none); UsageError saying how to fix it."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        tools = document["tools"]
        if not all(isinstance(entry, dict) and isinstance(entry["digest"], str) for entry in tools.values()):
            raise ValueError("not an approvals file")
        return dict(document)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not an approvals file"
        raise UsageError(f"cannot read the saved approvals of {whose} in {path}: {why}; "
                         "move it away") from None
