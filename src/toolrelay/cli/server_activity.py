"""What servers report while they work, on stderr: progress of pending calls and log
messages; and the options that shape them (``--server-log-level``, ``--call-max-time``).

Both are read from the recorded messages (``McpMessage``), so what is shown is what the
transcript holds. A progress notification draws a bar on a terminal (redrawn in place,
cleared before anything else is written) and, elsewhere, a plain line at most a few times
a second per call. A log message at or above the server's level (``ServerReady.log_level``,
else warning) is one line tagged with the server's name: ``[ev] warning: …``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Final, TextIO

from ..client.server_logs import DEFAULT_SHOWN_LEVEL, LOG_LEVELS, at_least, level_error
from ..events import MCP_NOTIFICATION, MCP_REQUEST, Event, McpMessage, ServerReady
from ..protocol import mcp as m
from .arg_types import positive_seconds

__all__ = ["ServerActivityPrinter", "add_call_max_time_option", "add_log_level_option", "log_level"]

_DATA_SHOWN: Final = 300
"""Characters of a log message's data shown; the rest is cut (the transcript has it all)."""
_LINE_EVERY: Final = 0.25
"""Seconds between plain progress lines of one call (the last one is always shown)."""
_BAR: Final = 20


def log_level(text: str) -> str:
    """An argparse type: one of the eight levels (the message lists them)."""
    if text not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(level_error(text))
    return text


def add_log_level_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server-log-level", type=log_level, metavar="LEVEL",
        help=f"ask servers for log messages at LEVEL and above and show them ({', '.join(LOG_LEVELS)}); "
             "default: show warnings and worse (asked of 2026-07-28 servers only)")


def add_call_max_time_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--call-max-time", type=positive_seconds, metavar="S",
        help="the most one tools/call may take in all, progress or not (default: each server's "
             "maxCallTime, 600)")


class ServerActivityPrinter:
    """Progress of pending calls and servers' log messages on ``stream``."""

    def __init__(self, stream: TextIO | None = None, *, progress: bool = True) -> None:
        self.stream = stream or sys.stderr
        self.progress = progress
        self.bar = self.stream.isatty()
        self._levels: dict[str, str] = {}
        self._calls: dict[tuple[str, Any], str] = {}
        """(server, progress token) → ``server/tool`` of the tools/call that sent it."""
        self._last_line: dict[tuple[str, Any], float] = {}
        self._drawn = False

    def __call__(self, event: Event) -> None:
        if isinstance(event, ServerReady):
            self._levels[event.server] = event.log_level or DEFAULT_SHOWN_LEVEL
        if not isinstance(event, McpMessage):
            self._clear()
            return
        if event.role == MCP_REQUEST and event.method == m.CALL_TOOL:
            self._note_call(event)
        elif event.role == MCP_NOTIFICATION and event.direction == "in":
            params = event.message.get("params")
            params = params if isinstance(params, dict) else {}
            if event.method == m.PROGRESS and self.progress:
                self._progress(event.server, params)
                return
            if event.method == m.LOG_MESSAGE:
                self._log(event.server, params)
        self._clear()

    def _note_call(self, event: McpMessage) -> None:
        params = event.message.get("params")
        if not isinstance(params, dict):
            return
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if isinstance(token, (str, int)):
            self._calls[(event.server, token)] = f"{event.server}/{params.get('name')}"

    def _progress(self, server: str, params: dict[str, Any]) -> None:
        token = params.get("progressToken")
        key = (server, token) if isinstance(token, (str, int)) else None
        label = self._calls.get(key) if key is not None else None
        if label is None or key is None:  # not a call of ours: recorded, not shown
            return
        done, total, said = params.get("progress"), params.get("total"), params.get("message")
        text = f"{label} {_amount(done, total)}" + (f" · {said}" if isinstance(said, str) and said else "")
        if self.bar:
            self.stream.write("\r\x1b[K  " + text[:200])
            self.stream.flush()
            self._drawn = True
            return
        now = time.monotonic()
        last = total is not None and done == total
        if not last and now - self._last_line.get(key, -_LINE_EVERY) < _LINE_EVERY:
            return
        self._last_line[key] = now
        self._say(f"  … {text}")

    def _log(self, server: str, params: dict[str, Any]) -> None:
        level = params.get("level")
        if not at_least(level, self._levels.get(server, DEFAULT_SHOWN_LEVEL)):
            return
        logger = params.get("logger")
        named = f"{logger}: " if isinstance(logger, str) and logger else ""
        self._clear()
        self._say(f"[{server}] {level}: {named}{_compact(params.get('data'))}")

    def _clear(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False

    def _say(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()


def _amount(done: Any, total: Any) -> str:
    """``[#####-----] 3/5``, or the bare count when the total is not known."""
    if not isinstance(done, (int, float)) or isinstance(done, bool):
        return "(progress)"
    if isinstance(total, (int, float)) and not isinstance(total, bool) and total > 0:
        filled = max(0, min(_BAR, round(_BAR * done / total)))
        return f"[{'#' * filled}{'-' * (_BAR - filled)}] {done:g}/{total:g}"
    return f"{done:g}"


def _compact(data: Any) -> str:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    text = " ".join(text.split())  # one line, whatever the server sent
    return text if len(text) <= _DATA_SHOWN else text[: _DATA_SHOWN - 1] + "…"
