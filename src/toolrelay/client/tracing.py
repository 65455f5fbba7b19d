"""Every JSON-RPC message of a client connection, as ``McpMessage`` events.

The peer calls the tracer for each message in and out, with the tag of its request (the
model's call_id). Nothing is built unless someone listens (``events.active``): the
check is the only cost on the hot path.
"""

from __future__ import annotations

from typing import Any

from ..events import EventStream, McpMessage
from ..protocol.jsonrpc import JSONObject, Message, Notification, Request, RequestId

__all__ = ["WireTracer"]


class WireTracer:
    """A ``protocol.peer.Tracer`` that emits McpMessage events for one server."""

    __slots__ = ("_events", "_methods", "connection", "server")

    def __init__(self, events: EventStream, server: str, connection: int) -> None:
        self._events = events
        self.server = server
        self.connection = connection
        """The connection number; the owner updates it when an HTTP session is renewed."""
        self._methods: dict[Any, tuple[str, Any]] = {}  # our request id → (method, tag), for its answer

    def sent(self, message: JSONObject, tag: Any, delivered: bool = True) -> None:
        if not self._events.active:
            return
        method = message.get("method")
        mcp_id = message.get("id")
        if method is None:
            role = "mcp_reply"
        elif mcp_id is None:
            role = "mcp_notification"
        else:
            role = "mcp_request"
            self._methods[mcp_id] = (method, tag)
        self._emit(role, "out", mcp_id, method, message, tag, None, delivered)

    def received(self, message: Message, tag: Any, elapsed: float | None) -> None:
        if not self._events.active:
            if elapsed is not None and self._methods:
                self._methods.pop(getattr(message, "id", None), None)
            return
        if isinstance(message, Request):  # tagged with the call it arrived during, if known
            self._emit("mcp_server_request", "in", message.id, message.method, message.raw, tag, None)
        elif isinstance(message, Notification):
            self._emit("mcp_notification", "in", None, message.method, message.raw, tag, None)
        else:
            role = "mcp_unpaired" if elapsed is None else "mcp_response"
            sent = self._methods.pop(message.id, None) if elapsed is not None else None
            self._emit(role, "in", message.id, sent[0] if sent else None, message.raw, tag, elapsed)

    def malformed_answer(self, message: JSONObject, mcp_id: RequestId, elapsed: float) -> None:
        """The answer to our request ``mcp_id``, though not a valid JSON-RPC response: recorded
        as its response, with the request's tag, exactly as received."""
        sent = self._methods.pop(mcp_id, None)
        if self._events.active and sent is not None:
            self._emit("mcp_response", "in", mcp_id, sent[0], message, sent[1], elapsed)

    def _emit(
        self,
        role: str,
        direction: str,
        mcp_id: Any,
        method: str | None,
        message: JSONObject,
        tag: Any,
        elapsed: float | None,
        delivered: bool = True,
    ) -> None:
        self._events.emit(McpMessage(
            role=role,
            direction=direction,
            server=self.server,
            connection=self.connection,
            mcp_id=mcp_id,
            method=method,
            message=message,
            call_id=tag if isinstance(tag, str) else None,
            elapsed=elapsed,
            delivered=delivered,
        ))
