"""The rows of what a server reports while it works: ``notifications/progress`` (``3/5 ·
its message``) and log messages (``notifications/message``: its level, logger and data).
Each carries the call_id of the call it was recorded with, so the trace draws it inside
that call; progress for no pending call stands alone, marked."""

from __future__ import annotations

import json
from typing import Any

from .model import RowState

__all__ = ["reported_text"]

_SEVERE = frozenset({"error", "critical", "alert", "emergency"})


def reported_text(method: str, params: dict[str, Any], call_id: Any) -> tuple[str, str, RowState] | None:
    """A progress or log row's label, detail and state; None for other messages."""
    if method == "notifications/progress":
        total = f"/{params['total']}" if "total" in params else ""
        said = params.get("message")
        detail = f"{params.get('progress')}{total}" + (f" · {said}" if isinstance(said, str) and said else "")
        if call_id is None:  # toolrelay ignored it: no pending call sent its token
            return "progress · no pending call", f"token {params.get('progressToken')!r} · {detail}", "warn"
        return "progress", detail, "ok"
    if method == "notifications/message":
        level = str(params.get("level", "?"))
        logger = params.get("logger")
        data = params.get("data")
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        named = f"{logger}: " if isinstance(logger, str) and logger else ""
        state: RowState = "failed" if level in _SEVERE else "warn" if level == "warning" else "ok"
        return f"log · {level}", named + text, state
    return None
