"""``toolrelay batch``'s progress on stderr: a bar on a terminal, else a line per task.

On a terminal one line is redrawn: done / not completed / running, the rate and the time
left. Elsewhere (a log, CI) each finished task gets a line of its own, so nothing is
redrawn into a file.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from ..batches import TaskResult, TaskSpec

__all__ = ["BatchProgress"]

_BAR = 24


def _clock(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


class BatchProgress:
    """Told each task as it starts and ends; says it on ``stream``."""

    def __init__(self, total: int, stream: TextIO | None = None, *, bar: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.bar = self.stream.isatty() if bar is None else bar
        self.total = total
        self.done = 0
        self.failed = 0
        self.running = 0
        self._started = time.monotonic()
        self._last_draw = 0.0

    def started(self, spec: TaskSpec) -> None:
        self.running += 1
        self._draw()

    def finished(self, result: TaskResult) -> None:
        self.running = max(0, self.running - 1)
        self.done += 1
        self.failed += 0 if result.completed else 1
        if self.bar:
            self._draw(force=self.done == self.total)
            return
        width = len(str(self.total))
        what = f"{_count(result.turns, 'turn')}, {_count(result.calls, 'call')}"
        line = f"[{self.done:>{width}}/{self.total}] {result.id} {result.status} · {what}"
        line += f" · {result.duration:.2f} s"
        if result.error and not result.completed:
            line += f" · {result.error.splitlines()[0]}"
        self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.bar:
            self._draw(force=True)
            self.stream.write("\n")
            self.stream.flush()

    def _draw(self, *, force: bool = False) -> None:
        if not self.bar:
            return
        now = time.monotonic()
        if not force and now - self._last_draw < 0.1:
            return  # a redraw per finished task would cost more than the tasks
        self._last_draw = now
        elapsed = max(now - self._started, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        filled = _BAR * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (_BAR - filled)
        eta = f"ETA {_clock(left)}" if self.done < self.total else f"in {_clock(elapsed)}"
        self.stream.write(
            f"\r[{bar}] {self.done}/{self.total} done · {self.failed} not completed · "
            f"{self.running} running · {rate:.1f}/s · {eta}\x1b[K"
        )
        self.stream.flush()
