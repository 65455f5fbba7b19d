"""The file service's tools, one function each: check the arguments, open through the
sandbox, read, shape the result. Read-only by design: nothing here writes, creates,
moves or deletes.

Each tool takes ``(arguments, sandbox, limits)`` and returns a ``CallToolResult``, or an
awaitable of one for work that may take long (the search walk runs in a thread). A
``ToolFailure`` raised anywhere becomes an ``isError`` result in the service.
"""

from __future__ import annotations

import asyncio
import datetime
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from ..protocol.jsonrpc import JSONObject
from .arguments import check_names, count_argument, string_argument, string_list_argument
from .directories import Search, list_entries, search, shown
from .failures import ToolFailure, os_failure
from .globbing import GlobError, compile_glob
from .reading import (
    FIRST_BLOCK,
    Excerpt,
    FileChanged,
    InvalidText,
    TooLarge,
    read_head,
    read_tail,
    read_whole,
)
from .results import text_result, truncated_result
from .sandbox import Sandbox

__all__ = [
    "BOTH_HEAD_AND_TAIL",
    "DEFAULT_MAX_RESULT_BYTES",
    "HANDLERS",
    "Limits",
    "Tool",
]

DEFAULT_MAX_RESULT_BYTES: Final = 1024 * 1024
BOTH_HEAD_AND_TAIL: Final = "Cannot specify both head and tail parameters simultaneously"


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Bounds every call keeps."""

    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES
    """Bytes of file text (or listing) one result may carry."""
    first_block: int = FIRST_BLOCK
    """First read size of head/tail (then doubling); small values exercise block edges."""


Tool = Callable[[JSONObject, Sandbox, Limits], JSONObject | Awaitable[JSONObject]]


def read_text_file(arguments: JSONObject, sandbox: Sandbox, limits: Limits) -> JSONObject:
    check_names(arguments, "read_text_file", ("path", "head", "tail"))
    path = string_argument(arguments, "path")
    head = count_argument(arguments, "head")
    tail = count_argument(arguments, "tail")
    if head is not None and tail is not None:
        raise ToolFailure(BOTH_HEAD_AND_TAIL)
    with sandbox.open_file(path) as opened:
        excerpt = _read_text(opened.fd, opened.stat.st_size, head, tail, limits.max_result_bytes, path,
                             block=limits.first_block)
    if excerpt.truncated:
        return truncated_result(excerpt.text, _truncation_note(excerpt, limits, head is not None))
    return text_result(excerpt.text)


def _read_text(
    fd: int, size: int, head: int | None, tail: int | None, cap: int, path: str, *,
    block: int = FIRST_BLOCK, limit: str = "",
) -> Excerpt:
    """Read as asked; every failure becomes a ToolFailure naming ``path`` as given."""
    try:
        if head is not None:
            return read_head(fd, head, cap=cap, block=block)
        if tail is not None:
            return read_tail(fd, size, tail, cap=cap, block=block)
        return read_whole(fd, size, cap=cap)
    except InvalidText as exc:
        message = f"Cannot read {path}: not valid UTF-8 text ({exc}); this tool reads text only"
        raise ToolFailure(message) from None
    except TooLarge as exc:
        raise ToolFailure(
            f"File too large to read whole: {path} holds {exc.size:,} bytes, more than "
            f"{limit or f'the {cap:,}-byte result limit'}. "
            "Use read_text_file with head or tail to read part of it."
        ) from None
    except FileChanged:
        raise ToolFailure(f"Cannot read {path}: the file changed while it was being read") from None
    except OSError as exc:
        raise os_failure(exc, path) from None


def _truncation_note(excerpt: Excerpt, limits: Limits, from_head: bool) -> str:
    shown_bytes = len(excerpt.text.encode())
    part, lines = ("first", "head") if from_head else ("last", "tail")
    return (
        f"[truncated: the {lines} lines asked for hold more than the {limits.max_result_bytes:,}-byte "
        f"result limit; the text above is their {part} {shown_bytes:,} bytes, cut on a character boundary]"
    )


def read_multiple_files(arguments: JSONObject, sandbox: Sandbox, limits: Limits) -> JSONObject:
    check_names(arguments, "read_multiple_files", ("paths",))
    paths = string_list_argument(arguments, "paths", required=True, min_items=1)
    budget = limits.max_result_bytes  # shared by all the files of the call
    parts: list[str] = []
    for path in paths:
        try:
            with sandbox.open_file(path) as opened:
                left = f"the {budget:,} bytes left of this call's {limits.max_result_bytes:,}-byte limit"
                text = _read_text(opened.fd, opened.stat.st_size, None, None, budget, path, limit=left).text
        except ToolFailure as failure:
            parts.append(f"{path}: Error - {failure.message}")
            continue
        budget -= len(text.encode())
        parts.append(f"{path}:\n{text}\n")
    return text_result("\n---\n".join(parts))


def list_directory(arguments: JSONObject, sandbox: Sandbox, limits: Limits) -> JSONObject:
    check_names(arguments, "list_directory", ("path",))
    path = string_argument(arguments, "path")
    with sandbox.open_directory(path) as opened:
        try:
            entries, truncated = list_entries(opened.fd, limits.max_result_bytes)
        except OSError as exc:
            raise os_failure(exc, path) from None
    text = "\n".join(f"{'[DIR]' if entry.is_dir else '[FILE]'} {shown(entry.name)}" for entry in entries)
    if truncated:
        note = f"[truncated: the directory holds more entries than fit in {limits.max_result_bytes:,} bytes]"
        return truncated_result(text, note)
    return text_result(text)


def get_file_info(arguments: JSONObject, sandbox: Sandbox, limits: Limits) -> JSONObject:
    check_names(arguments, "get_file_info", ("path",))
    info = sandbox.stat(string_argument(arguments, "path")).stat
    birth = getattr(info, "st_birthtime", None)  # not reported by Linux before Python 3.12
    fields = {
        "size": str(info.st_size),
        "created": _when(birth) if birth is not None else "unavailable",
        "modified": _when(info.st_mtime),
        "accessed": _when(info.st_atime),
        "isDirectory": _flag(info.st_mode & 0o170000 == 0o040000),
        "isFile": _flag(info.st_mode & 0o170000 == 0o100000),
        "permissions": f"{info.st_mode & 0o777:03o}",
    }
    return text_result("\n".join(f"{key}: {value}" for key, value in fields.items()))


def _when(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp, datetime.UTC).isoformat(timespec="milliseconds")


def _flag(value: bool) -> str:
    return "true" if value else "false"


def search_files(arguments: JSONObject, sandbox: Sandbox, limits: Limits) -> Awaitable[JSONObject]:
    check_names(arguments, "search_files", ("path", "pattern", "excludePatterns"))
    path = string_argument(arguments, "path")
    pattern = string_argument(arguments, "pattern")
    excludes = string_list_argument(arguments, "excludePatterns", required=False)
    try:
        match, exclude = compile_glob(pattern), [compile_glob(item) for item in excludes]
    except GlobError as exc:
        raise ToolFailure(str(exc)) from None

    def walk(stop: threading.Event) -> JSONObject:
        with sandbox.open_directory(path) as opened:
            found = Search(base=opened.real, match=match, exclude=exclude, link_inside=sandbox.link_inside,
                           budget=limits.max_result_bytes, stop=stop)
            search(opened.fd, found)
        text = "\n".join(found.found) if found.found else "No matches found"
        if found.truncated:
            note = f"[truncated: more matches than fit in {limits.max_result_bytes:,} bytes]"
            return truncated_result(text, note)
        return text_result(text)

    return _in_thread(walk)


async def _in_thread(work: Callable[[threading.Event], JSONObject]) -> JSONObject:
    """Run blocking work off the event loop; a cancelled call tells it to stop."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(work, stop)
    finally:
        stop.set()


def list_allowed_directories(arguments: JSONObject, sandbox: Sandbox, limits: Limits) -> JSONObject:
    check_names(arguments, "list_allowed_directories", ())
    return text_result("Allowed directories:\n" + "\n".join(shown(root) for root in sandbox.real_roots))


HANDLERS: Final[dict[str, Tool]] = {
    "read_text_file": read_text_file,
    "read_multiple_files": read_multiple_files,
    "list_directory": list_directory,
    "get_file_info": get_file_info,
    "search_files": search_files,
    "list_allowed_directories": list_allowed_directories,
}
