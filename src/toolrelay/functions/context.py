"""``ToolContext``: what a function tool may ask of the call it serves.

A function takes it by naming a parameter of this type (never part of its schema):

    @toolrelay.tool
    async def index(folder: str, ctx: toolrelay.ToolContext) -> int:
        ctx.progress(0, 10, "listing")          # notifications/progress, on the call's token
        ctx.log("info", "starting")             # notifications/message
        answer = await ctx.elicit("Which branch?", {"type": "object", ...})
        ...

Everything goes through the MCP session as the server's own messages, so it is recorded
in the transcript like any server's; a 2026-07-28 request has no session: its progress
and log messages (what its ``_meta`` asks for) go on the request's own stream, and
``elicit`` fails (that revision has no server requests). ``call_id`` is the model's id of the call, when the
client said it (toolrelay's in-process servers are told it in ``_meta``: ``CALL_ID_KEY``);
``mcp_id`` is the tools/call's JSON-RPC id.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

from ..server.request_stream import RequestStream

__all__ = ["CALL_ID_KEY", "Channel", "ElicitationDeclined", "ToolContext"]

CALL_ID_KEY: Final = "io.toolrelay/callId"
"""The ``params._meta`` key of a tools/call that names the model's call_id."""
ELICIT_TIMEOUT: Final = 600.0


class Channel(Protocol):
    """The session's side a context speaks through (``protocol.peer.Peer``)."""

    def notify(self, method: str, params: dict[str, Any] | None = None, tag: Any = None) -> None: ...

    async def call(self, method: str, params: dict[str, Any] | None = None, *,
                   timeout: float | None = None, tag: Any = None) -> Any: ...


class RequestChannel:
    """A 2026-07-28 request's own stream as a context's channel (``server/request_stream.py``):
    its progress and log messages go there, before the answer; the revision has no server
    requests, so asking the user through it fails (``elicit`` raises RuntimeError)."""

    def __init__(self, stream: RequestStream) -> None:
        self.stream = stream

    def notify(self, method: str, params: dict[str, Any] | None = None, tag: Any = None) -> None:
        self.stream.notify(method, params)

    async def call(self, method: str, params: dict[str, Any] | None = None, *,
                   timeout: float | None = None, tag: Any = None) -> Any:
        raise RuntimeError(f"a 2026-07-28 request cannot carry the server's {method} (that revision has "
                           "no server requests)")


class ElicitationDeclined(Exception):
    """The user declined or cancelled the question (``action`` says which)."""

    def __init__(self, action: str) -> None:
        super().__init__(f"the user chose {action!r}")
        self.action = action


class ToolContext:
    """One call of a function tool, as the function sees it."""

    def __init__(self, *, tool: str, server: str, mcp_id: str | int | None, meta: Mapping[str, Any],
                 channel: Channel | None, protocol_version: str | None = None) -> None:
        self.tool = tool
        self.server = server
        self.mcp_id = mcp_id
        """The tools/call's JSON-RPC id (None: called directly, not over MCP)."""
        call_id = meta.get(CALL_ID_KEY)
        self.call_id: str | None = call_id if isinstance(call_id, str) else None
        """The model's call_id, when the client told it (toolrelay does)."""
        token = meta.get("progressToken")
        self.progress_token: str | int | None = token if isinstance(token, str | int) else None
        self.protocol_version = protocol_version
        self._channel = channel

    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> bool:
        """Report progress (``notifications/progress``); False when the caller asked for none."""
        if self._channel is None or self.progress_token is None:
            return False
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self._channel.notify("notifications/progress", params, tag=self.mcp_id)
        return True

    def log(self, level: str, data: Any, *, logger: str | None = None) -> bool:
        """Send a log message (``notifications/message``, ``level`` as syslog's: debug, info,
        notice, warning, error...); False when there is no session to send it on."""
        if self._channel is None:
            return False
        self._channel.notify("notifications/message", {"level": level, "logger": logger or self.tool,
                                                       "data": data}, tag=self.mcp_id)
        return True

    async def elicit(self, message: str, schema: Mapping[str, Any], *,
                     timeout: float = ELICIT_TIMEOUT) -> dict[str, Any]:
        """Ask the user (``elicitation/create``, a form of ``schema``); the answer's content.
        Raises ``ElicitationDeclined`` when the user declines or cancels, and ``RuntimeError``
        when the client cannot ask (no session, or it refused the request)."""
        if self._channel is None:
            raise RuntimeError("this call has no MCP session to ask the user through")
        exchange = await self._channel.call("elicitation/create",
                                            {"message": message, "requestedSchema": dict(schema)},
                                            timeout=timeout, tag=self.mcp_id)
        try:
            result = exchange.raise_for_error()
        except Exception as exc:  # the client's JSON-RPC error: it cannot ask
            raise RuntimeError(f"the client did not ask the user: {exc}") from None
        action = result.get("action")
        if action != "accept":
            raise ElicitationDeclined(str(action))
        content = result.get("content")
        return dict(content) if isinstance(content, dict) else {}
