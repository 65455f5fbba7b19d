"""A failed HTTP exchange (httpx2) in words, for the Streamable HTTP transport and the OAuth
side alike: "connection refused", "timed out", or the library's own text with every quoted
byte string redacted (h11 quotes the header value it refuses, a Bearer token included);
never a class name."""

from __future__ import annotations

import httpx2

from ..errors import TransportError
from ..redaction import redact_wire_bytes
from .config import ServerConfig

__all__ = ["failure_words", "unreachable"]


def failure_words(exc: httpx2.HTTPError) -> str:
    """What went wrong, safe to show."""
    if isinstance(exc, httpx2.ConnectError):
        return _connect_failure(exc)
    if isinstance(exc, httpx2.TimeoutException):
        return "timed out"
    return redact_wire_bytes(str(exc)) or "the HTTP exchange broke off"


def unreachable(config: ServerConfig, exc: httpx2.HTTPError) -> TransportError | None:
    """The error for a server that cannot be reached at all (refused, unresolved, a connect
    that timed out); None for a failure once connected."""
    if not isinstance(exc, httpx2.ConnectError | httpx2.ConnectTimeout):
        return None
    return TransportError(f"cannot connect to server {config.name} at {config.target}: {failure_words(exc)}")


def _connect_failure(exc: BaseException) -> str:
    """The root cause of a failed connect, in words ("connection refused")."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror.lower()
        cause = cause.__cause__ or cause.__context__
    return redact_wire_bytes(str(exc)) or "connect failed"
