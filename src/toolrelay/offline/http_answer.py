"""What the stand-in's HTTP layer sends for one request: ``Answer``, shared by the
``/v1/responses`` route (``responder``) and the chat route (``chat_route``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from .stream_plan import StreamPlan

__all__ = ["SSE_HEADERS", "Answer", "json_answer"]

SSE_HEADERS: Final = (("Cache-Control", "no-cache"),)
"""The headers of a streamed (``text/event-stream``) answer."""


@dataclass(slots=True, kw_only=True)
class Answer:
    """What the HTTP layer sends: a status, a body and its headers."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()
    plan: StreamPlan | None = None
    """A stream written over time (paced, held or cut); ``body`` is then empty."""


def json_answer(status: int, value: Any, headers: tuple[tuple[str, str], ...] = ()) -> Answer:
    return Answer(status=status, body=json.dumps(value, ensure_ascii=False).encode(), headers=headers)
