"""Stage 8, feedback: one outcome → one ``function_call_output`` item.

This is the only place a result becomes what the model reads; ``toolrelay verify`` runs
the same function on the recorded MCP response to prove the feedback was not altered.
Wrapping never re-runs a tool. A success is the tool's own text (the seed's rule: the
feedback text equals the text the tool returned); every failure starts with a marker,
``Error (<class>): ``, so it can never read as a success.

Two budgets bound one output: text in characters, images and files in decoded bytes (a
screenshot is not text). Whatever does not reach the model (text past the budget, media
past theirs, audio, blocks no input part can hold) is replaced by a note the model reads,
and named in ``Rendering.cut`` so the user is told too.

Content a server marks for the user only (``annotations.audience: ["user"]``) is not the
model's: it is left out of the output and listed in ``Rendering.for_user`` to be shown.

A success of a tool declared with ``output_schema`` (``structured``) is its
``structuredContent`` as JSON text, which the output check has already found valid (an
invalid one never gets here: the call ended ``invalid_output``).

A call_id gets exactly one output: when later function_calls of the response reused it,
their refusals follow the first call's output in that one item (``with_refusals``).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any, Final

from ...protocol.responses import (
    FUNCTION_CALL_OUTPUT,
    INPUT_FILE,
    INPUT_IMAGE,
    INPUT_TEXT,
    InputPart,
    InputTextPart,
)
from .result import CallOutcome

__all__ = [
    "DEFAULT_MEDIA_BUDGET",
    "DEFAULT_OUTPUT_BUDGET",
    "ERROR_PREFIX",
    "FeedbackOutput",
    "Rendering",
    "content_parts",
    "error_marker",
    "feedback_item",
    "render_feedback",
    "render_output",
    "with_refusals",
]

DEFAULT_OUTPUT_BUDGET: Final = 100_000
"""Characters of tool output passed to the model before it is cut with a note."""
DEFAULT_MEDIA_BUDGET: Final = 5_000_000
"""Bytes of images and files (decoded) in one tool output passed to the model; any past
that become a note. Big enough for a full-screen screenshot, small enough that several fit
in one request (OpenAI takes 50 MB of images per request)."""
ERROR_PREFIX: Final = "Error ("
FOR_USER_ONLY: Final = "[the tool's result is meant for the user only: it was shown to them, not to you]"
"""The output when every content block of a result is for the user only."""

FeedbackOutput = str | list[InputPart]
"""A ``function_call_output``'s ``output``: the text, or parts when a result holds media."""


@dataclass(frozen=True, slots=True)
class Rendering:
    """What the model is given for one outcome, and what of the result it is not given."""

    output: FeedbackOutput
    cut: tuple[str, ...] = ()
    """One phrase per thing cut or dropped (empty: the model got all of it). Stand-ins the
    user asked for with ``multimodal=False`` are not cuts."""
    for_user: tuple[str, ...] = ()
    """The content blocks meant for the user only, as text to show them (not sent)."""


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
    if status == "refused_by_hook" and outcome.refused_by:  # a policy's rule: "policy", not "hook"
        return f"Error ({outcome.refused_by}): "
    return f"Error ({status.replace('_', ' ')}): "


def render_feedback(
    outcome: CallOutcome,
    *,
    budget: int = DEFAULT_OUTPUT_BUDGET,
    media_budget: int = DEFAULT_MEDIA_BUDGET,
    multimodal: bool = True,
    structured: bool = False,
) -> Rendering:
    """The ``output`` of the function_call_output item for ``outcome``, and what was cut
    (``structured``: the tool was declared with ``output_schema``)."""
    marker = error_marker(outcome)
    cut: list[str] = []
    for_user: list[str] = []
    result = outcome.result or {}
    if structured and outcome.status == "ok" and "structuredContent" in result:
        parts: list[InputPart] = [_text(json.dumps(result["structuredContent"], ensure_ascii=False))]
    elif outcome.status in ("ok", "tool_error"):
        blocks = _Blocks(multimodal=multimodal, media_budget=media_budget, cut=cut, for_user=for_user)
        parts = blocks.parts(result)
        if marker is not None:
            parts = _prefix(marker, parts)
    else:
        text = outcome.message
        if outcome.status == "protocol_error" and outcome.error_data is not None:
            text += f" (data: {json.dumps(outcome.error_data, ensure_ascii=False)})"
        parts = [_text((marker or "") + text)]
    parts = _apply_budget(parts, budget, cut)
    texts = [part["text"] for part in parts if part["type"] == INPUT_TEXT]
    output: FeedbackOutput = "\n".join(texts) if len(texts) == len(parts) else parts
    return Rendering(output, tuple(cut), tuple(for_user))


