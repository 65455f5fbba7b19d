"""A stdio server's stderr: appended to its log file, last lines kept in memory.

The file is ``<dir>/<server>.log`` where ``<dir>`` is ``$TOOLRELAY_LOG_DIR``, else
``$XDG_STATE_HOME/toolrelay/logs``, else ``~/.local/state/toolrelay/logs``. Every start
appends a header line, so one file tells a server's whole history across restarts. The
in-memory tail is what error messages quote when a server dies. A server's stderr may
print secrets, so the folder is 0700 and each file 0600 (an existing file is tightened).
"""

from __future__ import annotations

import os
import re
from collections import deque
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO, Final

from ..errors import os_reason

__all__ = ["ServerLog", "default_log_dir"]

_TAIL_LINES: Final = 200
_LINE_CHARS: Final = 500  # one absurd line must not crowd out the rest of the tail


def default_log_dir() -> Path:
    """Where server logs go unless told otherwise."""
    configured = os.environ.get("TOOLRELAY_LOG_DIR")
    if configured:
        return Path(configured).expanduser()
    state = os.environ.get("XDG_STATE_HOME")
    base = Path(state) if state else Path.home() / ".local" / "state"
    return base / "toolrelay" / "logs"


class ServerLog:
    """stderr bytes in; a log file and a tail of recent lines out."""

    def __init__(self, server: str, directory: Path | None = None) -> None:
        self.server = server
        safe_name = re.sub(r"[^A-Za-z0-9_.-]", "_", server).lstrip(".") or "server"
        self.path: Path = (directory or default_log_dir()) / f"{safe_name}.log"
        self._file: BinaryIO | None = None
        self._lines: deque[str] = deque(maxlen=_TAIL_LINES)
        self._partial = b""

    def open(self, header: str) -> str | None:
        """Start a new process's section; the reason if the file cannot be written."""
        self._lines.clear()
        self._partial = b""
        self.close()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._file = _open_private(self.path)
        except OSError as exc:
            return f"cannot write server log {self.path}: {os_reason(exc)}"
        self.note(header)
        return None

    def note(self, text: str) -> None:
        """A line of toolrelay's own in the log (start headers, skipped stdout lines)."""
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        self._write_file(f"[toolrelay {stamp}] {text}\n".encode())

    def write(self, data: bytes) -> None:
        """Bytes the server wrote to stderr."""
        self._write_file(data)
        chunks = (self._partial + data).split(b"\n")
        self._partial = chunks.pop()[-_LINE_CHARS * 4:]
        for chunk in chunks:
            self._lines.append(_text(chunk))

    def tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines of stderr (an unfinished last line included)."""
        recent = list(self._lines)
        if self._partial:
            recent.append(_text(self._partial))
        return "\n".join(recent[-lines:]) if lines > 0 else ""

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write_file(self, data: bytes) -> None:
        if self._file is None:
            return
        try:
            self._file.write(data)
        except OSError:  # a full disk must not take the server down with it
            self.close()


def _open_private(path: Path) -> BinaryIO:
    """``path`` for appending, readable and writable by its owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        if os.stat(fd).st_mode & 0o077:  # created before (0644 by older versions): tighten it
            os.fchmod(fd, 0o600)
        return open(fd, "ab", buffering=0)  # kept open while the server runs
    except BaseException:
        os.close(fd)
        raise


def _text(chunk: bytes) -> str:
    line = chunk.decode("utf-8", "replace").rstrip("\r")
    return line if len(line) <= _LINE_CHARS else line[:_LINE_CHARS] + "…"
