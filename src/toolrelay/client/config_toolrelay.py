"""The config's own top-level ``"toolrelay"`` block, and keys of an entry that toolrelay does not read.

    {"mcpServers": {...},
     "toolrelay": {"policy": {"rules": [...]}}}        # or "policy": "policy.json"

``policy`` holds a policy's rules inline, or the path of a policy file (relative to the
config's folder; ``relay/policy.py`` reads either). Other clients ignore the block.

An entry's ``"allow"`` or ``"deny"`` beside ``"command"`` is read by no client: toolrelay's
lists go inside the entry's ``"toolrelay"`` block. Such a key is said once, as a warning,
so a user who meant to deny a tool learns that nothing is denied.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from ..errors import ConfigError

__all__ = ["misplaced_keys", "toolrelay_block"]

_TOP_KEYS: Final = frozenset({"policy"})
_ENTRY_KEYS: Final = ("allow", "deny")


def toolrelay_block(document: dict[str, Any], path: Path) -> dict[str, Any]:
    """The document's top-level ``"toolrelay"`` object ({} without one); ConfigError for one
    that is not an object or holds a key toolrelay does not know."""
    block = document.get("toolrelay", {})
    if not isinstance(block, dict):
        raise ConfigError(f'{path}: the top-level "toolrelay" must be an object')
    unknown = sorted(set(block) - _TOP_KEYS)
    if unknown:
        known = ", ".join(sorted(_TOP_KEYS))
        raise ConfigError(f'{path}: unknown key "toolrelay.{unknown[0]}" at the top level (known: {known}; '
                          'per-server settings go in each entry\'s own "toolrelay" block)')
    return block


def misplaced_keys(entry: Any, where: str) -> list[str]:
    """Warnings for an entry's ``allow`` / ``deny`` beside its ``command`` (read by nobody)."""
    if not isinstance(entry, dict):
        return []
    return [f'{where}: "{key}" is ignored here; toolrelay reads it inside the entry\'s "toolrelay" block '
            f'("toolrelay": {{"{key}": [...]}}) or from a policy file (--policy)'
            for key in _ENTRY_KEYS if key in entry]
