"""Which model turns a policy rule holds in: ``"turns": "1-3"``, ``"4-"`` or ``"2"``.

Turns are the run's model requests, numbered from 1 as the transcript numbers them (a
conversation's user turns go on counting; a resumed run keeps its numbers). Pure: the
relay and verify read a rule's span through this one parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from ...errors import UsageError

__all__ = ["TurnSpan", "parse_turns"]

_FORM: Final = re.compile(r"([0-9]+)(-([0-9]*))?")
FORMS: Final = '"N" (one turn), "N-M" (N to M) or "N-" (N on), model turns counted from 1'


@dataclass(frozen=True, slots=True)
class TurnSpan:
    """Turns ``first`` to ``last`` (None: every turn from ``first`` on)."""

    first: int
    last: int | None

    def holds(self, turn: int | None) -> bool:
        """Whether ``turn`` is in the span (None, a call outside any model turn: never)."""
        if turn is None:
            return False
        return self.first <= turn and (self.last is None or turn <= self.last)

    @property
    def words(self) -> str:
        """The span in a sentence: ``in turn 2``, ``in turns 1-3``, ``from turn 4 on``."""
        if self.last is None:
            return f"from turn {self.first} on"
        return f"in turn {self.first}" if self.last == self.first else f"in turns {self.first}-{self.last}"

    @property
    def text(self) -> str:
        """The span as written (``1-3``, ``4-``, ``2``)."""
        if self.last == self.first:
            return str(self.first)
        return f"{self.first}-{self.last if self.last is not None else ''}"


def parse_turns(value: Any, at: str) -> TurnSpan:
    """``"1-3"`` → turns 1 to 3; UsageError naming ``at`` (the file and rule) otherwise."""
    found = _FORM.fullmatch(value) if isinstance(value, str) else None
    if found is None:
        raise UsageError(f'{at}: "turns" must be {FORMS}, got {value!r}')
    first = int(found.group(1))
    last = first if found.group(2) is None else (int(found.group(3)) if found.group(3) else None)
    if first < 1 or (last is not None and last < first):
        raise UsageError(f'{at}: "turns" {value!r} names no turn: {FORMS}, the first not after the last')
    return TurnSpan(first, last)
