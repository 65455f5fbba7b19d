"""What the proxy's verifiers share: the names of their parts, and the one rule for an
upstream JSON-RPC error passed on to the host (the same for a call's answer and a task's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .verdict import Finding

__all__ = ["Event", "Say", "Triple", "passed_error"]

Event = dict[str, Any]
Triple = tuple[Any, Any, Any]
"""A request's (host, exchange or connection, JSON-RPC id): ids are unique only within one leg."""
Say = Callable[..., Finding]


def passed_error(said: Say, response: Event, answer: Event) -> Finding | None:
    """When the upstream ``response`` is an error: whether the host's ``answer`` is that error,
    code and message unchanged; None when the upstream answered with a result."""
    upstream, host = response.get("message", {}), answer.get("message", {})
    if "error" not in upstream:
        return None
    same = host.get("error", {}).get("code") == upstream["error"].get("code") and \
        host.get("error", {}).get("message") == upstream["error"].get("message")
    return said("feedback", "passed_on", same, "the upstream JSON-RPC error passed on unchanged" if same
                else "the upstream JSON-RPC error is not the one the host got", response, answer)
