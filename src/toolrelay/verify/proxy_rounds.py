"""Verify a 2026-07-28 host's call that took ``input_required`` rounds (``proxy/rounds.py``).

Its requests are recorded under one key, each with its ``round`` (0 for the first, 1, 2,
... for each retry). ``round_chain`` (correlation): each round is received once and
answered once with its own id; every round but the last is answered ``input_required``
with a ``requestState``, and the next round carries that state back unchanged; the last
round's answer is the call's answer (``proxy_legs`` holds it to the upstream's), or, for
a call cancelled or given up, there is none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from .verdict import Finding

__all__ = ["asks_again", "is_in_rounds", "round_chain"]

Event = dict[str, Any]
Say = Callable[..., Finding]
_INPUT_REQUIRED: Final = "input_required"


def is_in_rounds(received: list[Event]) -> bool:
    """Whether a call took rounds (a single round is checked as any request is)."""
    return any(event.get("round") for event in received)


def _result(event: Event) -> Any:
    return (event.get("message") or {}).get("result")


def asks_again(answer: Event) -> bool:
    """Whether a host answer is an ``input_required`` round (it asks, it does not answer)."""
    return _asks_again(answer)


def _asks_again(answer: Event) -> bool:
    result = _result(answer)
    return isinstance(result, dict) and result.get("resultType") == _INPUT_REQUIRED


def round_chain(
    said: Say, received: list[Event], answers: list[Event],
) -> tuple[Finding, Event, Event | None]:
    """The chain's finding, its last request, and the answer that ended it (None: none did)."""
    ins = {event.get("round"): event for event in received}
    outs: dict[Any, list[Event]] = {}
    for answer in answers:
        outs.setdefault(answer.get("round"), []).append(answer)
    rounds = len(received)
    last = received[-1]
    if sorted(ins, key=str) != sorted(range(rounds), key=str) or len(ins) != rounds:
        return said("correlation", "round_chain", False, "its rounds are not numbered 0, 1, ... once each",
                    *received), last, None
    for number in range(rounds):
        asked, given = ins[number], outs.get(number, [])
        if len(given) > 1 or (not given and number < rounds - 1):
            return said("correlation", "round_chain", False,
                        f"round {number} is answered {len(given)} times", asked, *given), last, None
        if given and (given[0].get("message") or {}).get("id") != (asked.get("message") or {}).get("id"):
            return said("correlation", "round_chain", False,
                        f"round {number} is answered with another request's id", asked, given[0]), last, None
        if number < rounds - 1:
            problem = _retry_problem(given[0], ins[number + 1])
            if problem is not None:
                return said("correlation", "round_chain", False, f"round {number + 1} {problem}",
                            given[0], ins[number + 1]), last, None
    final = outs.get(rounds - 1, [])
    ended = final[0] if final and not _asks_again(final[0]) else None
    how = "then the answer" if ended is not None else "then none (cancelled or given up)"
    return said("correlation", "round_chain", True, f"{rounds} rounds: {rounds - 1} answered input_required, "
                f"{how}", *received, *answers), last, ended


def _retry_problem(answer: Event, retry: Event) -> str | None:
    if not _asks_again(answer):
        return "follows an answer that was not input_required"
    state = _result(answer).get("requestState")
    params = (retry.get("message") or {}).get("params") or {}
    if params.get("requestState") != state:
        return "does not carry back the requestState it was given"
    return None
