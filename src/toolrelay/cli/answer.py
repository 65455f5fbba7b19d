"""The answer on stdout as the model writes it; its reasoning summaries dimmed on stderr.

``toolrelay run`` subscribes an ``AnswerPrinter`` to the run's events (``relay.run_events``):
each text delta is written to stdout and flushed at once (also into a pipe), each
message ends with a newline, and nothing else goes to stdout, so every message's text
appears once, in order, as it arrives. Reasoning summaries go to stderr, dimmed with ANSI
only when stderr is a terminal. A reader that goes away (``| head -1``) stops the
printing, not the run.
"""

from __future__ import annotations

import sys
from typing import Final, TextIO

from ..relay.run_events import ReasoningDelta, RunEvent, RunFinished, TextDelta, TextDone, TurnFinished
from .closed_stdout import silence

__all__ = ["AnswerPrinter"]

DIM: Final = "\x1b[2m"
RESET: Final = "\x1b[0m"


class AnswerPrinter:
    """Writes text deltas to ``out`` and (when ``reasoning`` is given) summaries there."""

    def __init__(
        self, out: TextIO | None = None, reasoning: TextIO | None = None, *, dim: bool = False
    ) -> None:
        self.out = out or sys.stdout
        self.reasoning = reasoning
        self.dim = dim
        self.turns: set[int] = set()
        """Turns whose text was printed (the answer is then not printed again at the end)."""
        self._mid_line = False
        self._reasoning_mid_line = False
        self._gone = False

    def __call__(self, event: RunEvent) -> None:
        if isinstance(event, ReasoningDelta):
            if event.summary and self.reasoning is not None:
                self._reason(event.text)
            return
        self._end_reasoning_line()
        if isinstance(event, TextDelta) and event.text:
            self.turns.add(event.turn)
            self._write(event.text)
        elif isinstance(event, (TextDone, TurnFinished, RunFinished)) and self._mid_line:
            self._write("\n")  # a message ended (or broke off): the next starts on its own line

    def _write(self, text: str) -> None:
        if self._gone:
            return
        try:
            self.out.write(text)
            self.out.flush()
        except BrokenPipeError:
            self._gone = True
            silence(self.out)
            return
        self._mid_line = not text.endswith("\n")

    def _reason(self, text: str) -> None:
        assert self.reasoning is not None
        self.reasoning.write(f"{DIM}{text}{RESET}" if self.dim else text)
        self.reasoning.flush()
        self._reasoning_mid_line = not text.endswith("\n")

    def _end_reasoning_line(self) -> None:
        if self._reasoning_mid_line and self.reasoning is not None:
            self.reasoning.write("\n")
            self.reasoning.flush()
            self._reasoning_mid_line = False

