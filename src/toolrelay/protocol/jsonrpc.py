"""JSON-RPC 2.0 messages as MCP uses them: decode, classify, encode (sans-IO).

MCP narrows JSON-RPC: ids are strings or integers, never null on requests; params are
objects; batching was removed in 2025-06-18. Every decoded message keeps ``raw``, the
exact object received, so transcripts record the wire message, ids included.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any, Final

from ..errors import DecodeError
from .framing import Oversized, find_id
from .json_depth import MAX_DEPTH, nested_too_deep
from .json_fast import UNSURE, orjson_value

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "DecodeError",
    "ErrorResponse",
    "JSONObject",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "decode",
    "encode",
    "error_response",
    "id_text",
    "notification",
    "request",
    "response",
]

JSONObject = dict[str, Any]
RequestId = int | str

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603


@dataclass(slots=True, frozen=True)
class Request:
    """A call that expects exactly one response with the same ``id``."""

    id: RequestId
    method: str
    params: JSONObject | None
    raw: JSONObject = field(compare=False, repr=False)


@dataclass(slots=True, frozen=True)
class Notification:
    """A one-way message: no ``id``, never answered."""

    method: str
    params: JSONObject | None
    raw: JSONObject = field(compare=False, repr=False)


@dataclass(slots=True, frozen=True)
class Response:
    """A successful answer to the request with the same ``id``."""

    id: RequestId
    result: JSONObject
    raw: JSONObject = field(compare=False, repr=False)


@dataclass(slots=True, frozen=True)
class ErrorResponse:
    """A JSON-RPC error; ``id`` is None only when the request could not be read."""

    id: RequestId | None
    code: int
    message: str
    data: Any
    raw: JSONObject = field(compare=False, repr=False)


Message = Request | Notification | Response | ErrorResponse


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# Built once: json.loads / json.dumps with options build a new coder for every message.
_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant)
_SCAN: Final = _DECODER.scan_once  # type: ignore[attr-defined]
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_ENCODE_ASCII: Final = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode
# The C encoder itself, without the circular-reference check: messages are trees, and a
# cycle (or too deep a tree) still gets JSONEncoder's own error from the retry in encode().
_C_ENCODE: Final = (
    None if c_make_encoder is None
    else c_make_encoder(None, _ENCODER.default, encode_basestring, None, ":", ",", False, False, True)
)


def _loads(data: bytes | str) -> Any:
    """``json.loads(data, parse_constant=...)``, same rules, without building a decoder;
    by orjson where its value is sure to be the same (it refuses NaN and Infinity too)."""
    value = orjson_value(data)
    if value is not UNSURE:
        return value
    if isinstance(data, str):
        if data.startswith("\ufeff"):
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", data, 0)
        text = data
    else:
        # '{"' rules out every BOM and UTF-16/32 (json.detect_encoding would say utf-8)
        encoding = "utf-8" if data[:2] == b'{"' else json.detect_encoding(data)
        text = data.decode(encoding, "surrogatepass")
    if text[:1] == "{":  # nothing to skip in front: scan at once, as decode() would after skipping
        try:
            obj, end = _SCAN(text, 0)
        except StopIteration:  # cut short: the decoder words it ("Expecting value")
            pass
        else:
            if end == len(text):
                return obj
    return _DECODER.decode(text)  # whitespace around it, or extra data: the decoder's own verdict


def _encode_text(obj: JSONObject) -> str:
    if _C_ENCODE is not None:
        try:
            return "".join(_C_ENCODE(obj, 0))
        except RecursionError:
            pass  # a cycle or a very deep tree: let the checking encoder say which
    return _ENCODER.encode(obj)


def _valid_id(value: Any) -> bool:
    # bool is an int subclass in Python, but not a JSON-RPC id.
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def _valid_code(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def decode(data: bytes | str) -> Message:
    """Decode one wire message; raise DecodeError with the code to answer with."""
    try:
        obj = _loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DecodeError(PARSE_ERROR, f"Parse error: {exc}") from None
    except RecursionError:
        raise _too_deep(data) from None
    if nested_too_deep(obj, data):
        raise _too_deep(data)
    if isinstance(obj, list):
        raise DecodeError(
            INVALID_REQUEST,
            "Invalid Request: batch arrays are not supported (removed in MCP 2025-06-18)",
        )
    if not isinstance(obj, dict):
        raise DecodeError(INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
    return classify(obj)


def _too_deep(data: bytes | str) -> DecodeError:
    """Too deep to walk safely (json_depth): malformed, with the id read from either end so
    the peer's request can fail at once instead of waiting out its timeout."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    msg_id = find_id(Oversized(len(raw), raw[:512], raw[-512:]))
    return DecodeError(PARSE_ERROR, f"Parse error: JSON nested deeper than {MAX_DEPTH} levels", msg_id)


