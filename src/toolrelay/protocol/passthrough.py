"""What of a result a proxy passes on unchanged: the result minus its era's envelope.

A 2026-07-28 result carries ``resultType`` and ``io.modelcontextprotocol/...`` keys in its
``_meta`` (the server's info, cache hints): they belong to the leg they crossed, not to
the result. ``toolrelay proxy`` passes every upstream result on as ``passed_on`` gives it,
and ``verify`` holds the host's answer to the same function, so a result's content,
``structuredContent``, ``isError`` and its server's own ``_meta`` entries cross unchanged.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["ENVELOPE_PREFIX", "passed_on"]

ENVELOPE_PREFIX: Final = "io.modelcontextprotocol/"
_RESULT_TYPE: Final = "resultType"


def passed_on(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` without its era's envelope (a new dict; ``result`` is left as it is)."""
    out = {key: value for key, value in result.items() if key != _RESULT_TYPE}
    meta = out.get("_meta")
    if isinstance(meta, dict):
        kept = {key: value for key, value in meta.items() if not key.startswith(ENVELOPE_PREFIX)}
        if kept:
            out["_meta"] = kept
        else:
            del out["_meta"]
    return out
