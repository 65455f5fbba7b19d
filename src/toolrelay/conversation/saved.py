"""A conversation saved to continue in a later process: ``conv.save(path)``,
``Conversation.load(path)``.

The file is JSON: the run id, its transcript (a path, relative to the file when it lies
beside it), the context mode, the counts so far (model turns, user turns, token usage)
and the context itself (every item the model has seen and produced, the last response's
id), which is what the next user turn's request is built from. It is written whole
(a temporary file renamed over it), so a crash leaves the previous save.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..errors import UsageError, os_reason
from ..relay.stages.request import Conversation as Context

__all__ = ["FORMAT", "SavedConversation", "read_saved", "write_saved"]

FORMAT: Final = "toolrelay.conversation/1"


@dataclass(slots=True, kw_only=True)
class SavedConversation:
    """What a saved conversation holds."""

    run_id: str
    context_mode: str
    turns: int
    user_turns: int
    usage: dict[str, int] = field(default_factory=dict)
    context: Context = field(default_factory=Context)
    transcript: Path | None = None

    def to_json(self, beside: Path) -> dict[str, Any]:
        return {
            "format": FORMAT, "run_id": self.run_id, "context_mode": self.context_mode,
            "turns": self.turns, "user_turns": self.user_turns, "usage": self.usage,
            "transcript": _relative(self.transcript, beside) if self.transcript else None,
            "history": self.context.history, "pending": self.context.pending,
            "previous_response_id": self.context.previous_response_id,
        }


def write_saved(path: Path, saved: SavedConversation) -> None:
    """Write ``saved`` to ``path`` whole (UsageError when it cannot be written)."""
    text = json.dumps(saved.to_json(path.parent), ensure_ascii=False, indent=1)
    partial = path.with_name(path.name + ".partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(text + "\n", encoding="utf-8")
        os.replace(partial, path)
    except OSError as exc:
        raise UsageError(f"cannot save the conversation to {path}: {os_reason(exc)}") from None


def read_saved(path: Path) -> SavedConversation:
    """The conversation saved at ``path`` (UsageError: missing, or not such a file)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read the saved conversation {path}: {os_reason(exc)}") from None
    except ValueError as exc:
        raise UsageError(f"{path} is not a saved conversation: it is not JSON ({exc})") from None
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        raise UsageError(f"{path} is not a saved conversation (conv.save writes one, "
                         f"with \"format\": \"{FORMAT}\")")
    try:
        return _from_json(value, path.parent)
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{path} is not a saved conversation toolrelay wrote: {exc!r}") from None


def _from_json(value: dict[str, Any], beside: Path) -> SavedConversation:
    history, pending, previous = value["history"], value["pending"], value["previous_response_id"]
    if not isinstance(history, list) or not isinstance(pending, list):
        raise TypeError("history and pending must be lists of input items")
    if previous is not None and not isinstance(previous, str):
        raise TypeError("previous_response_id must be a string or null")
    transcript = value.get("transcript")
    return SavedConversation(
        run_id=str(value["run_id"]), context_mode=str(value["context_mode"]),
        turns=int(value["turns"]), user_turns=int(value["user_turns"]),
        usage={str(k): int(v) for k, v in dict(value["usage"]).items()},
        context=Context(history=history, pending=pending, previous_response_id=previous),
        transcript=(beside / transcript) if isinstance(transcript, str) else None,
    )


def _relative(path: Path, beside: Path) -> str:
    """``path`` relative to ``beside`` when it lies under it (the pair can be moved), else absolute."""
    resolved, folder = path.resolve(), beside.resolve()
    return str(resolved.relative_to(folder)) if resolved.is_relative_to(folder) else str(resolved)