def classify(obj: JSONObject) -> Message:
    """Classify an already-parsed JSON object as one of the four message kinds."""
    has_id = "id" in obj
    msg_id = obj.get("id")
    id_type = type(msg_id)
    readable_id = msg_id if id_type is int or id_type is str or _valid_id(msg_id) else None
    if obj.get("jsonrpc") != "2.0":
        raise DecodeError(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', readable_id)
    method = obj.get("method")
    if method is not None:
        if not isinstance(method, str):
            raise DecodeError(INVALID_REQUEST, 'Invalid Request: "method" must be a string', readable_id)
        params = obj.get("params")
        if params is not None and not isinstance(params, dict):
            raise DecodeError(INVALID_PARAMS, 'Invalid params: "params" must be an object', readable_id)
        if not has_id:
            return Notification(method, params, obj)
        if readable_id is None:
            raise DecodeError(
                INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer (not null)'
            )
        return Request(readable_id, method, params, obj)
    if "result" in obj and "error" in obj:
        raise DecodeError(INVALID_REQUEST, 'Invalid Request: both "result" and "error" present', readable_id)
    if "result" in obj:
        result = obj["result"]
        if readable_id is None or not isinstance(result, dict):
            raise DecodeError(INVALID_REQUEST, "Invalid Request: malformed response", readable_id)
        return Response(readable_id, result, obj)
    if "error" in obj:
        error = obj["error"]
        if not isinstance(error, dict) or not _valid_code(error.get("code")):
            raise DecodeError(INVALID_REQUEST, "Invalid Request: malformed error object", readable_id)
        if has_id and msg_id is not None and readable_id is None:
            raise DecodeError(INVALID_REQUEST, "Invalid Request: malformed error id")
        return ErrorResponse(
            readable_id, error["code"], str(error.get("message", "")), error.get("data"), obj
        )
    raise DecodeError(INVALID_REQUEST, "Invalid Request: neither a request nor a response", readable_id)


def encode(obj: JSONObject) -> bytes:
    """Serialise one message compactly; UTF-8, no embedded newlines (stdio framing)."""
    text = _encode_text(obj)
    try:
        return text.encode()
    except UnicodeEncodeError:
        # A lone surrogate (e.g. echoed from a peer's "\ud800") has no UTF-8 form; escaped
        # JSON still carries it faithfully.
        return _ENCODE_ASCII(obj).encode()


def request(msg_id: RequestId, method: str, params: JSONObject | None = None) -> JSONObject:
    """Build a request object."""
    obj: JSONObject = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        obj["params"] = params
    return obj


def notification(method: str, params: JSONObject | None = None) -> JSONObject:
    """Build a notification object."""
    obj: JSONObject = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        obj["params"] = params
    return obj


def response(msg_id: RequestId, result: JSONObject) -> JSONObject:
    """Build a success response object."""
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def error_response(
    msg_id: RequestId | None, code: int, message: str, data: Any = None
) -> JSONObject:
    """Build an error response object (``id`` null when the request was unreadable)."""
    error: JSONObject = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


def id_text(msg_id: RequestId | None) -> str:
    """How an id is shown to people: strings quoted, so ``1`` and ``"1"`` stay distinct."""
    if msg_id is None:
        return "null"
    return json.dumps(msg_id)
