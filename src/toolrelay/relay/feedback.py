"""Stage 8, feedback: one outcome → one ``function_call_output`` item.

This is the only place a result becomes what the model reads; ``toolrelay verify`` runs
the same function on the recorded MCP response to prove the feedback was not altered.
Wrapping never re-runs a tool. A success is the tool's own text (the seed's rule: the
feedback text equals the text the tool returned); every failure starts with a marker,
``Error (<class>): ``, so it can never read as a success.
"""

from __future__ import annotations

import json
from typing import Any, Final

from .result import CallOutcome

__all__ = [
    "DEFAULT_OUTPUT_BUDGET",
    "ERROR_PREFIX",
    "FeedbackOutput",
    "error_marker",
    "feedback_item",
    "render_output",
]

DEFAULT_OUTPUT_BUDGET: Final = 100_000
"""Characters of tool output passed to the model before it is cut with a note."""
ERROR_PREFIX: Final = "Error ("

FeedbackOutput = str | list[dict[str, Any]]


def error_marker(outcome: CallOutcome) -> str | None:
    """``Error (<class>): `` for a failed outcome, None for success."""
    status = outcome.status
    if status == "ok":
        return None
    if status == "tool_error":
        return "Error (tool): "
    if status == "protocol_error":
        code = "" if outcome.error_code is None else f" {outcome.error_code}"
        return f"Error (protocol{code}): "
    if status == "transport_error":
        kind = outcome.transport_kind
        if kind == "exited":
            return f"Error (server {outcome.server} exited): "
        if kind == "timeout":
            return "Error (timeout): "
        if kind == "too_large":
            return "Error (result too large): "
        return "Error (transport): "
    return f"Error ({status.replace('_', ' ')}): "


def render_output(
    outcome: CallOutcome, *, budget: int = DEFAULT_OUTPUT_BUDGET, multimodal: bool = True
) -> FeedbackOutput:
    """The ``output`` of the function_call_output item for ``outcome``."""
    marker = error_marker(outcome)
    if outcome.status in ("ok", "tool_error"):
        parts = _result_parts(outcome.result or {}, multimodal)
        if marker is not None:
            parts = _prefix(marker, parts)
    else:
        text = outcome.message
        if outcome.status == "protocol_error" and outcome.error_data is not None:
            text += f" (data: {json.dumps(outcome.error_data, ensure_ascii=False)})"
        parts = [{"type": "input_text", "text": (marker or "") + text}]
    parts = _apply_budget(parts, budget)
    if all(p["type"] == "input_text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def feedback_item(call_id: str, output: FeedbackOutput) -> dict[str, Any]:
    """The Responses input item that answers the function_call with ``call_id``."""
    return {"type": "function_call_output", "call_id": call_id, "output": output}


# -- content blocks → parts ---------------------------------------------------------------


def _result_parts(result: dict[str, Any], multimodal: bool) -> list[dict[str, Any]]:
    blocks = result.get("content")
    parts: list[dict[str, Any]] = []
    if isinstance(blocks, list):
        for block in blocks:
            parts.append(_block_part(block, multimodal))
    if not parts and "structuredContent" in result:
        text = json.dumps(result["structuredContent"], ensure_ascii=False)
        parts.append({"type": "input_text", "text": text})
    if not parts:
        parts.append({"type": "input_text", "text": ""})
    return parts


def _text(text: str) -> dict[str, Any]:
    return {"type": "input_text", "text": text}


def _block_part(block: Any, multimodal: bool) -> dict[str, Any]:
    if not isinstance(block, dict):
        return _text(f"[malformed content block: {json.dumps(block, ensure_ascii=False)[:200]}]")
    kind = block.get("type")
    if kind == "text":
        return _text(str(block.get("text", "")))
    if kind == "image":
        return _media_part(block, "image", multimodal)
    if kind == "audio":
        return _media_part(block, "audio", multimodal)
    if kind == "resource_link":
        name = block.get("name") or block.get("title") or ""
        label = f" ({name})" if name else ""
        return _text(f"[resource link: {block.get('uri', '')}{label}]")
    if kind == "resource":
        return _resource_part(block.get("resource"), multimodal)
    return _text(f"[{kind} content block: not representable as model input]")


def _media_part(block: dict[str, Any], kind: str, multimodal: bool) -> dict[str, Any]:
    mime = str(block.get("mimeType", "application/octet-stream"))
    data = str(block.get("data", ""))
    if not multimodal:
        return _text(_stand_in(kind, mime, data))
    url = f"data:{mime};base64,{data}"
    if kind == "image":
        return {"type": "input_image", "image_url": url, "detail": "auto"}
    extension = mime.rsplit("/", 1)[-1]
    return {"type": "input_file", "filename": f"{kind}.{extension}", "file_data": url}


def _resource_part(resource: Any, multimodal: bool) -> dict[str, Any]:
    if not isinstance(resource, dict):
        return _text("[resource content block without a resource]")
    uri = str(resource.get("uri", ""))
    mime = str(resource.get("mimeType", ""))
    if isinstance(resource.get("text"), str):
        kind = f", {mime}" if mime else ""
        return _text(f"[resource {uri}{kind}]\n{resource['text']}")
    blob = str(resource.get("blob", ""))
    if not multimodal:
        return _text(_stand_in(f"resource {uri}", mime or "application/octet-stream", blob))
    filename = uri.rstrip("/").rsplit("/", 1)[-1] or "resource"
    url = f"data:{mime or 'application/octet-stream'};base64,{blob}"
    return {"type": "input_file", "filename": filename, "file_data": url}


def _stand_in(what: str, mime: str, data: str) -> str:
    size = len(data) * 3 // 4
    return f"[{what} ({mime}, about {size} bytes) not passed on: this endpoint takes text only]"


# -- markers and budget ---------------------------------------------------------------------


def _prefix(marker: str, parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if parts and parts[0]["type"] == "input_text":
        return [_text(marker + parts[0]["text"]), *parts[1:]]
    return [_text(marker.rstrip()), *parts]


def _apply_budget(parts: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """Cut text beyond ``budget`` characters (all parts together) with a visible note."""
    total = sum(_part_size(p) for p in parts)
    if total <= budget:
        return parts
    out: list[dict[str, Any]] = []
    left = budget
    for part in parts:
        size = _part_size(part)
        if size <= left:
            out.append(part)
            left -= size
        elif part["type"] == "input_text":
            out.append(_text(part["text"][:left]))
            left = 0
        else:
            out.append(_text(f"[{part['type']} of {size} characters dropped: over the budget]"))
    note = (
        f"\n[toolrelay: output cut to {budget} of {total} characters; "
        "ask for less (for example with head or tail) to see the rest]"
    )
    last = out[-1]
    if last["type"] == "input_text":
        out[-1] = _text(last["text"] + note)
    else:
        out.append(_text(note.lstrip("\n")))
    return out


def _part_size(part: dict[str, Any]) -> int:
    if part["type"] == "input_text":
        return len(part["text"])
    return len(part.get("image_url") or part.get("file_data") or "")
