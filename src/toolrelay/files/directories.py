"""Directory listings and the search walk, through descriptors only (no MCP here).

A directory is read through the descriptor the sandbox opened and checked; the walk goes
down with ``openat(O_NOFOLLOW | O_DIRECTORY)`` relative to its parent, so it never
follows a link, and a directory swapped for a link mid-walk is skipped, not entered.
Symlinks found on the way are offered as search results only when they resolve inside
the roots. Output is bounded: both stop once their text would pass the byte budget.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

__all__ = ["Entry", "Search", "list_entries", "search", "shown"]

_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_UNBOUNDED = 1 << 62


@dataclass(frozen=True, slots=True)
class Entry:
    """One directory entry, as the OS reports it (a link is never a directory here)."""

    name: str
    is_dir: bool
    is_link: bool


def shown(name: str) -> str:
    """A name fit for JSON: bytes that are not UTF-8 become ``\\xNN`` escapes."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return name


def list_entries(fd: int, budget: int = _UNBOUNDED) -> tuple[list[Entry], bool]:
    """The directory at ``fd`` sorted by name (code point order, like the reference), and
    whether ``budget`` bytes of names cut the listing short (then: the first ones read)."""
    found: list[Entry] = []
    held = 0
    truncated = False
    with os.scandir(fd) as scan:
        for item in scan:
            held += len(item.name) + 8
            if held > budget:
                truncated = True
                break
            is_link = item.is_symlink()
            found.append(Entry(item.name, not is_link and item.is_dir(follow_symlinks=False), is_link))
    found.sort(key=lambda entry: entry.name)
    return found, truncated


@dataclass(slots=True, kw_only=True)
class Search:
    """One search_files walk: what matches, what is skipped, and its bounds."""

    base: str
    """Real path of the searched directory (results are shown under it)."""
    match: re.Pattern[str]
    exclude: Sequence[re.Pattern[str]]
    link_inside: Callable[[int, str, str], bool]
    budget: int
    stop: threading.Event = field(default_factory=threading.Event)
    found: list[str] = field(default_factory=list)
    truncated: bool = False


def search(fd: int, walk: Search) -> None:
    """Depth-first, in name order, like the reference; results go to ``walk.found``."""
    held = 0
    for dir_fd, relative, entry in _walk(fd, walk):
        if walk.stop.is_set():
            return
        path = f"{walk.base}/{relative}"
        if entry.is_link and not walk.link_inside(dir_fd, entry.name, path):
            continue
        if walk.match.fullmatch(relative):
            held += len(path) + 1
            if held > walk.budget:
                walk.truncated = True
                return
            walk.found.append(shown(path))


def _walk(fd: int, walk: Search) -> Iterator[tuple[int, str, Entry]]:
    """(parent descriptor, relative path, entry) for every entry not excluded, pre-order."""
    stack: list[tuple[int, str, Iterator[Entry]]] = [(fd, "", iter(list_entries(fd)[0]))]
    try:
        while stack:
            dir_fd, prefix, pending = stack[-1]
            entry = next(pending, None)
            if entry is None:
                stack.pop()
                if dir_fd != fd:
                    os.close(dir_fd)
                continue
            relative = prefix + entry.name
            if any(pattern.fullmatch(relative) for pattern in walk.exclude):
                continue
            yield dir_fd, relative, entry
            if entry.is_dir:
                child = _open_child(dir_fd, entry.name)
                if child is not None:
                    stack.append((child, relative + "/", iter(list_entries(child)[0])))
    finally:
        for dir_fd, _, _ in stack:
            if dir_fd != fd:
                os.close(dir_fd)


def _open_child(dir_fd: int, name: str) -> int | None:
    try:
        return os.open(name, os.O_RDONLY | _O_DIRECTORY | os.O_NOFOLLOW | _O_CLOEXEC, dir_fd=dir_fd)
    except OSError:  # gone, unreadable, or swapped for a link: not entered
        return None
