"""Ending the ``toolrelay`` process without freeing what a reading verb leaves behind.

``toolrelay verify`` of a 10,000-call transcript builds a few million objects (the run's
events, its index, the verdict). Freeing them one by one when the verb returns, and again
walking them at interpreter shutdown, cost ~0.3 s of CPU (measured: bench/README.md),
for memory the operating system takes back at once. A verb that only reads and prints
(verify, explain, view) hands its large values to ``keep_until_exit``; the process entry
(``command``) then flushes stdout and stderr and ends with ``os._exit``, as mypy does.

Only the process entry arms this: ``main(argv)`` called in a Python process (tests, a
program that embeds the CLI) keeps nothing and returns as ever. A verb that leaves work
for exit handlers (servers to stop, exporters to flush, temporary files) keeps nothing,
so its process exits the usual way.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import NoReturn

__all__ = ["end_process", "keep_until_exit"]

_armed = False
_kept: list[object] = []


def arm() -> None:
    """The process will end by ``end_process``: values kept are never freed (``command``)."""
    global _armed
    _armed = True


def keep_until_exit(*values: object) -> None:
    """Keep ``values`` alive until the process ends (nothing, unless ``arm`` was called)."""
    if _armed:
        _kept.extend(values)


def end_process(code: int) -> NoReturn:
    """End the process with ``code``: when values were kept, flush the standard streams and
    exit at once (no freeing, no shutdown walk of the heap); else the usual ``sys.exit``."""
    if not _kept:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BrokenPipeError, ValueError):  # a reader gone after the work: no failure
            stream.flush()
    os._exit(code)
