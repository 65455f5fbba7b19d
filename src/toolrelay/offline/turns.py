"""Which script entry answers a request: the turn the request's context has reached.

The rule (docs/model.md, "With --script FILE"): a request's **turn is 1 + the number of
times tool outputs came back in its context**, the context being the chained history of
``previous_response_id`` (when the stand-in knows it) followed by the request's input; a
run of consecutive ``function_call_output`` items counts once, as one response's outputs
go back together. A user message after an item the model produced (one with an ``id``:
an answer; or, as chat replays answers without ids, an assistant message right after
outputs) or after outputs counts too: a conversation's next user turn
(``toolrelay.Conversation``) is the next turn, so one script answers a whole
conversation. So turn N's request, in replay or chain mode, is answered by the N-th
Response entry however often it is sent: a retried request, or a run resumed from its
last request, gets the same entry as the first try, and nothing depends on how many
requests came before.

Faults are events, not turns: each ``http_status`` entry answers one request of the turn
after it, once, in script order (so ``[{"http_status": 500}, {"calls": …}]`` fails the
first request and answers its retry); a turn's ``stream_fault`` happens on its first
answer only. ``reset()`` forgets what was served.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any, Final

from ..protocol.responses import FUNCTION_CALL_OUTPUT
from .checks import input_items
from .compaction import compaction_turn
from .script import Script, ScriptTurn
from .state import Ledger

__all__ = ["ScriptProgress", "offline_id_numbers", "request_context", "request_turn"]

_OFFLINE_ID: Final = re.compile(r"^([a-z]+)_offline_(\d+)$")


def _answers(item: dict[str, Any]) -> bool:
    """An output the relay gave: a ``function_call_output``, or a client ``tool_search_output``."""
    kind = item.get("type")
    searched = kind == "tool_search_output" and item.get("execution") == "client"
    return kind == FUNCTION_CALL_OUTPUT or searched


def request_turn(context: list[dict[str, Any]]) -> int:
    """1 + the number of runs of outputs the relay gave (``function_call_output`` items, and
    the ``tool_search_output`` items answering client searches) in ``context``, and of user
    messages that follow an item of the model's (a conversation's next user turn); a
    stand-in compaction item sets the count to the turn it was made at (``compaction.py``)."""
    turn = 1
    after_output = after_model = False
    for item in context:
        compacted_at = compaction_turn(item)
        if compacted_at is not None:  # it folded the turns before it: count on from its own
            turn, after_output, after_model = compacted_at, False, True
            continue
        is_output = _answers(item)
        is_user = item.get("role") == "user"
        if (is_output and not after_output) or (is_user and after_model):
            turn += 1
        after_output = is_output
        # chat replays answers without ids: an assistant message right after the outputs (or
        # another answer) is the model's answer to them, never a prompt's own message
        answered = after_model and item.get("role") == "assistant"
        after_model = not is_user and (is_output or "id" in item or answered)
    return turn


def request_context(body: Mapping[str, Any], ledger: Ledger) -> list[dict[str, Any]]:
    """The items a request's turn is read from: the chained history (when the response it
    continues is known and stored) and the input. Lenient: the request is checked later."""
    value = body.get("input")
    items = input_items(value if isinstance(value, str | list) else None)
    previous_id = body.get("previous_response_id")
    previous = ledger.stored(previous_id) if isinstance(previous_id, str) else None
    return items if previous is None else [*previous.history, *items]


class ScriptProgress:
    """A script read as turns: each turn's Response entry, the faults before it, and what
    has been served of them."""

    def __init__(self, script: Script) -> None:
        self._entries: list[ScriptTurn] = []
        self._faults: list[list[ScriptTurn]] = [[]]
        """``_faults[N - 1]``: the http_status entries before turn N's entry."""
        for entry in script.turns:
            if entry.is_fault:
                self._faults[-1].append(entry)
            else:
                self._entries.append(entry)
                self._faults.append([])
        self._faults_served: Counter[int] = Counter()
        self._answers: Counter[int] = Counter()

    def reset(self) -> None:
        self._faults_served.clear()
        self._answers.clear()

    def next_fault(self, turn: int) -> ScriptTurn | None:
        """The http_status entry this request of ``turn`` gets (used up), or None."""
        faults = self._faults[turn - 1] if turn <= len(self._faults) else []
        served = self._faults_served[turn]
        if served >= len(faults):
            return None
        self._faults_served[turn] += 1
        return faults[served]

    def entry(self, turn: int) -> ScriptTurn | None:
        """Turn ``turn``'s Response entry (None after the script)."""
        return self._entries[turn - 1] if turn <= len(self._entries) else None

    def answered(self, turn: int) -> int:
        """How many answers ``turn`` has had (counted by ``first_answer``)."""
        return self._answers[turn]

    def first_answer(self, turn: int) -> bool:
        """Count an answer to ``turn``; whether it is the first (a stream fault's one chance)."""
        self._answers[turn] += 1
        return self._answers[turn] == 1


def offline_id_numbers(value: Any) -> tuple[str, int] | None:
    """(prefix, number) of a stand-in id such as ``call_offline_0003``, else None."""
    if not isinstance(value, str):
        return None
    found = _OFFLINE_ID.match(value)
    return (found.group(1), int(found.group(2))) if found else None
