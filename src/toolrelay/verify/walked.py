"""What one check's walk over every event of a kind found, kept for a later check that
would walk them again only to learn it (each walk over a large record costs a memory
fetch per event, whatever little it reads).

Kept in ``RunFacts.walked``, i.e. for one ``verify``'s checks over one record, never
longer: a check run on its own (or first) finds it out for itself, as it always did.
"""

from __future__ import annotations

from typing import Any, Final

from .facts import RunFacts
from .mcp_pairs import MCP_WALK

__all__ = ["MCP_WALK", "REQUEST_METHODS", "SEQS_IN_ORDER", "keep", "kept"]

REQUEST_METHODS: Final = "request_methods"
"""The methods of the run's mcp_request events (a frozenset of str), from ``check_mcp_pairs``;
not kept when a method is not a string."""
SEQS_IN_ORDER: Final = "seqs_in_order"
"""True when every event's seq is one more than the one before, in the record's order
(``check_event_order``)."""

def keep(facts: RunFacts, name: str, value: Any) -> None:
    facts.walked[name] = value


def kept(facts: RunFacts, name: str) -> Any:
    """What a check kept under ``name`` for this verify, or None."""
    return facts.walked.get(name)
