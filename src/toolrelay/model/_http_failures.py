"""Internal: how one HTTP exchange with the model endpoint fails, and the one place where
that becomes an ``errors.py`` error.

The HTTP clients (``http.py``, and ``http_choice.py`` behind a proxy) raise the kinds
below, each with a ``reason`` in a few words, decided where the failure happens (the OS
error at hand says "connection refused"; nothing walks ``__cause__`` chains later).
``ResponsesClient`` posts inside ``MapHttpFailures``, which turns any of them into the
``ModelError`` subclass for it, with a message naming the endpoint — as httpx's
``map_httpcore_exceptions`` does. None of these classes escapes the model package.

    kind               ModelError raised             retried
    ConnectFailed      ModelUnreachable              yes
    ConnectTimeout     ModelTimeout                  yes
    ReadTimeout        ModelTimeout                  yes
    ConnectionClosed   ModelUnreachable              yes
    NotHttp            ModelUnreachable              yes
    TransportFailure   ModelUnreachable              yes
    AnswerRejected     ModelAnswerUnreadable         no: it would be the same again
    RequestRejected    ModelRequestUnsendable        no: nothing was sent
"""

from __future__ import annotations

import socket
import ssl
from types import TracebackType
from typing import Final

from ..errors import (
    ModelAnswerUnreadable,
    ModelError,
    ModelRequestUnsendable,
    ModelTimeout,
    ModelUnreachable,
)

__all__ = [
    "CLOSED_WITHOUT_ANSWER",
    "MAPPING",
    "AnswerRejected",
    "ConnectFailed",
    "ConnectTimeout",
    "ConnectionClosed",
    "HttpFailure",
    "MapHttpFailures",
    "NotHttp",
    "ReadTimeout",
    "RequestRejected",
    "TransportFailure",
    "model_error",
    "socket_reason",
]

CLOSED_WITHOUT_ANSWER: Final = "the server closed the connection without a valid answer"


class HttpFailure(Exception):
    """The exchange failed; ``reason`` (also the message) says how, in a few words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ConnectFailed(HttpFailure):
    """No connection: refused, name not resolved, TLS handshake failed, unreachable."""


class ConnectTimeout(HttpFailure):
    """No connection within the connect timeout."""

    def __init__(self) -> None:
        super().__init__("timed out")


class ReadTimeout(HttpFailure):
    """Connected, but no complete answer within ``seconds``."""

    def __init__(self, seconds: float) -> None:
        super().__init__("timed out")
        self.seconds = seconds


class ConnectionClosed(HttpFailure):
    """The server closed or reset the connection before the answer was complete."""


class NotHttp(HttpFailure):
    """The answer is not valid HTTP/1.1."""


class TransportFailure(HttpFailure):
    """Any other failure on the way (the proxied client's); asking again may work."""


class AnswerRejected(HttpFailure):
    """An answer arrived that cannot be accepted: too large, or in an encoding not decoded."""


class RequestRejected(HttpFailure):
    """The request cannot be sent as HTTP/1.1 (a header with forbidden characters)."""


_UNREACHABLE: Final = "cannot reach the model endpoint {url}: {failure.reason}"
_UNREADABLE: Final = "cannot read the model endpoint's answer from {url}: {failure.reason}"
_UNSENDABLE: Final = "cannot send the request to the model endpoint {url}: {failure.reason}"
MAPPING: Final[dict[type[HttpFailure], tuple[type[ModelError], str]]] = {
    ConnectFailed: (ModelUnreachable, _UNREACHABLE),
    ConnectTimeout: (ModelTimeout, _UNREACHABLE),
    ReadTimeout: (ModelTimeout, "the model endpoint {url} did not answer within {failure.seconds:g} s"),
    ConnectionClosed: (ModelUnreachable, _UNREACHABLE),
    NotHttp: (ModelUnreachable, _UNREACHABLE),
    TransportFailure: (ModelUnreachable, _UNREACHABLE),
    AnswerRejected: (ModelAnswerUnreadable, _UNREADABLE),
    RequestRejected: (ModelRequestUnsendable, _UNSENDABLE),
}
"""Each kind → the error raised and its message (``url`` is the endpoint as shown)."""


def model_error(failure: HttpFailure, url: str) -> ModelError:
    """The ``ModelError`` for ``failure`` of a request to ``url`` (as shown: no secrets)."""
    for kind in type(failure).__mro__:  # a private subclass (http.py's) maps as its kind
        if kind in MAPPING:
            error_class, template = MAPPING[kind]
            message = template.format(url=url, failure=failure)
            if issubclass(error_class, ModelUnreachable):
                return error_class(message, reason=failure.reason)
            return error_class(message)
    raise AssertionError(f"{type(failure).__name__} has no entry in MAPPING")  # tests keep it complete


class MapHttpFailures:
    """``with MapHttpFailures(url):`` raises the ``ModelError`` for any ``HttpFailure`` of
    a request to ``url``. A class, not a generator: one instance serves every request."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, failure: BaseException | None, tb: TracebackType | None
    ) -> None:
        if isinstance(failure, HttpFailure):
            raise model_error(failure, self.url) from failure


def socket_reason(exc: BaseException) -> str | None:
    """What an OS error on the way to the endpoint means, in a few words; None if nothing
    more telling than its own text."""
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.gaierror):
        return f"host name not resolved (DNS: {exc.strerror})"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS certificate not trusted ({exc.verify_message})"
    if isinstance(exc, ssl.SSLError):
        return f"TLS failed ({exc.reason or exc})"
    if isinstance(exc, ConnectionResetError):
        return "connection reset by the server"
    return None
