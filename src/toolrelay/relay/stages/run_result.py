"""How a run ended: ``RunResult``, with every call and both of its ids.

Its own module so that the loop and the events it tells (``run_events``) both import it
without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .result import CallOutcome

__all__ = ["RunResult"]


@dataclass(slots=True, kw_only=True)
class RunResult:
    """How a run ended, with every call and both of its ids."""

    run_id: str
    status: str
    """completed, refused, max_turns, max_tool_calls, timeout, aborted, incomplete, failed,
    cancelled (the model's own statuses pass through), or error (the endpoint failed); in
    words: ``relay.stages.endings.ending_sentence``."""
    reason: str
    """Why it ended, in words (the model answered, which limit was reached, what failed)."""
    final_text: str | None = None
    """The answer: the message text of the last response (None unless it answered)."""
    refusal: str | None = None
    """The model's refusal text, when it refused (status ``refused``)."""
    turns: int = 0
    """Model requests answered in this run (in a ``Conversation``: this user turn's)."""
    calls: list[CallOutcome] = field(default_factory=list)
    """Every call the model asked for, in order, each with its outcome (``CallOutcome``:
    ``status`` ok, tool_error, invalid_arguments, not_approved, …, the model's ``call_id``
    and the ``mcp_id`` it was sent with, server, tool, the exact request and response):
    failed, refused and cancelled calls too, and duplicates refused as such."""
    response_ids: list[str] = field(default_factory=list)
    """The ids of the model's responses, in order."""
    usage: dict[str, int] = field(default_factory=dict)
    """Token counts summed over the run's model responses (``relay.stages.usage``: input, output,
    total, cached input, reasoning); a count no response gave is absent, not 0."""
    cost: dict[str, float] = field(default_factory=dict)
    """With a price table (``prices``, ``--prices``) naming the model: the dollars ``usage``
    costs, by part (``input``, ``cached_input``, ``cache_write``, ``output``) and ``total``
    (``relay.stages.cost``); empty without one."""

    @property
    def completed(self) -> bool:
        return self.status == "completed"

    @property
    def failed_calls(self) -> int:
        """Calls that did not end ``ok``: a completed run may have some (the model answered
        anyway), so check this too when every call must have worked."""
        return sum(1 for call in self.calls if not call.ok)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "status": self.status,
            "reason": self.reason,
            "final_text": self.final_text,
            "refusal": self.refusal,
            "turns": self.turns,
            "failed_calls": self.failed_calls,
            "response_ids": self.response_ids,
            "usage": self.usage,
            **({"cost": self.cost} if self.cost else {}),
            "calls": [c.to_record() | {"arguments_text": c.arguments_text} for c in self.calls],
        }
