"""Stage 8, feedback: one outcome → one ``function_call_output`` item.

This is the only place a result becomes what the model reads; ``toolrelay verify`` runs
the same function on the recorded MCP response to prove the feedback was not altered.
Wrapping never re-runs a tool. A success is the tool's own text (the seed's rule: the
feedback text equals the text the tool returned); every failure starts with a marker,
``Error (<class>): ``, so it can never read as a success. A call_id gets exactly one
output: when later function_calls of the response reused it, their refusals follow the
first call's output in that one item (``with_refusals``).
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..protocol.responses import (
    FUNCTION_CALL_OUTPUT,
    INPUT_FILE,
    INPUT_IMAGE,
    INPUT_TEXT,
    InputFilePart,
    InputPart,
    InputTextPart,
)
from .result import CallOutcome

__all__ = [
    "DEFAULT_OUTPUT_BUDGET",
    "ERROR_PREFIX",
    "FeedbackOutput",
    "error_marker",
    "feedback_item",
    "render_output",
    "with_refusals",
]

DEFAULT_OUTPUT_BUDGET: Final = 100_000
"""Characters of tool output passed to the model before it is cut with a note."""
ERROR_PREFIX: Final = "Error ("

FeedbackOutput = str | list[InputPart]
"""A ``function_call_output``'s ``output``: the text, or parts when a result holds media."""


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
        parts = [_text((marker or "") + text)]
    parts = _apply_budget(parts, budget)
    texts = [part["text"] for part in parts if part["type"] == INPUT_TEXT]
    if len(texts) == len(parts):
        return "\n".join(texts)
    return parts


def with_refusals(output: FeedbackOutput, refusals: list[CallOutcome]) -> FeedbackOutput:
    """``output`` followed by the rendering of each refused duplicate of its call_id: the
    one output the call_id gets tells the model why its other calls did not run."""
    if not refusals:
        return output
    notes = [render_output(refusal) for refusal in refusals]
    texts = [note for note in notes if isinstance(note, str)]  # a refusal renders as its text
    if isinstance(output, str):
        return "\n\n".join([output, *texts])
    return [*output, *(_text(text) for text in texts)]


def feedback_item(call_id: str, output: FeedbackOutput) -> dict[str, Any]:
    """The Responses input item that answers the function_call with ``call_id``."""
    return {"type": FUNCTION_CALL_OUTPUT, "call_id": call_id, "output": output}


# -- content blocks → parts ---------------------------------------------------------------


def _result_parts(result: dict[str, Any], multimodal: bool) -> list[InputPart]:
    blocks = result.get("content")
    parts: list[InputPart] = []
    if isinstance(blocks, list):
        for block in blocks:
            parts.append(_block_part(block, multimodal))
    if not parts and "structuredContent" in result:
        text = json.dumps(result["structuredContent"], ensure_ascii=False)
        parts.append(_text(text))
    if not parts:
        parts.append(_text(""))
    return parts


def _text(text: str) -> InputTextPart:
    return {"type": INPUT_TEXT, "text": text}


def _block_part(block: Any, multimodal: bool) -> InputPart:
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


def _media_part(block: dict[str, Any], kind: str, multimodal: bool) -> InputPart:
    mime = str(block.get("mimeType", "application/octet-stream"))
    data = str(block.get("data", ""))
    if not multimodal:
        return _text(_stand_in(kind, mime, data))
    url = f"data:{mime};base64,{data}"
    if kind == "image":
        return {"type": INPUT_IMAGE, "image_url": url, "detail": "auto"}
    extension = mime.rsplit("/", 1)[-1]
    return _file(f"{kind}.{extension}", url)


def _resource_part(resource: Any, multimodal: bool) -> InputPart:
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
    return _file(filename, url)


def _file(filename: str, url: str) -> InputFilePart:
    return {"type": INPUT_FILE, "filename": filename, "file_data": url}


def _stand_in(what: str, mime: str, data: str) -> str:
    size = len(data) * 3 // 4
    return f"[{what} ({mime}, about {size} bytes) not passed on: this endpoint takes text only]"


# -- markers and budget ---------------------------------------------------------------------


def _prefix(marker: str, parts: list[InputPart]) -> list[InputPart]:
    first = parts[0] if parts else None
    if first is not None and first["type"] == INPUT_TEXT:
        return [_text(marker + first["text"]), *parts[1:]]
    return [_text(marker.rstrip()), *parts]


def _apply_budget(parts: list[InputPart], budget: int) -> list[InputPart]:
    """Cut text beyond ``budget`` characters (all parts together) with a visible note."""
    total = sum(_part_size(p) for p in parts)
    if total <= budget:
        return parts
    out: list[InputPart] = []
    left = budget
    for part in parts:
        size = _part_size(part)
        if size <= left:
            out.append(part)
            left -= size
        elif part["type"] == INPUT_TEXT:
            out.append(_text(part["text"][:left]))
            left = 0
        else:
            out.append(_text(f"[{part['type']} of {size} characters dropped: over the budget]"))
    note = (
        f"\n[toolrelay: output cut to {budget} of {total} characters; "
        "ask for less (for example with head or tail) to see the rest]"
    )
    last = out[-1]
    if last["type"] == INPUT_TEXT:
        out[-1] = _text(last["text"] + note)
    else:
        out.append(_text(note.lstrip("\n")))
    return out


def _part_size(part: InputPart) -> int:
    if part["type"] == INPUT_TEXT:
        return len(part["text"])
    if part["type"] == INPUT_IMAGE:
        return len(part["image_url"])
    return len(part["file_data"])
