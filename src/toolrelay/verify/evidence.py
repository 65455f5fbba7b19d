"""Building findings from recorded events: the ids and seq numbers a finding rests on."""

from __future__ import annotations

from functools import partial
from typing import Any

from .record import CallTrace
from .verdict import Finding, Said

__all__ = ["call_finding", "seqs_of"]


def seqs_of(*events: dict[str, Any] | None) -> tuple[int, ...]:
    """The seq numbers of the given events (missing ones skipped), in order."""
    seqs = [e["seq"] for e in events if e is not None]
    return tuple(sorted(set(seqs))) if len(seqs) > 1 else tuple(seqs)


def call_finding(
    call: CallTrace, link: str, ok: bool, message: Said, check: str, *events: dict[str, Any] | None
) -> Finding:
    """A finding about one call, carrying both of its ids and where it lives (its seq
    numbers worked out when first read: most findings are only counted)."""
    server, mcp_id = call.finding_ids()
    # in Finding's order: link, ok, message, call_id, mcp_id, server, turn, seqs, check
    return Finding(link, ok, message, call.call_id, mcp_id, server, call.turn,
                   partial(_call_seqs, call.response_seq, events), check)


def _call_seqs(response_seq: int, events: tuple[dict[str, Any] | None, ...]) -> tuple[int, ...]:
    return tuple(sorted([response_seq, *[e["seq"] for e in events if e is not None]]))
