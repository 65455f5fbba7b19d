"""A call made without a model (``toolrelay call``), as its transcript records it.

``toolrelay call --transcript PATH`` records the servers' messages, the policy and its
decisions, and the call's own events, between two records of its own: ``direct_call``
(the alias and arguments text as given, and the call_id the call's events carry, since no
model named one) and ``direct_call_end`` (how it ended: the outcome's status, or
``not_offered`` with the reason for an alias withheld from the offer, or ``unavailable``).
``verify`` judges such a transcript as one call (``verify/direct_call.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Final

from ...events import Event

__all__ = ["NOT_OFFERED", "DirectCall", "DirectCallEnd"]

NOT_OFFERED: Final = "not_offered"
"""``direct_call_end``'s status for an alias the offer withheld (the call was never made)."""


@dataclass(slots=True, kw_only=True)
class DirectCall(Event):
    """The call asked for: alias, arguments text exactly as given, the call_id it runs under."""

    kind: ClassVar[str] = "direct_call"
    call_id: str
    alias: str
    arguments_text: str


@dataclass(slots=True, kw_only=True)
class DirectCallEnd(Event):
    """How the call ended: its outcome's ``status`` (``refused_by_hook``, ``ok``...), or
    ``not_offered`` / ``unavailable`` with ``reason`` when it was never dispatched."""

    kind: ClassVar[str] = "direct_call_end"
    call_id: str
    status: str
    reason: str = ""
