"""A server's log messages (``notifications/message``): the levels, and the level asked.

The levels are RFC 5424's eight, as MCP names them. A level asked (``--server-log-level``
or the config's ``"toolrelay": {"logLevel": …}``) is sent with ``logging/setLevel`` after
the handshake when the server declares ``logging``; on a 2026-07-28 connection it rides in
each request's ``_meta`` instead (without one, ``warning``: that era's servers send nothing
to a request that names no level). What is shown on stderr is what reaches that level;
without one, warnings and worse.
"""

from __future__ import annotations

from typing import Any, Final

from ..errors import ConfigError

__all__ = ["DEFAULT_SHOWN_LEVEL", "LOG_LEVELS", "SET_LEVEL", "at_least", "level_error", "log_level_of"]

LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""Least to most severe (RFC 5424, as ``LoggingLevel`` in the MCP schema)."""
SET_LEVEL: Final = "logging/setLevel"
DEFAULT_SHOWN_LEVEL: Final = "warning"
"""Shown on stderr when no level was asked (and, in 2025, nothing is sent to the server;
in 2026-07-28 this level rides in each request's ``_meta``)."""
_RANK: Final = {level: rank for rank, level in enumerate(LOG_LEVELS)}


def level_error(raw: object) -> str:
    """Why ``raw`` is not a log level, naming the valid ones."""
    return f"must be one of {', '.join(LOG_LEVELS)}, not {raw!r}"


def log_level_of(raw: Any, where: str) -> str:
    """A config's ``logLevel``, checked."""
    if not isinstance(raw, str) or raw not in _RANK:
        raise ConfigError(f"{where}: {level_error(raw)}")
    return raw


def at_least(level: Any, threshold: str) -> bool:
    """Whether a message's ``level`` reaches ``threshold``; a level no one knows is shown
    (a server's mistake is better seen than hidden)."""
    rank = _RANK.get(level) if isinstance(level, str) else None
    return rank is None or rank >= _RANK[threshold]
