"""The MCP 2026-07-28 envelope, the stateless era (sans-IO).

There is no ``initialize``: every request names its revision and the client's
capabilities in ``params._meta`` (``io.modelcontextprotocol/...`` keys), every result
says whether it is complete (``resultType``), and a server answers ``server/discover``.
On HTTP the revision, the method and the called name are repeated in headers, which must
agree with the body. This module reads and checks an envelope (raising ``RpcError`` with
the revision's error codes), and builds the results and the client's ``_meta``; the
transports decide when a message is of this era (``has_envelope``).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..errors import RpcError
from .jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, JSONObject
from .versions import MODERN_VERSIONS

__all__ = [
    "CACHE_PRIVATE",
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "COMPLETE",
    "DISCOVER",
    "HEADER_MISMATCH",
    "INPUT_REQUIRED",
    "LEGACY_ONLY_METHODS",
    "LOG_LEVEL_KEY",
    "MISSING_CLIENT_CAPABILITY",
    "NAME_BEARING",
    "PROTOCOL_VERSION_KEY",
    "RESULT_TYPE",
    "SERVER_INFO_KEY",
    "UNSUPPORTED_VERSION",
    "Envelope",
    "check_headers",
    "complete",
    "decode_header_value",
    "discover_result",
    "encode_header_value",
    "has_envelope",
    "http_status",
    "read_envelope",
    "request_meta",
    "unsupported_version",
]

_PREFIX: Final = "io.modelcontextprotocol/"
PROTOCOL_VERSION_KEY: Final = _PREFIX + "protocolVersion"
CLIENT_CAPABILITIES_KEY: Final = _PREFIX + "clientCapabilities"
CLIENT_INFO_KEY: Final = _PREFIX + "clientInfo"
LOG_LEVEL_KEY: Final = _PREFIX + "logLevel"
SERVER_INFO_KEY: Final = _PREFIX + "serverInfo"

DISCOVER: Final = "server/discover"
RESULT_TYPE: Final = "resultType"
COMPLETE: Final = "complete"
INPUT_REQUIRED: Final = "input_required"
CACHE_PRIVATE: Final = "private"

# The revision's own error codes (-32020..-32099).
HEADER_MISMATCH: Final = -32020
MISSING_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_VERSION: Final = -32022

NAME_BEARING: Final[Mapping[str, str]] = {
    "tools/call": "name", "prompts/get": "name", "resources/read": "uri",
    # the tasks extension (SEP-2663): routes a task's requests to the instance holding it
    "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId",
}
"""Method → the param an HTTP request repeats in its ``Mcp-Name`` header."""

LEGACY_ONLY_METHODS: Final = frozenset(
    {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)
"""Methods the revision removed: a modern request for one is an unknown method."""

_HTTP_STATUS: Final[Mapping[int, int]] = {
    -32700: 400, -32600: 400, INVALID_PARAMS: 400, HEADER_MISMATCH: 400,
    MISSING_CLIENT_CAPABILITY: 400, UNSUPPORTED_VERSION: 400, METHOD_NOT_FOUND: 404,
}
_BASE64_VALUE: Final = re.compile(r"=\?base64\?(.*)\?=")


@dataclass(frozen=True, slots=True)
class Envelope:
    """What one modern request says about its client."""

    protocol_version: str
    client_capabilities: JSONObject
    client_info: JSONObject | None

    def declares(self, capability: str) -> bool:
        """Whether the client declared ``capability`` (e.g. ``roots``) on this request."""
        return isinstance(self.client_capabilities.get(capability), dict)


def has_envelope(params: Mapping[str, Any] | None) -> bool:
    """Whether a request carries the modern protocol-version key (legacy requests never
    do: the ``io.modelcontextprotocol/`` prefix is reserved)."""
    meta = (params or {}).get("_meta")
    return isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta


def read_envelope(
    method: str, params: Mapping[str, Any] | None, supported: Sequence[str] = MODERN_VERSIONS,
    header: Callable[[str], str | None] | None = None,
) -> Envelope:
    """The request's envelope; -32602 when a required key is missing or malformed,
    -32020 when an HTTP header (read by ``header``) disagrees with the body (checked before
    the revision, so a client that contradicts itself is told so), -32022 (naming
    ``supported``) when its revision is not served."""
    meta = (params or {}).get("_meta")
    if not isinstance(meta, dict):
        raise RpcError(INVALID_PARAMS, f"Invalid params: params._meta must be an object carrying "
                                       f"{PROTOCOL_VERSION_KEY!r} and {CLIENT_CAPABILITIES_KEY!r}")
    missing = [key for key in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY) if key not in meta]
    if missing:
        raise RpcError(INVALID_PARAMS, f"Invalid params: params._meta lacks {', '.join(missing)}")
    version, capabilities = meta[PROTOCOL_VERSION_KEY], meta[CLIENT_CAPABILITIES_KEY]
    if header is not None:
        check_headers(method, params, header)
    if not isinstance(version, str):
        raise RpcError(INVALID_PARAMS, f"Invalid params: {PROTOCOL_VERSION_KEY} must be a string")
    if not isinstance(capabilities, dict):
        raise RpcError(INVALID_PARAMS, f"Invalid params: {CLIENT_CAPABILITIES_KEY} must be an object")
    if version not in supported:
        raise unsupported_version(version, supported)
    info = meta.get(CLIENT_INFO_KEY)
    return Envelope(version, capabilities, info if isinstance(info, dict) else None)


def unsupported_version(
    requested: str, supported: Sequence[str] = MODERN_VERSIONS, why: str | None = None
) -> RpcError:
    """-32022, with the revisions that are served and the one that was asked for."""
    message = why or f"Unsupported protocol version {requested[:40]!r} (supported: {', '.join(supported)})"
    return RpcError(UNSUPPORTED_VERSION, message, {"supported": list(supported), "requested": requested})


def check_headers(method: str, params: Mapping[str, Any] | None, header: Callable[[str], str | None]) -> None:
    """HTTP: ``MCP-Protocol-Version``, ``Mcp-Method`` and (for a name-bearing method)
    ``Mcp-Name`` must repeat the body; -32020 naming the first that does not.

    ``header(name)`` reads a request header by lowercase name."""
    meta = (params or {}).get("_meta")
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    if header("mcp-protocol-version") != version:
        raise RpcError(HEADER_MISMATCH, "Header mismatch: MCP-Protocol-Version differs from "
                                        f"params._meta[{PROTOCOL_VERSION_KEY!r}]")
    if header("mcp-method") != method:
        raise RpcError(HEADER_MISMATCH, "Header mismatch: Mcp-Method differs from the request's method")
    name_key = NAME_BEARING.get(method)
    named = (params or {}).get(name_key) if name_key is not None else None
    if named is not None and decode_header_value(header("mcp-name")) != named:
        raise RpcError(HEADER_MISMATCH, f"Header mismatch: Mcp-Name differs from params.{name_key}")


def encode_header_value(value: str) -> str:
    """A header value as sent: verbatim when it is printable ASCII without edge spaces (and
    does not look wrapped), else its UTF-8 inside ``=?base64?...?=``."""
    plain = value.isascii() and value.isprintable() and value == value.strip()
    if plain and not _BASE64_VALUE.fullmatch(value):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def decode_header_value(value: str | None) -> str | None:
    """A header value as sent: verbatim, or the UTF-8 inside ``=?base64?...?=`` (None
    when that is malformed, so it matches nothing)."""
    if value is None:
        return None
    wrapped = _BASE64_VALUE.fullmatch(value)
    if wrapped is None:
        return value
    try:
        return base64.b64decode(wrapped.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def http_status(code: int) -> int:
    """The HTTP status a modern error is answered with (200 for the others)."""
    return _HTTP_STATUS.get(code, 200)


def complete(result: JSONObject, server_info: JSONObject, *, cacheable: bool = False) -> JSONObject:
    """``result`` as a modern complete result: ``resultType``, the server's identity in
    ``_meta``, and for list and discover results the (never shared) cache directives."""
    out: JSONObject = {**result, RESULT_TYPE: COMPLETE}
    meta = out.get("_meta")
    out["_meta"] = {**(meta if isinstance(meta, dict) else {}), SERVER_INFO_KEY: server_info}
    if cacheable:
        out.setdefault("ttlMs", 0)
        out.setdefault("cacheScope", CACHE_PRIVATE)
    return out


def discover_result(capabilities: JSONObject, instructions: str | None = None,
                    supported: Sequence[str] = MODERN_VERSIONS) -> JSONObject:
    """The body of a ``server/discover`` result (before ``complete``)."""
    result: JSONObject = {"supportedVersions": list(supported), "capabilities": capabilities}
    if instructions:
        result["instructions"] = instructions
    return result


def request_meta(version: str, capabilities: JSONObject, client_name: str, client_version: str) -> JSONObject:
    """The ``_meta`` a client puts on every modern request."""
    return {
        PROTOCOL_VERSION_KEY: version,
        CLIENT_CAPABILITIES_KEY: capabilities,
        CLIENT_INFO_KEY: {"name": client_name, "version": client_version},
    }
