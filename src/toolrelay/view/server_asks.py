"""The rows of what a server asks toolrelay (``mcp_server_request``) and of toolrelay's
reply (``mcp_reply``), in their own words: the prompt of a sampling request, the message
(or URL) of an elicitation, what the user or the model answered, the roots sent. A reply
names no method, so it is read by its shape. Both carry the call_id of the call they
came during, so the trace draws them inside that call.

In 2026-07-28 a server asks inside its answer instead: a tools/call answered
``input_required`` lists its input requests, and the retry carries toolrelay's
``inputResponses``; both are rows of the call too (``input_required_text``,
``retry_text``).
"""

from __future__ import annotations

from typing import Any

from .compact_json import compact
from .model import RowState

__all__ = ["asked_text", "input_required_text", "reply_text", "retry_text"]


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return f"“{flat if len(flat) <= 80 else flat[:79] + '…'}”"


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _texts(content: Any) -> str:
    blocks = content if isinstance(content, list) else [content]
    return " ".join(str(b.get("text", "")) if b.get("type") == "text" else f"[{b.get('type')}]"
                    for b in blocks if isinstance(b, dict))


def asked_text(method: str, params: dict[str, Any]) -> tuple[str, str, RowState]:
    """What a server asks toolrelay, in its own words: the prompt, the form's message, the URL."""
    tasked = " · as a task" if isinstance(params.get("task"), dict) else ""
    if method == "sampling/createMessage":
        texts = [_texts(m.get("content"))
                 for m in _items(params.get("messages")) if isinstance(m, dict)]
        return f"{method}{tasked}", _quote(" ".join(texts)) + f" · maxTokens {params.get('maxTokens')}", "ok"
    if method == "elicitation/create":
        mode = str(params.get("mode") or "form")
        shown = f" {params.get('url')}" if mode == "url" else ""
        return f"{method} · {mode}{tasked}", _quote(str(params.get("message") or "")) + shown, "ok"
    return method or "request", compact(params) if params else "", "ok"


def reply_text(result: dict[str, Any]) -> tuple[str, str, RowState]:
    """toolrelay's answer to a server's request, read by its shape (a reply names no method)."""
    if isinstance(result.get("action"), str):
        content = f" {compact(result['content'])}" if "content" in result else ""
        state: RowState = "ok" if result["action"] == "accept" else "warn"
        return f"reply · {result['action']}", content.strip(), state
    if "model" in result and "content" in result:
        return f"reply · {result['model']}", _quote(_texts(result["content"])), "ok"
    if isinstance(result.get("roots"), list):
        uris = [str(r.get("uri")) for r in result["roots"] if isinstance(r, dict)]
        return f"reply · {len(uris)} root(s)", ", ".join(uris), "ok"
    if isinstance(result.get("task"), dict):
        return f"reply · task {result['task'].get('status')}", str(result["task"].get("taskId", "")), "ok"
    return "reply", compact(result), "ok"


def input_required_text(result: dict[str, Any]) -> tuple[str, str, RowState] | None:
    """A tools/call answer asking for input (2026-07-28), or None for any other answer."""
    if result.get("resultType") != "input_required":
        return None
    asked = result.get("inputRequests")
    wanted = [f"{key}: {value.get('method')}" for key, value in asked.items()
              if isinstance(value, dict)] if isinstance(asked, dict) else []
    state = " · requestState" if "requestState" in result else ""
    # the 2026 form of a server asking during a call: as normal as a 2025 server request
    return f"input_required{state}", ", ".join(wanted), "ok"


def retry_text(name: Any, params: dict[str, Any]) -> tuple[str, str, RowState] | None:
    """A tools/call retried with inputResponses (2026-07-28), or None for a first request."""
    answered = params.get("inputResponses")
    if not isinstance(answered, dict):
        return None
    return f"tools/call {name} · retry", "inputResponses " + compact(answered), "ok"