def render_output(
    outcome: CallOutcome,
    *,
    budget: int = DEFAULT_OUTPUT_BUDGET,
    media_budget: int = DEFAULT_MEDIA_BUDGET,
    multimodal: bool = True,
    structured: bool = False,
) -> FeedbackOutput:
    """The ``output`` of the function_call_output item for ``outcome``."""
    return render_feedback(outcome, budget=budget, media_budget=media_budget, multimodal=multimodal,
                           structured=structured).output


def content_parts(blocks: list[Any], *, media_budget: int = DEFAULT_MEDIA_BUDGET) -> list[InputPart]:
    """MCP content blocks (from a resource or a prompt, not a call) as input parts, by the
    same rules as a tool's result."""
    return _Blocks(multimodal=True, media_budget=media_budget, cut=[], for_user=[]).parts({"content": blocks})


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


def _text(text: str) -> InputTextPart:
    return {"type": INPUT_TEXT, "text": text}


@dataclass(slots=True, kw_only=True)
class _Blocks:
    """Turns one result's content blocks into parts, spending the media budget in order."""

    multimodal: bool
    media_budget: int
    media_used: int = 0
    """Bytes of images and files already in this output."""
    cut: list[str]
    for_user: list[str]

    def parts(self, result: dict[str, Any]) -> list[InputPart]:
        blocks = result.get("content")
        listed = blocks if isinstance(blocks, list) else []
        mine = [block for block in listed if not self.user_only(block)]
        parts = [self.block(block) for block in mine]
        if not listed and "structuredContent" in result:
            parts.append(_text(json.dumps(result["structuredContent"], ensure_ascii=False)))
        if listed and not mine:
            return [_text(FOR_USER_ONLY)]
        return parts or [_text("")]

    def user_only(self, block: Any) -> bool:
        """A block whose audience leaves the assistant out is shown to the user instead."""
        annotations = block.get("annotations") if isinstance(block, dict) else None
        audience = annotations.get("audience") if isinstance(annotations, dict) else None
        if not isinstance(audience, list) or not audience or "assistant" in audience:
            return False
        text = block.get("text")
        self.for_user.append(text if block.get("type") == "text" and isinstance(text, str)
                             else f"[{block.get('type')} content block]")
        return True

    def block(self, block: Any) -> InputPart:
        if not isinstance(block, dict):
            return _text(f"[malformed content block: {json.dumps(block, ensure_ascii=False)[:200]}]")
        kind = block.get("type")
        if kind == "text":
            return _text(str(block.get("text", "")))
        if kind in ("image", "audio"):
            mime = str(block.get("mimeType", "application/octet-stream"))
            return self.media(str(kind), mime, str(block.get("data", "")), f"{kind}.{_extension(mime)}")
        if kind == "resource_link":  # its name, MIME type and description say what to do with it
            name = block.get("name") or block.get("title")
            named = ", ".join(str(x) for x in (name, block.get("mimeType")) if x)
            label = f" ({named})" if named else ""
            about = f": {block['description']}" if isinstance(block.get("description"), str) else ""
            return _text(f"[resource link: {block.get('uri', '')}{label}{about}]")
        if kind == "resource":
            return self.resource(block.get("resource"))
        self.cut.append(f"a {kind} content block dropped: not representable as model input")
        return _text(f"[{kind} content block: not representable as model input]")

    def resource(self, resource: Any) -> InputPart:
        if not isinstance(resource, dict):
            return _text("[resource content block without a resource]")
        uri = str(resource.get("uri", ""))
        mime = str(resource.get("mimeType", ""))
        text = resource.get("text")
        blob = str(resource.get("blob", ""))
        if not isinstance(text, str) and _is_text_mime(mime):
            text = _decoded_text(blob, mime)  # a text/plain blob is text, not a file named "2"
        if isinstance(text, str):
            kind = f", {mime}" if mime else ""
            return _text(f"[resource {uri}{kind}]\n{text}")
        mime = mime or "application/octet-stream"
        name = uri.rstrip("/").rsplit("/", 1)[-1] or "resource"
        filename = name if "." in name else f"{name}.{_extension(mime)}"
        return self.media(f"resource {uri}", mime, blob, filename)

    def media(self, what: str, mime: str, data: str, filename: str) -> InputPart:
        """An image or file part, or the note the model reads instead."""
        size = _decoded_size(data)
        about = f"{what} ({mime}, about {size} bytes)"
        if mime.startswith("audio/"):  # no Responses input part takes audio: a file is refused (400)
            self.cut.append(f"{about} replaced by a text note: no audio input")
            return _text(f"[{about} not passed on: the model takes no audio input here]")
        if not self.multimodal:
            return _text(f"[{about} not passed on: this endpoint takes text only]")
        if self.media_used + size > self.media_budget:
            return self._over_budget(what, mime, size)
        self.media_used += size
        url = f"data:{mime};base64,{data}"
        if mime.startswith("image/"):
            return {"type": INPUT_IMAGE, "image_url": url, "detail": "auto"}
        return {"type": INPUT_FILE, "filename": filename, "file_data": url}

    def _over_budget(self, what: str, mime: str, size: int) -> InputPart:
        limit = self.media_budget
        self.cut.append(f"{what} ({mime}, {size} bytes) dropped: over --media-budget {limit} bytes")
        advice = (
            "ask the tool for a smaller image (a lower resolution or a crop) if it can"
            if mime.startswith("image/")
            else "ask for a smaller file or a part of it if the tool can"
        )
        return _text(
            f"[{what} ({mime}, {size} bytes) not passed on: over toolrelay's limit of {limit} bytes of "
            f"images and files per tool output; {advice}]"
        )


