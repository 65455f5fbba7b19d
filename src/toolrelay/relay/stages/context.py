"""What travels with one call beside the call itself: ``CallContext``, and the ``CallHook``
seam that sees every call.

A dispatch takes two values: the call as the model made it (``parse.FunctionCall``) and
its ``CallContext`` (consent, the time limit, how a cancellation is told, the hooks, the
``_meta`` entries for the MCP request, and the route once it is known). A feature that
concerns every call (a trace span, a pin check, an audit line) is a ``CallHook`` given
to the run (``RunOptions(hooks=...)``), the batch, or ``Catalog.call``: no signature on
the way from the loop to the connection changes for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from .consent import Approver
from .parse import FunctionCall

if TYPE_CHECKING:  # result.py needs nothing of this module; only the hook's signature names it
    from .result import CallOutcome

__all__ = ["INTERRUPTED", "CallContext", "CallHook", "Refusal", "StopReason", "Stopped"]

StopReason = Callable[[], str]
"""Says why a call is being cancelled, asked at that moment (the run knows, the call does not)."""
INTERRUPTED: Final = "the run was interrupted before the call ended"
"""A cancelled call's message when nobody says why."""
Stopped = Callable[["CallOutcome"], None]
"""Told a cancelled call's outcome before the cancellation goes on (the run keeps it)."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """A hook's refusal that names what refused, so the user and the model are not told
    "hook" for a rule of theirs: ``Refusal(reason, by="policy")`` ends the call
    ``refused_by_hook`` with ``refused_by="policy"``, read ``Error (policy): <reason>``."""

    reason: str
    by: str
    """What refused, in one word (``policy``), recorded as the outcome's ``refused_by``."""

    def __str__(self) -> str:
        return self.reason


class CallHook(Protocol):
    """Sees every call around its dispatch; both methods are optional (an object with
    either one is a hook; subclass this to get the other as a no-op).

    ``before_call`` runs once the call is parsed and routed (``context.server`` and
    ``context.tool`` name the route; None for an unknown tool) and before its arguments
    are checked, consent is asked or anything is sent. It may add ``context.meta``
    entries (sent in the MCP request's ``params._meta``); a string it returns refuses
    the call: the call ends ``refused_by_hook`` with that reason, which is the model's
    feedback (``Error (refused by hook): <reason>``), and nothing is sent (a ``Refusal``
    names what refused instead of "hook", as the policy's does).
    ``after_call`` runs for every call ``before_call`` saw, whatever its outcome (a
    cancelled call's too, before the cancellation goes on: keep it short)."""

    async def before_call(self, call: FunctionCall, context: CallContext) -> str | Refusal | None:
        return None

    async def after_call(self, call: FunctionCall, context: CallContext, outcome: CallOutcome) -> None:
        return None


@dataclass(slots=True, kw_only=True)
class CallContext:
    """One call's circumstances: what the caller decides for it, and what the dispatch
    learns on the way (the route). One context per call: hooks may write to it."""

    approve: Approver | None = None
    """Asked for tools not marked read-only (None: nobody is asked)."""
    timeout: float | None = None
    """Replaces the server's tools/call timeout when set."""
    stop_reason: StopReason | None = None
    """Why the call is being cancelled, if it is (default ``INTERRUPTED``)."""
    on_stopped: Stopped | None = None
    """Given the outcome of a cancelled call before the cancellation goes on."""
    hooks: Sequence[CallHook] = ()
    """Run in order before the call; their ``after_call`` in the same order after it."""
    meta: dict[str, Any] = field(default_factory=dict)
    """Entries for the MCP request's ``params._meta`` (toolrelay's own keys, such as the
    progress token and the 2026-07-28 envelope, win a clash)."""
    server: str | None = None
    """The server the call is routed to, once it is (None before, or for an unknown tool)."""
    tool: str | None = None
    """The tool's own name on ``server``, once routed."""
    turn: int | None = None
    """The model turn whose response made the call (None: a call outside any turn, such as
    ``toolrelay call``'s); a policy's phase rules hold by it."""

    def stop_text(self) -> str:
        """Why the call is being cancelled, asked now."""
        return self.stop_reason() if self.stop_reason is not None else INTERRUPTED
