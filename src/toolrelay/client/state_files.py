"""The user's state folder and the one safe way toolrelay writes a private file there.

    $XDG_STATE_HOME/toolrelay/      (default ~/.local/state/toolrelay/)
        oauth/   sign-ins (``client/auth/store.py``)
        pins/    pinned tool definitions (``relay/pins.py``)

Folders are 0700 and files 0600, written whole (a new file renamed into place), so a
crash never leaves half a file behind and no other user can read what is kept.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..errors import UsageError, os_reason

__all__ = ["state_directory", "write_private"]


def state_directory(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/toolrelay`` (default ``~/.local/state/toolrelay``)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_STATE_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "toolrelay"


def write_private(path: Path, text: str, *, private_from: Path, what: str) -> None:
    """Write ``text`` to ``path`` whole, readable by the user alone; every folder from
    ``private_from`` down to ``path``'s is made 0700 (those above it as usual).
    ``what`` names the file in the UsageError a failure raises (``the sign-in``)."""
    try:
        private_from.parent.mkdir(parents=True, exist_ok=True)
        folder = private_from
        folder.mkdir(mode=0o700, exist_ok=True)
        for part in path.parent.relative_to(private_from).parts:
            folder = folder / part
            folder.mkdir(mode=0o700, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except OSError as exc:
        raise UsageError(f"cannot store {what} in {path}: {os_reason(exc)}") from None
