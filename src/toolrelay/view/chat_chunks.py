"""How the trace view names a chat stream's chunks (``model_stream`` events of the dialect
``chat``): what each one carries, as a Responses event's type names it for that dialect.

A chunk says a role, a piece of text, a tool call's start (its index, id and name) or a
piece of its arguments, a finish reason, the usage, or ``[DONE]``; an ``error`` object is a
failed stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ChunkLabel", "chunk_label", "chunk_text"]


@dataclass(frozen=True, slots=True)
class ChunkLabel:
    label: str
    detail: str
    failed: bool = False


def chunk_label(data: Any, payload: dict[str, Any]) -> ChunkLabel:
    """The row's label and detail for one chat chunk."""
    if isinstance(data, str) and data.strip() == "[DONE]":
        return ChunkLabel("[DONE]", "")
    if isinstance(payload.get("error"), dict):
        return ChunkLabel("error", str(payload["error"].get("message") or ""), failed=True)
    choice = _choice(payload)
    delta = _object(choice.get("delta"))
    calls = delta.get("tool_calls") if isinstance(delta.get("tool_calls"), list) else []
    if calls and isinstance(calls[0], dict):
        call = calls[0]
        function = _object(call.get("function"))
        where = f"tool_calls[{call.get('index', '?')}]"
        if call.get("id") is not None or function.get("name"):
            named = f"{call.get('id') or ''} {function.get('name') or ''}".strip()
            return ChunkLabel(f"{where} start", named)
        return ChunkLabel(f"{where} arguments", repr(function.get("arguments", "")))
    if isinstance(delta.get("content"), str) and delta["content"]:
        return ChunkLabel("content", repr(delta["content"]))
    if isinstance(choice.get("finish_reason"), str):
        return ChunkLabel("finish", str(choice["finish_reason"]))
    if payload.get("usage") is not None and not payload.get("choices"):
        usage = _object(payload["usage"])
        return ChunkLabel("usage", f"{usage.get('total_tokens', '?')} tokens")
    if isinstance(delta.get("role"), str):
        return ChunkLabel("role", str(delta["role"]))
    return ChunkLabel("chunk", "")


def chunk_text(payload: dict[str, Any]) -> str | None:
    """The text piece a chunk carries, if any."""
    delta = _choice(payload).get("delta")
    text = delta.get("content") if isinstance(delta, dict) else None
    return text if isinstance(text, str) and text else None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _choice(payload: dict[str, Any]) -> dict[str, Any]:
    choices = payload.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    return first if isinstance(first, dict) else {}
