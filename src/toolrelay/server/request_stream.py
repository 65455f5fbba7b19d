"""One 2026-07-28 request's own notifications: its progress and its log messages.

A 2026-07-28 request is one exchange, yet its server may report on it before the answer:
``notifications/progress`` when the request's ``_meta`` carries a ``progressToken``, and
``notifications/message`` when it carries ``io.modelcontextprotocol/logLevel`` (at that
level and above; without it the server MUST NOT send log messages for the request). On
stdio they go out before the response; over Streamable HTTP they make the answer an SSE
stream whose last event is the response (``http_request_stream.py``). A ``RequestStream``
holds what the request asked for and keeps the rules, so no service can break them: a
progress notification gets the request's own token, a log message below the level (or
for a request that named none) is dropped, and nothing else is sent on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from ..protocol import jsonrpc
from ..protocol import mcp as m
from ..protocol.jsonrpc import JSONObject, Request
from ..protocol.request_envelope import LOG_LEVEL_KEY

__all__ = ["LOG_LEVELS", "LOG_MESSAGE", "RequestStream", "at_least", "log_level_of", "progress_token_of"]

LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""RFC 5424's levels, least severe first (the MCP logging levels)."""
LOG_MESSAGE: Final = "notifications/message"
_RANK: Final = {level: rank for rank, level in enumerate(LOG_LEVELS)}


def at_least(level: object, wanted: str) -> bool:
    """Whether a message at ``level`` is one a client that asked for ``wanted`` is sent
    (an unknown level is: better told than lost)."""
    return _RANK.get(str(level), len(LOG_LEVELS)) >= _RANK.get(wanted, 0)


def _meta(request: Request) -> dict[str, Any]:
    meta = (request.params or {}).get("_meta")
    return meta if isinstance(meta, dict) else {}


def progress_token_of(request: Request) -> str | int | None:
    """The request's ``_meta.progressToken`` (a string or an integer), if it has one."""
    token = _meta(request).get("progressToken")
    return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None


def log_level_of(request: Request) -> str | None:
    """The level a 2026-07-28 request asks log messages at (None: it asks for none)."""
    level = _meta(request).get(LOG_LEVEL_KEY)
    return level if isinstance(level, str) and level in _RANK else None


@dataclass(slots=True, kw_only=True, eq=False)
class RequestStream:
    """Where one request's notifications go, and which of them it asked for."""

    send: Callable[[JSONObject], None]
    """Sends one notification message on the request's stream (stdio: at once; HTTP: as an SSE event)."""
    progress_token: str | int | None = None
    log_level: str | None = None
    exchange: int | None = None
    """The transport's number of the exchange the request came in (2026-07-28 HTTP: each POST
    is one, ``http.py``); a proxy records it, so two clients' requests of one id stay apart."""

    @classmethod
    def of(cls, request: Request, send: Callable[[JSONObject], None], *,
           exchange: int | None = None) -> RequestStream:
        return cls(send=send, progress_token=progress_token_of(request), log_level=log_level_of(request),
                   exchange=exchange)

    @property
    def silent(self) -> bool:
        """Whether nothing can be sent on it (the request asked for neither progress nor logs)."""
        return self.progress_token is None and self.log_level is None

    def wants(self, method: str, params: JSONObject | None) -> bool:
        """Whether the request asked for this notification (the proxy records only what it sends)."""
        if method == m.PROGRESS:
            return self.progress_token is not None
        if method == LOG_MESSAGE:
            return self.log_level is not None and at_least((params or {}).get("level"), self.log_level)
        return False

    def notify(self, method: str, params: JSONObject | None = None) -> JSONObject | None:
        """Send ``method`` if the request asked for it; the message sent (None: not sent)."""
        if not self.wants(method, params):
            return None
        body = dict(params or {})
        if method == m.PROGRESS:
            body["progressToken"] = self.progress_token
        message = jsonrpc.notification(method, body)
        self.send(message)
        return message
