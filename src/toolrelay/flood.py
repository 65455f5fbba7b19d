"""The flood limit: what a server sends unasked is recorded up to a bound per time window.

A server may send notifications (and stray lines) as fast as it likes; recording each
would make a transcript of a 200,000-notification flood 100 MB and its trace page
unusable. ``FloodGate`` admits up to ``FloodLimit.messages`` unasked messages per server
per ``FloodLimit.window`` seconds and counts the rest by kind; each window that dropped
something is handed back, once over, as a ``FloodWindow``, which the event stream records
as one event. It only decides what is recorded: the messages themselves are still
handled (a ``tools/list_changed`` past the limit still refreshes the catalog).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

__all__ = ["FloodGate", "FloodLimit", "FloodWindow"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FloodLimit:
    """How many messages a server may send unasked per window and still be recorded."""

    messages: int = 200
    window: float = 10.0
    """Seconds."""


@dataclass(slots=True)
class FloodWindow:
    """One server's current window: how many messages it kept, and what it dropped."""

    server: str
    connection: int
    start: float
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)


class FloodGate:
    """Admits each server's unasked messages up to the limit per window; counts the rest."""

    __slots__ = ("_due", "_windows", "limit")

    def __init__(self, limit: FloodLimit) -> None:
        self.limit = limit
        self._windows: dict[str, FloodWindow] = {}
        self._due = float("inf")  # when the earliest window holding drops ends

    def admit(self, server: str, connection: int, what: str, now: float) -> tuple[bool, FloodWindow | None]:
        """Whether this message is recorded, and the window it closed if that one dropped some."""
        current = self._windows.get(server)
        closed = None
        if current is None or now - current.start >= self.limit.window:
            closed = self._close(server)
            current = self._windows[server] = FloodWindow(server, connection, now)
        if current.kept < self.limit.messages:
            current.kept += 1
            return True, closed
        if not current.dropped:
            self._due = min(self._due, current.start + self.limit.window)
        current.dropped[what] += 1
        current.connection = connection
        return False, closed

    def due(self, now: float) -> list[FloodWindow]:
        """The windows with drops that ended by ``now`` (cheap until one has)."""
        if now < self._due:
            return []
        length = self.limit.window
        ended = [name for name, w in self._windows.items() if w.dropped and now - w.start >= length]
        closed = [window for name in ended if (window := self._close(name)) is not None]
        self._due = min((w.start + length for w in self._windows.values() if w.dropped), default=float("inf"))
        return closed

    def flush(self, server: str | None = None) -> list[FloodWindow]:
        """End every window now (or ``server``'s): those that dropped messages."""
        names = [server] if server is not None else list(self._windows)
        return [window for name in names if (window := self._close(name)) is not None]

    def _close(self, server: str) -> FloodWindow | None:
        window = self._windows.pop(server, None)
        return window if window is not None and window.dropped else None
