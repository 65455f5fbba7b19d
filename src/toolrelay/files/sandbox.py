"""Confinement: every file the service touches lies inside an allowed root (POSIX).

How a requested path is checked and opened, without a gap between the two:

1. NUL bytes are refused; ``~`` is expanded; a relative path is joined to each root (never
   to the working directory). Quotes and spaces are part of the name: nothing is trimmed.
2. Lexical check: the normalised path must lie inside a root (compared by path
   components, never by string prefix), so a path plainly outside is refused before the
   filesystem is touched. Roots match in their resolved form and in the form they were
   named by (``/tmp`` vs ``/private/tmp``).
3. The kernel resolves the path once: ``open(O_PATH)`` (no I/O, so FIFOs never block and
   devices are not opened). The object now held is located by the kernel
   (``/proc/self/fd``) and that real path must lie inside a resolved root: symlinks
   pointing outside, through chains or ``..`` after a link, are refused here.
4. Its type comes from ``fstat`` of that same descriptor; a regular file is then re-opened
   for reading through the descriptor itself, so what is read is what was checked.

Where ``O_PATH``/``/proc`` are missing (macOS, BSD) a portable path is used instead:
strict ``realpath`` and check, then a walk down from the root with ``openat(O_NOFOLLOW)``
(all links were resolved, so a link met now is a swap, refused), ``fstatat`` of the last
name, and an ``openat(O_NOFOLLOW | O_NONBLOCK)`` whose ``st_dev``/``st_ino`` must be the
checked ones.

Every refusal is the single ``ACCESS_DENIED`` text. Residual risks, documented: hard
links and bind mounts inside a root that lead outside it cannot be told apart.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from .failures import ToolFailure, denied, os_failure

__all__ = ["KERNEL_LOCATE", "Located", "Root", "Sandbox", "not_regular", "within"]

_O_PATH = getattr(os, "O_PATH", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_PROC_FD = "/proc/self/fd/"
_DIRECTORY_FLAGS = os.O_RDONLY | _O_DIRECTORY | os.O_NOFOLLOW | _O_CLOEXEC
_LINK_WHERE_CHECKED = (errno.ENOTDIR, errno.ELOOP)
"""What an O_NOFOLLOW open gives when a symlink now stands where a folder or file was
checked (ENOTDIR with O_DIRECTORY on Linux, else ELOOP): the path was swapped."""


def _probe_kernel_locate() -> bool:
    """True when O_PATH and /proc/self/fd can tell where an open descriptor lives."""
    if not _O_PATH:
        return False
    try:
        fd = os.open("/", _O_PATH | _O_CLOEXEC)
    except OSError:
        return False
    try:
        return os.readlink(f"{_PROC_FD}{fd}") == "/"
    except OSError:
        return False
    finally:
        os.close(fd)


KERNEL_LOCATE = _probe_kernel_locate()


@dataclass(frozen=True, slots=True, kw_only=True)
class Root:
    """An allowed directory: its resolved path, and the absolute form it was named by."""

    real: str
    given: str


@dataclass(slots=True)
class Located:
    """A checked filesystem object and a descriptor that reaches it without a path walk."""

    fd: int
    """The object's O_PATH descriptor; on the portable path, its parent directory's (or its own
    when ``name`` is None)."""
    name: str | None
    """Portable path only: the object's name inside the directory ``fd``."""
    stat: os.stat_result
    real: str

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _parts(path: str) -> tuple[str, ...]:
    # "/" splits to ('', ''): its one component is the empty name before the first slash.
    return ("",) if path == "/" else tuple(path.split("/"))


def _inside(path: str, roots: Sequence[tuple[str, ...]]) -> bool:
    """Component-wise containment of a normalised absolute path in any of ``roots``."""
    parts = tuple(path.split("/"))
    return any(parts[: len(root)] == root for root in roots)


def within(path: str, root: str) -> bool:
    """Is the normalised absolute ``path`` equal to or below ``root`` (by components)?"""
    return _inside(path, (_parts(root),))


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def not_regular(requested: str, mode: int) -> ToolFailure:
    """The failure for anything that is not a regular file (read at once, never opened)."""
    kind = next((name for test, name in _KINDS if test(mode)), "not a file")
    return ToolFailure(f"Not a regular file: {requested} ({kind})")


