"""What a function returns, or raises, as an MCP ``CallToolResult``.

- a ``str``: one text part; ``None``: no parts;
- ``Content`` parts (one, or a list of them and strings): those parts, in order;
- ``bytes``: an image part when it is a PNG, JPEG, GIF or WebP, else an embedded blob
  (``Content.blob`` names another MIME type);
- anything else JSON can say (dict, list, dataclass, pydantic model, number...): its
  JSON as ``structuredContent`` (a value that is not an object as ``{"result": value}``)
  and as the text part, for clients that read only text;
- ``ToolError(message)``: ``isError`` with the message; any other exception: ``isError``
  with ``Type: message``. Its traceback never goes to the model: it is logged, and kept in
  the result's ``_meta`` (``TRACEBACK_KEY``) when the server records it for the run's
  transcript (in process, never for other hosts: ``toolrelay serve``).
"""

from __future__ import annotations

import base64
import json
import logging
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from .convert import to_json

__all__ = ["TRACEBACK_KEY", "Content", "ToolError", "error_result", "exception_result", "value_result"]

log = logging.getLogger("toolrelay.functions")

TRACEBACK_KEY: Final = "io.toolrelay/traceback"
_IMAGES: Final = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"),
                  (b"GIF87a", "image/gif"), (b"GIF89a", "image/gif"))


class ToolError(Exception):
    """Raise it from a function tool to fail the call on purpose: the model reads the
    message (``isError: true``), and no traceback is kept."""


@dataclass(frozen=True)
class Content:
    """One MCP content part of a function's result: ``Content.text``, ``image``, ``audio``,
    ``blob`` (an embedded resource), ``resource_link``. Return one, or a list of them."""

    part: dict[str, Any]

    @classmethod
    def text(cls, text: str) -> Content:
        return cls({"type": "text", "text": text})

    @classmethod
    def image(cls, data: bytes, mime_type: str = "image/png") -> Content:
        return cls({"type": "image", "data": _b64(data), "mimeType": mime_type})

    @classmethod
    def audio(cls, data: bytes, mime_type: str = "audio/wav") -> Content:
        return cls({"type": "audio", "data": _b64(data), "mimeType": mime_type})

    @classmethod
    def blob(cls, data: bytes, mime_type: str = "application/octet-stream", *,
             uri: str = "blob:result") -> Content:
        return cls({"type": "resource", "resource": {"uri": uri, "mimeType": mime_type, "blob": _b64(data)}})

    @classmethod
    def resource_link(cls, uri: str, name: str, *, mime_type: str | None = None,
                      description: str | None = None) -> Content:
        link: dict[str, Any] = {"type": "resource_link", "uri": uri, "name": name}
        if mime_type is not None:
            link["mimeType"] = mime_type
        if description is not None:
            link["description"] = description
        return cls(link)


def value_result(value: Any, *, wrapped: bool) -> dict[str, Any]:
    """The result of a function that returned ``value`` (``wrapped``: its declaration says
    ``{"result": ...}``)."""
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}]}
    if value is None:
        return {"content": []}
    if isinstance(value, Content):
        return {"content": [value.part]}
    if isinstance(value, bytes | bytearray):
        return {"content": [_bytes_part(bytes(value))]}
    if _is_parts(value):
        return {"content": [p.part if isinstance(p, Content) else Content.text(p).part for p in value]}
    try:
        data = to_json(value)
        text = json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        return error_result(f"the function returned a value JSON cannot carry ({exc})")
    structured = data if isinstance(data, dict) and not wrapped else {"result": data}
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured}


def error_result(message: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": message}], "isError": True}
    if meta:
        result["_meta"] = meta
    return result


def exception_result(name: str, exc: BaseException, *, keep_traceback: bool) -> dict[str, Any]:
    """``exc``, raised by tool ``name``, as an error result: the message for the model; the
    traceback logged, and kept in ``_meta`` if ``keep_traceback``."""
    if isinstance(exc, ToolError):
        return error_result(str(exc) or "the tool failed")
    told = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    trace = "".join(traceback.format_exception(exc))
    log.warning("function tool %s raised %s", name, trace)
    return error_result(told, {TRACEBACK_KEY: trace} if keep_traceback else None)


def _is_parts(value: Any) -> bool:
    if not isinstance(value, Sequence) or isinstance(value, str) or not value:
        return False
    return all(isinstance(p, Content | str) for p in value) and any(isinstance(p, Content) for p in value)


def _bytes_part(data: bytes) -> dict[str, Any]:
    for magic, mime in _IMAGES:
        if data.startswith(magic):
            return Content.image(data, mime).part
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return Content.image(data, "image/webp").part
    return Content.blob(data).part


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
