"""How a run ended, in words: one sentence for each status a run can end with.

``RunResult.status`` is a word for programs (``max_turns``); people read
``stopped at the turn limit (1)``. The progress line, ``run``'s closing line, ``demo``
and ``explain`` all say it with ``ending_sentence`` / ``ending_line``, after "run" or
"the run".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

__all__ = ["RUN_STATUSES", "ending_line", "ending_sentence"]


def _turns(count: int) -> str:
    return f"{count} turn" if count == 1 else f"{count} turns"


_SENTENCES: Final[dict[str, Callable[[int], str]]] = {
    "completed": lambda n: f"completed after {_turns(n)}",
    "refused": lambda n: f"ended after {_turns(n)}: the model refused",
    "max_turns": lambda n: f"stopped at the turn limit ({n})",
    "max_tool_calls": lambda n: f"stopped at the tool call limit after {_turns(n)}",
    "timeout": lambda n: f"stopped at its time limit during turn {n}",
    "aborted": lambda n: f"was interrupted during turn {n}",
    "incomplete": lambda n: f"ended after {_turns(n)} with an incomplete response",
    "failed": lambda n: f"ended after {_turns(n)} with a failed response",
    "cancelled": lambda n: f"ended after {_turns(n)} with a cancelled response",
    "error": lambda n: f"ended in turn {n}: the model endpoint failed",
    "uncertain": lambda n: f"stopped in turn {n}: a call was sent but its answer was never recorded",
}

RUN_STATUSES: Final = tuple(_SENTENCES)
"""Every status a run can end with (the model's own response statuses pass through)."""


def ending_sentence(status: str, turns: int) -> str:
    """``stopped at the turn limit (1)``: what ``status`` means, said after "the run"."""
    sentence = _SENTENCES.get(status)
    if sentence is None:  # a response status of the model's that toolrelay does not know
        return f"ended after {_turns(turns)} with the response status {status!r}"
    return sentence(turns)


def ending_line(status: str, turns: int, reason: str) -> str:
    """The sentence, then the reason when it adds something."""
    sentence = ending_sentence(status, turns)
    return f"{sentence}: {reason}" if reason and not sentence.endswith(reason) else sentence