class Sandbox:
    """The allowed roots of one call, and the only way the service opens anything."""

    __slots__ = ("_kernel", "_lexical", "_real", "roots")

    def __init__(self, roots: Sequence[Root], *, kernel_locate: bool = KERNEL_LOCATE) -> None:
        self.roots = tuple(roots)
        self._real = tuple(_parts(root.real) for root in self.roots)
        self._lexical = tuple({_parts(r.real) for r in self.roots} | {_parts(r.given) for r in self.roots})
        self._kernel = kernel_locate

    @property
    def real_roots(self) -> tuple[str, ...]:
        return tuple(root.real for root in self.roots)

    def contains(self, real_path: str) -> bool:
        """Is this resolved absolute path inside a root?"""
        return _inside(real_path, self._real)

    # -- locating -------------------------------------------------------------------

    def _candidates(self, requested: str) -> list[str]:
        """Absolute spellings of ``requested`` that lie lexically inside a root."""
        if "\x00" in requested:
            raise denied()
        expanded = os.path.expanduser(requested) if requested.startswith("~") else requested
        if os.path.isabs(expanded):
            spelled = [expanded]
        else:
            spelled = [os.path.join(root.real, expanded) for root in self.roots]
        found = [path for path in spelled if _inside(_normalise(path), self._lexical)]
        if not found:
            raise denied()
        return found

    def locate(self, requested: str) -> Located:
        """Resolve and check ``requested``; the caller closes the result."""
        candidates = self._candidates(requested)
        first_error: OSError | None = None
        for candidate in candidates:  # several only for a relative path and several roots
            try:
                return self._locate_one(candidate)
            except FileNotFoundError as exc:
                first_error = first_error or exc
            except OSError as exc:
                raise self._failure(candidate, exc, requested) from None
        assert first_error is not None
        raise self._failure(candidates[0], first_error, requested) from None

    def _locate_one(self, candidate: str) -> Located:
        if not self._kernel:
            return self._locate_portable(candidate)
        fd = os.open(candidate, _O_PATH | _O_CLOEXEC)
        try:
            real = os.readlink(f"{_PROC_FD}{fd}")
            if not self.contains(real):
                raise denied()
            return Located(fd, None, os.fstat(fd), real)
        except BaseException:
            os.close(fd)
            raise

    def _locate_portable(self, candidate: str) -> Located:
        """realpath, then walk down from the root refusing links: a link met now is a swap."""
        try:
            real = os.path.realpath(candidate, strict=True)
        except OSError as exc:
            # EINVAL: readlink met a link that had become a folder mid-resolution, a swap
            if exc.errno == errno.EINVAL:
                raise denied() from None
            raise
        root = next((root.real for root in self.roots if within(real, root.real)), None)
        if root is None:
            raise denied()
        names = real[len(root) :].lstrip("/").split("/") if real != root else []
        fd = os.open(root, _DIRECTORY_FLAGS)
        try:
            for name in names[:-1]:
                child = _open_walked_folder(name, fd)
                os.close(fd)
                fd = child
            if not names:
                return Located(fd, None, os.fstat(fd), real)
            info = os.stat(names[-1], dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                raise denied()
            return Located(fd, names[-1], info, real)
        except BaseException:
            os.close(fd)
            raise

    def _failure(self, candidate: str, exc: OSError, requested: str) -> ToolFailure:
        """Why ``candidate`` failed, told only when its resolved form is inside a root."""
        try:
            # non-strict, but a link that vanishes mid-resolution still raises (3.11)
            resolved = os.path.realpath(candidate)
        except OSError:
            return denied()
        if exc.errno == errno.ELOOP or not self.contains(resolved):
            return denied()
        return os_failure(exc, requested)

    def link_inside(self, dir_fd: int, name: str, path: str) -> bool:
        """Does the symlink ``name`` in the directory at ``dir_fd`` (real ``path``) resolve inside?"""
        try:
            if not self._kernel:
                return self.contains(os.path.realpath(path, strict=True))
            fd = os.open(name, _O_PATH | _O_CLOEXEC, dir_fd=dir_fd)
        except OSError:  # dangling, a loop, or unreadable: not offered
            return False
        try:
            return self.contains(os.readlink(f"{_PROC_FD}{fd}"))
        finally:
            os.close(fd)

    # -- opening --------------------------------------------------------------------

    @contextlib.contextmanager
    def open_file(self, requested: str) -> Iterator[Located]:
        """The regular file ``requested``, open for reading (closed on exit)."""
        with self._opened(requested, "file", os.O_RDONLY | os.O_NONBLOCK) as opened:
            yield opened

    @contextlib.contextmanager
    def open_directory(self, requested: str) -> Iterator[Located]:
        """The directory ``requested``, open for scandir (closed on exit)."""
        with self._opened(requested, "directory", os.O_RDONLY | _O_DIRECTORY) as opened:
            yield opened

    def stat(self, requested: str) -> Located:
        """The stat of ``requested`` (links resolved) and its real path; nothing left open."""
        located = self.locate(requested)
        located.close()
        return located

    @contextlib.contextmanager
    def _opened(self, requested: str, kind: Literal["file", "directory"], flags: int) -> Iterator[Located]:
        located = self.locate(requested)
        try:
            mode = located.stat.st_mode
            if kind == "directory" and not stat.S_ISDIR(mode):
                raise ToolFailure(f"Not a directory: {requested}")
            if kind == "file" and not stat.S_ISREG(mode):
                raise not_regular(requested, mode)
            opened = Located(self.reopen(located, flags, requested), None, located.stat, located.real)
        finally:
            located.close()
        try:
            yield opened
        finally:
            opened.close()

    def reopen(self, located: Located, flags: int, requested: str) -> int:
        """Open the very object ``locate`` checked (whatever happened to its path since)."""
        try:
            if self._kernel:  # through the descriptor: same inode, no path walk
                return os.open(f"{_PROC_FD}{located.fd}", flags | _O_CLOEXEC)
            name = located.name or "."
            fd = os.open(name, flags | os.O_NOFOLLOW | _O_CLOEXEC, dir_fd=located.fd)
        except OSError as exc:
            if not self._kernel and exc.errno in _LINK_WHERE_CHECKED:
                raise denied() from None  # checked as a file or folder, a link by now: swapped
            raise os_failure(exc, requested) from None
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (located.stat.st_dev, located.stat.st_ino):
            os.close(fd)
            raise denied()  # swapped between the check and the open
        return fd


def _open_walked_folder(name: str, dir_fd: int) -> int:
    """Open a folder realpath just walked through; a link or file there now is a swap."""
    try:
        return os.open(name, _DIRECTORY_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in _LINK_WHERE_CHECKED:
            raise denied() from None
        raise


def _normalise(path: str) -> str:
    normal = os.path.normpath(path)
    # POSIX keeps a leading "//" as implementation-defined; Linux treats it as "/".
    return "/" + normal.lstrip("/") if normal.startswith("//") else normal
