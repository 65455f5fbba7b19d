"""The stand-in's compaction: a ``compaction`` item first in a response's output.

It compacts when the script's entry says ``"compact": true``, or when the request asks for
it (``context_management: [{"type": "compaction", "compact_threshold": N}]``) and the
context it answers is more than ``N`` tokens by the stand-in's estimate (``token_estimate``,
deterministic). Its ``encrypted_content`` is opaque to the relay but holds nothing secret:
``gAAAAC`` and the base64 of ``offline-compaction:`` with the turn it was made at and how
many items it folded. The turn is what ``turns.request_turn`` counts on from once the
items before it are gone, so a script goes on at the right entry after a compaction.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any, Final

from ..protocol.responses import COMPACTION
from .state import IdSource
from .wire import token_estimate

__all__ = ["compaction_item", "compaction_turn", "wants_compaction"]

_PREFIX: Final = "gAAAAC"
_LABEL: Final = "offline-compaction:"


def wants_compaction(body: Mapping[str, Any], context: list[dict[str, Any]]) -> bool:
    """Whether the request asks for compaction at a threshold its context is above."""
    threshold = _threshold(body.get("context_management"))
    return threshold is not None and token_estimate(context) > threshold


def compaction_item(ids: IdSource, turn: int, folded: int) -> dict[str, Any]:
    """A ``compaction`` output item made at ``turn`` out of ``folded`` context items."""
    facts = json.dumps({"turn": turn, "items": folded}, separators=(",", ":"))
    token = base64.urlsafe_b64encode(f"{_LABEL}{facts}".encode()).decode()
    return {"id": ids.next("cmp"), "type": COMPACTION, "encrypted_content": _PREFIX + token}


def compaction_turn(item: Mapping[str, Any]) -> int | None:
    """The turn a stand-in compaction item was made at (None for any other content)."""
    content = item.get("encrypted_content")
    if not isinstance(content, str) or not content.startswith(_PREFIX):
        return None
    try:
        text = base64.urlsafe_b64decode(content[len(_PREFIX):]).decode()
        facts = json.loads(text[len(_LABEL):]) if text.startswith(_LABEL) else None
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    turn = facts.get("turn") if isinstance(facts, dict) else None
    return turn if isinstance(turn, int) and not isinstance(turn, bool) and turn > 0 else None


def _threshold(value: Any) -> int | None:
    for entry in value if isinstance(value, list) else []:
        if isinstance(entry, Mapping) and entry.get("type") == COMPACTION:
            threshold = entry.get("compact_threshold")
            if isinstance(threshold, int) and not isinstance(threshold, bool):
                return threshold
    return None
