"""What changed in a tool since it was pinned, field by field (``toolrelay pins diff``).

Each listed or pinned tool is in one state: ``pinned`` (as pinned), ``changed``, ``new``
(listed, not pinned) or ``gone`` (pinned, no longer listed). A changed tool's changes are
given per field of its definition: the description as a line diff, a schema or the
annotations as the JSON paths that were added, removed or changed, and a flip of
``readOnlyHint`` or ``destructiveHint`` called out on its own, because it changes what
toolrelay runs without asking (and starts early).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ..protocol.tool_digest import DEFINITION_FIELDS, canonical_json, tool_definition, tool_digest
from .pins import Pin, annotation_flips

__all__ = ["FieldChange", "ToolState", "compare", "field_changes"]

_FLIP_MEANS: Final = {
    "readOnlyHint": "a tool marked read-only is called without asking and may start while the answer streams",
    "destructiveHint": "consent prompts and policies read it to tell harmless tools from destructive ones",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldChange:
    """One field of the definition that differs from the pin."""

    field: str
    before: Any
    after: Any
    lines: tuple[str, ...] = ()
    """The change in words: ``- old line`` / ``+ new line`` for text, ``/path: before → after`` else."""

    def to_record(self) -> dict[str, Any]:
        return {"field": self.field, "before": self.before, "after": self.after, "lines": list(self.lines)}


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolState:
    """One tool of a server against its pin."""

    server: str
    tool: str
    state: str
    """``pinned``, ``changed``, ``new`` or ``gone``."""
    pin: Pin | None = None
    listed: Mapping[str, Any] | None = None
    changes: tuple[FieldChange, ...] = ()
    flips: tuple[str, ...] = field(default=())
    """``readOnlyHint false → true`` and the like, each with what it means."""

    def to_record(self) -> dict[str, Any]:
        return {
            "server": self.server, "tool": self.tool, "state": self.state,
            "pinnedAt": self.pin.pinned_at if self.pin else None,
            "pinnedDigest": self.pin.digest if self.pin else None,
            "digest": tool_digest(self.listed) if self.listed is not None else None,
            "flips": list(self.flips), "changes": [change.to_record() for change in self.changes],
        }


def compare(server: str, pins: Mapping[str, Pin], listed: Sequence[Mapping[str, Any]]) -> list[ToolState]:
    """Every tool listed or pinned, in listing order then the gone ones, with its state."""
    found: list[ToolState] = []
    names = set()
    for tool in listed:
        name = str(tool.get("name"))
        names.add(name)
        pin = pins.get(name)
        if pin is None:
            found.append(ToolState(server=server, tool=name, state="new", listed=tool))
        elif pin.digest == tool_digest(tool):
            found.append(ToolState(server=server, tool=name, state="pinned", pin=pin, listed=tool))
        else:
            flips = tuple(f"{flip}: {_FLIP_MEANS[flip.split()[0]]}"
                          for flip in annotation_flips(pin.definition, tool))
            found.append(ToolState(server=server, tool=name, state="changed", pin=pin, listed=tool,
                                   changes=tuple(field_changes(pin.definition, tool)), flips=flips))
    found.extend(ToolState(server=server, tool=name, state="gone", pin=pins[name])
                 for name in sorted(set(pins) - names))
    return found


def field_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[FieldChange]:
    """The fields of two definitions that differ, in the definition's field order."""
    old, new = tool_definition(before), tool_definition(after)
    changes = []
    for name in DEFINITION_FIELDS:
        was, now = old.get(name), new.get(name)
        if canonical_json(was) == canonical_json(now):
            continue
        if isinstance(was, str | None) and isinstance(now, str | None):
            lines = _text_lines(was or "", now or "")
        else:
            lines = tuple(f"{path or '/'}: {_shown(a)} → {_shown(b)}"
                          for path, a, b in _json_changes(was, now, ""))
        changes.append(FieldChange(field=name, before=was, after=now, lines=lines))
    return changes


def _text_lines(before: str, after: str) -> tuple[str, ...]:
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=1)
    return tuple(f"{line[:1]} {line[1:]}" for line in diff if not line.startswith(("---", "+++", "@@")))


_ABSENT: Final = object()


def _json_changes(before: Any, after: Any, path: str) -> list[tuple[str, Any, Any]]:
    """(JSON Pointer, before, after) for each value added, removed or changed."""
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        found = []
        for key in sorted(set(before) | set(after)):
            pointer = f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}"
            found += _json_changes(before.get(key, _ABSENT), after.get(key, _ABSENT), pointer)
        return found
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [change for index, (a, b) in enumerate(zip(before, after, strict=True))
                for change in _json_changes(a, b, f"{path}/{index}")]
    if before is not _ABSENT and after is not _ABSENT and canonical_json(before) == canonical_json(after):
        return []
    return [(path, before, after)]


def _shown(value: Any) -> str:
    return "(absent)" if value is _ABSENT or value is None else canonical_json(value)
