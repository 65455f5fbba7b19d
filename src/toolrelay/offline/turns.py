"""Which script entry answers a request: the turn follows from the request, not a counter.

The turn a request asks for is 1 + the number of model turns its context has answered:
the blocks of ``function_call_output`` items in the input (replay mode), or in the
chained history of ``previous_response_id`` plus the input (chain mode). A block is a
run of consecutive outputs, so a turn of two parallel calls counts once. A run resumed
from its transcript, or re-sent by another process, is therefore answered where its
conversation is, whoever asks and whatever the stand-in answered before.

Each entry has the turn it answers (``entry_turns``): an entry whose answer the loop
carries on from (a completed response with calls, or ``auto``) moves the next entry to the
next turn; the other entries (an HTTP fault, a stream fault, a final message...) leave it
where it is, so a fault and the answer retried after it share a turn. While one
conversation walks the script, entries are played in order (a fault once, then the entry
after it); a request for another turn than the next entry's starts at that turn's first
answering entry, skipping its faults.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

from ..protocol.responses import COMPLETED, FUNCTION_CALL_OUTPUT
from .script import Script, ScriptTurn

__all__ = ["ScriptPosition", "context_turn", "entry_turns"]

_OFFLINE_ID: Final = re.compile(r"^([a-z]+)_offline_(\d+)$")


def context_turn(context: Iterable[dict[str, Any]]) -> int:
    """1 + the number of output blocks in ``context`` (the turns already answered)."""
    blocks = 0
    in_block = False
    for item in context:
        is_output = item.get("type") == FUNCTION_CALL_OUTPUT
        if is_output and not in_block:
            blocks += 1
        in_block = is_output
    return blocks + 1


def _one_shot(entry: ScriptTurn) -> bool:
    """A fault: the request is asked again, so the retry gets the entry after it."""
    return entry.is_fault or entry.stream.fault is not None


def _advances(entry: ScriptTurn) -> bool:
    """Whether the loop goes on to a next turn after this entry's answer."""
    if entry.auto:
        return True
    return not _one_shot(entry) and entry.status == COMPLETED and bool(entry.calls)


def entry_turns(script: Script) -> tuple[int, ...]:
    """The turn each entry answers, in script order."""
    turns: list[int] = []
    turn = 1
    for entry in script.turns:
        turns.append(turn)
        if _advances(entry):
            turn += 1
    return tuple(turns)


class ScriptPosition:
    """Where in the script the next request is answered; moved by each request's turn."""

    def __init__(self, script: Script | None) -> None:
        self._entries = script.turns if script is not None else ()
        self._turns = entry_turns(script) if script is not None else ()
        self.cursor = 0

    def entry_for(self, turn: int) -> int | None:
        """The index of the entry that answers a request for ``turn`` (None: past the script)."""
        if self.cursor < len(self._entries) and self._turns[self.cursor] == turn:
            return self.cursor
        indexes = [i for i, t in enumerate(self._turns) if t == turn]
        answering = [i for i in indexes if not _one_shot(self._entries[i])]
        chosen = answering or indexes
        return chosen[0] if chosen else None

    def played(self, index: int) -> None:
        self.cursor = index + 1


def offline_id_numbers(value: Any) -> tuple[str, int] | None:
    """(prefix, number) of a stand-in id such as ``call_offline_0003``, else None."""
    if not isinstance(value, str):
        return None
    found = _OFFLINE_ID.match(value)
    return (found.group(1), int(found.group(2))) if found else None
