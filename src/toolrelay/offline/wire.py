"""Responses API wire objects: the shapes an endpoint answers with.

Output items (``message``, ``function_call``, ``reasoning``), the full ``Response``
object and the error body every OpenAI-style endpoint uses (the server-sent events of a
streamed response are ``stream_plan.py``'s). The field lists follow openai-python's
``types/responses`` (v2.14 / 3.57) and spec.md §C3 and §C5. Only the offline stand-in
model builds these (benchmarks' fake endpoints borrow them); the client reads whatever an
endpoint sends. Type names come from ``protocol/responses.py``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from ..protocol.responses import (
    COMPLETED,
    FUNCTION_CALL,
    MESSAGE,
    OUTPUT_TEXT,
    REASONING,
    REFUSAL,
    SUMMARY_TEXT,
)

__all__ = [
    "OFFLINE_EPOCH",
    "compact_json",
    "error_body",
    "function_call_item",
    "input_count",
    "message_item",
    "reasoning_item",
    "refusal_item",
    "response_object",
    "token_estimate",
    "usage",
]

OFFLINE_EPOCH: Final = 1_767_225_600
"""2026-01-01T00:00:00Z: the stand-in's synthetic clock, so two runs are byte-identical."""

_TEXT_DEFAULT: Final = {"format": {"type": "text"}, "verbosity": "medium"}


def compact_json(value: Any) -> str:
    """JSON text as the API writes it: compact, UTF-8 characters kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def message_item(
    item_id: str, text: str, *, status: str = COMPLETED, phase: str | None = None
) -> dict[str, Any]:
    """An assistant ``message`` with one ``output_text`` part; ``phase`` as gpt-5.5 sends it
    (``commentary`` for what it says before calling tools)."""
    part = {"type": OUTPUT_TEXT, "text": text, "annotations": [], "logprobs": []}
    if phase is None:
        return {"id": item_id, "type": MESSAGE, "status": status, "role": "assistant", "content": [part]}
    # the key order of the API's messages that carry a phase
    return {"id": item_id, "type": MESSAGE, "status": status, "content": [part], "phase": phase,
            "role": "assistant"}


def refusal_item(item_id: str, refusal: str) -> dict[str, Any]:
    """An assistant ``message`` whose only part is a ``refusal``."""
    part = {"type": REFUSAL, "refusal": refusal}
    return {"id": item_id, "type": MESSAGE, "status": COMPLETED, "role": "assistant", "content": [part]}


def function_call_item(
    item_id: str, call_id: str, name: str, arguments: str, *, status: str = COMPLETED,
    namespace: str | None = None,
) -> dict[str, Any]:
    """A ``function_call``: ``arguments`` is JSON *text*, exactly as the model wrote it;
    ``namespace`` for a tool declared inside a namespace."""
    # Key order is the API's (and the transcripts'): id, type, status, arguments, call_id, name.
    item = {
        "id": item_id,
        "type": FUNCTION_CALL,
        "status": status,
        "arguments": arguments,
        "call_id": call_id,
        "name": name,
    }
    if namespace is not None:
        item["namespace"] = namespace
    return item


def reasoning_item(item_id: str, summary: str | None, encrypted_content: str | None) -> dict[str, Any]:
    """A ``reasoning`` item; ``encrypted_content`` only when the request asked for it."""
    parts = [] if summary is None else [{"type": SUMMARY_TEXT, "text": summary}]
    item: dict[str, Any] = {"id": item_id, "type": REASONING, "summary": parts}
    if encrypted_content is not None:
        item["encrypted_content"] = encrypted_content
    return item


def token_estimate(value: Any) -> int:
    """A deterministic token count: about four characters per token."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return len(text) // 4 + 1


def input_count(body: Mapping[str, Any]) -> int:
    """The stand-in's ``input_tokens`` count of a request body: the estimate of each of the
    parts the model reads (instructions, tools, input), 0 for a part not given."""
    parts = (body.get(name) for name in ("instructions", "tools", "input"))
    return sum(token_estimate(part) for part in parts if part)


def usage(
    input_tokens: int, output_tokens: int, reasoning_tokens: int = 0, cached_tokens: int = 0
) -> dict[str, Any]:
    """A Responses ``usage`` object; ``cached_tokens`` of the input were read from the cache
    (the stand-in reports no cache writes)."""
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached_tokens, "cache_write_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
        "total_tokens": input_tokens + output_tokens,
    }


def error_body(
    message: str, *, type: str = "invalid_request_error", param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """The error body of an HTTP error answer: ``{"error": {message, type, param, code}}``."""
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


def _echo_tool(tool: Any) -> Any:
    """A request tool as the response echoes it (function tools get every field)."""
    if not isinstance(tool, Mapping) or tool.get("type") != "function":
        return tool
    return {
        "type": "function",
        "name": tool.get("name"),
        "description": tool.get("description"),
        "parameters": tool.get("parameters"),
        "strict": tool.get("strict", True),
    }


def _reasoning_echo(request: Mapping[str, Any]) -> dict[str, Any]:
    asked = request.get("reasoning")
    asked = asked if isinstance(asked, Mapping) else {}
    return {"effort": asked.get("effort"), "summary": asked.get("summary")}


def response_object(
    *,
    response_id: str,
    created_at: int,
    request: Mapping[str, Any],
    output: list[dict[str, Any]],
    status: str = COMPLETED,
    error: dict[str, Any] | None = None,
    incomplete_reason: str | None = None,
    token_usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The full ``Response`` object, echoing the request's settings like the real API."""
    tools = request.get("tools")
    return {
        "id": response_id,
        "object": "response",
        "created_at": created_at,
        "status": status,
        "background": False,
        "completed_at": created_at + 1 if status == COMPLETED else None,
        "error": error,
        "incomplete_details": {"reason": incomplete_reason} if incomplete_reason else None,
        "instructions": request.get("instructions"),
        "max_output_tokens": request.get("max_output_tokens"),
        "max_tool_calls": request.get("max_tool_calls"),
        "metadata": request.get("metadata") or {},
        "model": request.get("model"),
        "output": output,
        "parallel_tool_calls": request.get("parallel_tool_calls", True),
        "previous_response_id": request.get("previous_response_id"),
        "prompt_cache_key": None,
        "reasoning": _reasoning_echo(request),
        "safety_identifier": None,
        "service_tier": "default",
        "store": request.get("store", True) is not False,
        "temperature": request.get("temperature", 1.0),
        "text": request.get("text") or _TEXT_DEFAULT,
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": [_echo_tool(t) for t in tools] if isinstance(tools, list) else [],
        "top_logprobs": 0,
        "top_p": request.get("top_p", 1.0),
        "truncation": request.get("truncation") or "disabled",
        "usage": token_usage,
        "user": None,
    }