def _decoded_size(data: str) -> int:
    """Bytes the base64 text decodes to (padding counted off)."""
    return len(data) * 3 // 4 - data[-2:].count("=")


_TEXT_TYPES: Final = frozenset({
    "application/json", "application/xml", "application/javascript", "application/yaml",
    "application/x-yaml", "application/toml", "application/sql", "application/x-sh",
})


def _is_text_mime(mime: str) -> bool:
    base = mime.split(";", 1)[0].strip().lower()
    return base.startswith("text/") or base in _TEXT_TYPES or base.endswith(("+json", "+xml"))


def _decoded_text(blob: str, mime: str) -> str | None:
    """The blob as text in its charset (UTF-8 unless the MIME type names one), or None."""
    charset = "utf-8"
    for param in mime.split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"')
    try:
        return base64.b64decode(blob, validate=True).decode(charset)
    except (binascii.Error, ValueError, LookupError):
        return None


_EXTENSIONS: Final = {"octet-stream": "bin", "jpeg": "jpg", "plain": "txt", "svg+xml": "svg", "mpeg": "mp3"}


def _extension(mime: str) -> str:
    """A file extension for a MIME type, from its subtype alone (the same on every machine,
    so verify renders the same filename)."""
    subtype = mime.split(";", 1)[0].strip().rsplit("/", 1)[-1].lower()
    return _EXTENSIONS.get(subtype, subtype or "bin")


# -- markers and budget ---------------------------------------------------------------------


def _prefix(marker: str, parts: list[InputPart]) -> list[InputPart]:
    first = parts[0] if parts else None
    if first is not None and first["type"] == INPUT_TEXT:
        return [_text(marker + first["text"]), *parts[1:]]
    return [_text(marker.rstrip()), *parts]


def _apply_budget(parts: list[InputPart], budget: int, cut: list[str]) -> list[InputPart]:
    """Cut text beyond ``budget`` characters (all text parts together) with a visible note;
    images and files have their own budget."""
    total = sum(len(part["text"]) for part in parts if part["type"] == INPUT_TEXT)
    if total <= budget:
        return parts
    out: list[InputPart] = []
    left = budget
    for part in parts:
        if part["type"] == INPUT_TEXT:
            kept = part["text"][:left]
            left -= len(kept)
            part = _text(kept)
        out.append(part)
    note = (
        f"\n[toolrelay: output cut to {budget} of {total} characters; "
        "ask for less (for example with head or tail) to see the rest]"
    )
    last = out[-1]
    if last["type"] == INPUT_TEXT:
        out[-1] = _text(last["text"] + note)
    else:
        out.append(_text(note.lstrip("\n")))
    cut.append(f"text cut to {budget} of {total} characters (--output-budget {budget})")
    return out
