"""A tool definition's digest: the same definition always gives the same one.

The definition is what the model is shown and what consent and early starts rely on:
``name``, ``title``, ``description``, ``inputSchema``, ``outputSchema`` and
``annotations`` (fields a server leaves out are left out; ``icons``, ``_meta`` and
``execution`` are not part of it). Its canonical JSON has sorted keys, no spaces, text
as UTF-8, and one form per number (``1.0`` is ``1``, ``-0.0`` is ``0``), in the spirit of
RFC 8785, so two servers sending the same rules in another key order or number spelling
get one digest. The digest is ``sha256:`` and that JSON's hex SHA-256.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["DEFINITION_FIELDS", "canonical_json", "tool_definition", "tool_digest"]

DEFINITION_FIELDS: Final = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")

_EXACT_INTEGER: Final = 2**53  # beyond it a float's integral value is not one exact JSON number


def tool_definition(tool: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of ``tool`` its digest covers, as listed."""
    return {key: tool[key] for key in DEFINITION_FIELDS if key in tool}


def canonical_json(value: Any) -> str:
    """``value`` as canonical JSON text (sorted keys, compact, one form per number)."""
    return json.dumps(_canonical(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def tool_digest(tool: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``tool``'s definition."""
    text = canonical_json(tool_definition(tool))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _canonical(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < _EXACT_INTEGER else value
    if isinstance(value, Mapping):
        return {str(key): _canonical(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(item) for item in value]
    return value
