"""Where a conversation's next user turn starts: the context so far, and the count so far.

``Relay.run(text, first_input=items, continuing=point)`` goes on from ``point.context`` (in
replay mode every item so far is sent again, then ``items``; in chain mode
``previous_response_id`` names the last response and only ``items`` are sent), numbers its
turns after ``point.turns`` and adds its token usage to ``point.usage``, so that the whole
conversation is one run in one transcript (a ``user_turn`` record starts each user turn
after the first). ``Relay.context`` is the context a run ended with: the next point's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .stages.request import Conversation

__all__ = ["Continuation"]


@dataclass(slots=True, kw_only=True)
class Continuation:
    """A conversation's state before its next user turn."""

    context: Conversation
    """The items the model has seen and produced so far (the replay history), and the last
    response's id (what chain mode continues)."""
    turns: int
    """The model turns so far: the next user turn's first is ``turns + 1``."""
    user_turn: int
    """The number of the user turn that starts (2 for the second message)."""
    usage: dict[str, int] = field(default_factory=dict)
    """The token usage so far (``RunResult.usage`` goes on from it)."""

    def fresh_context(self) -> Conversation:
        """A copy of the context for the run to extend (the point stays as it was)."""
        return Conversation(history=list(self.context.history), pending=list(self.context.pending),
                            previous_response_id=self.context.previous_response_id)
