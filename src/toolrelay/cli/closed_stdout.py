"""When the reader of a command's output goes away (``toolrelay call … --wire | head -3``).

A write to a pipe nobody reads raises ``BrokenPipeError`` where it happens. In a verb's
own code that unwinds the command (``main`` ends it quietly). In an event subscriber it
happens inside whatever emitted the event, a server's stdio reader for one: raised there,
it broke that reader off (an answer never delivered, a command that hung with its server
still running). Such a printer calls ``reader_gone`` instead: the descriptor is pointed at
/dev/null (later writes, and Python's flush at exit, are silent) and the command ends as
SIGPIPE would end it, with status 141, but through the normal unwinding, so every server
is stopped first.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Final, NoReturn, TextIO

__all__ = ["EXIT_STDOUT_CLOSED", "StdoutClosed", "reader_gone", "silence", "write_or_stop"]

EXIT_STDOUT_CLOSED: Final = 141
"""128 + SIGPIPE: what a shell shows for a writer its pipe's reader left."""


class StdoutClosed(SystemExit):
    """The command's output has no reader any more: stop (a SystemExit, so the event loop
    lets it through and ``asyncio.run`` cancels the command's task, which stops the servers)."""

    def __init__(self) -> None:
        super().__init__(EXIT_STDOUT_CLOSED)


def silence(stream: TextIO) -> None:
    """Point a closed pipe's descriptor at /dev/null: Python flushes stdout at exit."""
    with contextlib.suppress(OSError, ValueError):  # not a real descriptor: a test's StringIO
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


def reader_gone(stream: TextIO) -> None:
    """``stream``'s reader went away: silence it, and end the command, from the event loop
    when one runs (never inside the code that was writing, which would be left half done),
    else at once."""
    silence(stream)
    # no event loop runs where asyncio was never imported (a verb that needs none: verify,
    # explain, view), and those verbs should not pay for importing it
    asyncio = sys.modules.get("asyncio")
    try:
        loop = asyncio.get_running_loop() if asyncio is not None else None
    except RuntimeError:  # none runs
        loop = None
    if loop is None:
        raise StdoutClosed
    loop.call_soon(_stop)


def _stop() -> NoReturn:
    raise StdoutClosed


def write_or_stop(stream: TextIO, text: str) -> None:
    """Write and flush ``text``; a reader that went away ends the command (``reader_gone``)."""
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        reader_gone(stream)
