"""What the offline stand-in model remembers: its ids and every response it gave.

Ids are counters per prefix (``resp_offline_0001``, ``fc_offline_0001``, ...), so two
runs give identical ids. Every response is recorded, stored or not, because the real
API's checks need to know which items it produced: which reasoning item came with which
call, and whether a response may be continued (only when it was stored).
"""

from __future__ import annotations

import base64
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..protocol.responses import REASONING

__all__ = ["IdSource", "IssuedResponse", "Ledger", "encrypted_reasoning"]


class IdSource:
    """Deterministic ids: ``<prefix>_offline_<n>`` with one counter per prefix.

    ``seen`` moves a counter past an id of its form found in a request, so a stand-in
    answering a conversation that another one began (a resumed run) never gives an id
    that the conversation already holds."""

    def __init__(self) -> None:
        self._last: defaultdict[str, int] = defaultdict(int)

    def next(self, prefix: str) -> str:
        self._last[prefix] += 1
        return f"{prefix}_offline_{self._last[prefix]:04d}"

    def seen(self, prefix: str, number: int) -> None:
        if number > self._last[prefix]:
            self._last[prefix] = number


def encrypted_reasoning(item_id: str) -> str:
    """The stand-in's opaque ``encrypted_content`` for a reasoning item (checked on replay)."""
    token = base64.urlsafe_b64encode(f"offline-reasoning:{item_id}".encode()).decode()
    return f"gAAAAB{token}"


@dataclass(slots=True, kw_only=True)
class IssuedResponse:
    """One response the stand-in gave, with the context it answered."""

    response_id: str
    store: bool
    context: list[dict[str, Any]]
    """Every item the model saw: the chained history plus this request's input."""
    output: list[dict[str, Any]]

    @property
    def history(self) -> list[dict[str, Any]]:
        """What a request continuing this response (``previous_response_id``) sees first."""
        return [*self.context, *self.output]

    def reasoning_before(self, item_id: str) -> str | None:
        """The id of the reasoning item this response emitted before item ``item_id``."""
        reasoning: str | None = None
        for item in self.output:
            if item.get("id") == item_id:
                return reasoning
            if item.get("type") == REASONING:
                reasoning = item.get("id")
        return None


@dataclass(slots=True)
class Ledger:
    """Every response and output item the stand-in issued, by id."""

    responses: dict[str, IssuedResponse] = field(default_factory=dict)
    items: dict[str, IssuedResponse] = field(default_factory=dict)
    """Output item id → the response that emitted it."""

    def record(self, response: IssuedResponse) -> None:
        self.responses[response.response_id] = response
        for item in response.output:
            if isinstance(item.get("id"), str):
                self.items[item["id"]] = response

    def stored(self, response_id: str) -> IssuedResponse | None:
        """The response ``previous_response_id`` may name: known and stored."""
        response = self.responses.get(response_id)
        return response if response is not None and response.store else None

    def issuer(self, item_id: Any) -> IssuedResponse | None:
        return self.items.get(item_id) if isinstance(item_id, str) else None
