"""One batch at a time in a batch folder.

``folder_lock(out)`` holds an exclusive ``flock`` on ``out/batch.lock`` while a batch runs
and writes its pid into the file, so that a second batch on the same folder is refused
at once, naming the process that holds it, before it reads, trims or deletes anything.
The kernel releases the lock when its process ends, however it ends (``kill -9`` too), so
a stopped batch never leaves the folder locked. The file stays: deleting it while another
process opens it could give two batches two different files to lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from ..errors import BatchFolderInUse, UsageError, os_reason

__all__ = ["LOCK_FILE", "folder_lock"]

LOCK_FILE: Final = "batch.lock"


@contextlib.contextmanager
def folder_lock(out: Path) -> Iterator[None]:
    """Hold ``out``'s lock inside; BatchFolderInUse when another batch holds it."""
    path = out / LOCK_FILE
    try:
        handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)  # not inherited by servers (PEP 446)
    except OSError as exc:
        raise UsageError(f"cannot lock the batch folder {out}: {os_reason(exc)}") from None
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _holder(handle)
            said = f" (pid {pid})" if pid is not None else ""
            raise BatchFolderInUse(f"{out} is in use by another batch{said}; wait for it or use "
                                   "another --out", pid) from None
        os.ftruncate(handle, 0)
        os.write(handle, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(handle)  # releases the lock


def _holder(handle: int) -> int | None:
    """The pid the holder wrote (None when it has not written it yet)."""
    text = os.pread(handle, 32, 0).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None
