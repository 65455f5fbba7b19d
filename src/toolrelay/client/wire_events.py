"""Every JSON-RPC message of a client connection, as ``McpMessage`` events, and what era
negotiation's fallback messages are (``EraNotes``).

The peer calls the tracer for each message in and out, with the tag of its request (the
model's call_id). Each event also names the request of ours it belongs to (``belongs_to``:
the request itself, its answer, its cancellation, or what the server sent during it, as
``owner_of`` tells), which is how a batch routes a shared connection's events. Nothing is
built unless someone listens (``events.active``): the check is the only cost on the hot
path.

Probing (``client/era_probe.py``), the ``initialize`` sent beside a ``server/discover`` not yet
answered is a fallback: a server that speaks 2026-07-28 refuses it (or, over HTTP,
may answer it unused). ``EraNotes`` names those messages for the ``--wire`` printers, and
``view`` uses the same words, so a healthy negotiation never reads as a failure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..events import EventStream, McpMessage
from ..protocol import mcp as m
from ..protocol.jsonrpc import JSONObject, Message, Notification, Request, RequestId
from ..protocol.request_envelope import DISCOVER
from ..protocol.versions import LATEST_MODERN_VERSION, MODERN_VERSIONS

__all__ = ["FALLBACK_SENT", "EraNotes", "OwnerOf", "WireTracer", "fallback_answered", "fallback_refused"]

OwnerOf = Callable[[Request | Notification], RequestId | None]
"""The id of our request a server request or notification came during (None: not known)."""

FALLBACK_SENT = "fallback initialize (sent beside a server/discover not yet answered)"


def fallback_refused(version: str) -> str:
    return f"fallback initialize refused (expected: the server speaks {version})"


def fallback_answered(version: str) -> str:
    return f"fallback initialize answered, not used (the server speaks {version})"


class EraNotes:
    """Names each fallback ``initialize`` and its answer, message by message, as the wire
    goes (one instance per printer; keyed by server and connection)."""

    def __init__(self) -> None:
        self._probes: dict[tuple[str, int], set[Any]] = {}  # discover ids not yet answered
        self._modern: dict[tuple[str, int], str] = {}  # the revision a discover result named
        self._fallbacks: set[tuple[str, int, Any]] = set()

    def note(self, event: McpMessage) -> str | None:
        where = (event.server, event.connection)
        if event.method == DISCOVER:
            self._probe(event, where)
            return None
        if event.method != "initialize" or event.role == "mcp_notification":
            return None
        key = (*where, event.mcp_id)
        if event.direction == "out":
            if not self._probes.get(where):
                return None  # the handshake itself: the probe had already been answered (refused)
            self._fallbacks.add(key)
            return FALLBACK_SENT
        if key not in self._fallbacks:
            return None
        if "error" in event.message:
            return fallback_refused(self._modern.get(where) or _refused_for(event.message))
        modern = self._modern.get(where)
        return fallback_answered(modern) if modern else None  # else the handshake won: not a fallback

    def _probe(self, event: McpMessage, where: tuple[str, int]) -> None:
        pending = self._probes.setdefault(where, set())
        if event.direction == "out":
            pending.add(event.mcp_id)
            return
        pending.discard(event.mcp_id)
        result = event.message.get("result")
        versions = result.get("supportedVersions") if isinstance(result, dict) else None
        found = [v for v in versions if v in MODERN_VERSIONS] if isinstance(versions, list) else []
        if found:
            self._modern[where] = found[0]


def _refused_for(message: JSONObject) -> str:
    """The modern revision a -32022 refusal names (its ``data.supported``), else the latest."""
    error = message.get("error")
    data = error.get("data") if isinstance(error, dict) else None
    supported = data.get("supported") if isinstance(data, dict) else None
    named = [v for v in supported if v in MODERN_VERSIONS] if isinstance(supported, list) else []
    return named[0] if named else LATEST_MODERN_VERSION


class WireTracer:
    """A ``protocol.peer.Tracer`` that emits McpMessage events for one server."""

    __slots__ = ("_asked", "_events", "_methods", "connection", "owner_of", "server")

    def __init__(self, events: EventStream, server: str, connection: int) -> None:
        self._events = events
        self.server = server
        self.connection = connection
        """The connection number; the owner updates it when an HTTP session is renewed."""
        self._methods: dict[Any, tuple[str, Any]] = {}  # our request id → (method, tag), for its answer
        self._asked: dict[Any, RequestId] = {}  # a server request's id → ours it came during, for our reply
        self.owner_of: OwnerOf | None = None

    def sent(self, message: JSONObject, tag: Any, delivered: bool = True) -> None:
        if not self._events.active:
            return
        method = message.get("method")
        mcp_id = message.get("id")
        if method is None:
            role, owner = "mcp_reply", self._asked.pop(mcp_id, None)
        elif mcp_id is None:
            role, owner = "mcp_notification", _cancelled_id(message, method)
        else:
            role, owner = "mcp_request", mcp_id
            self._methods[mcp_id] = (method, tag)
        self._emit(role, "out", mcp_id, method, message, tag, None, delivered, owner)

    def received(self, message: Message, tag: Any, elapsed: float | None) -> None:
        if not self._events.active:
            if elapsed is not None and self._methods:
                self._methods.pop(getattr(message, "id", None), None)
            return
        if isinstance(message, Request):  # tagged with the call it arrived during, if known
            owner = self._owner(message)
            if owner is not None:
                self._asked[message.id] = owner
            self._emit("mcp_server_request", "in", message.id, message.method, message.raw, tag, None,
                       owner=owner)
        elif isinstance(message, Notification):
            self._emit("mcp_notification", "in", None, message.method, message.raw, tag, None,
                       owner=self._owner(message))
        else:
            role = "mcp_unpaired" if elapsed is None else "mcp_response"
            sent = self._methods.pop(message.id, None) if elapsed is not None else None
            self._emit(role, "in", message.id, sent[0] if sent else None, message.raw, tag, elapsed,
                       owner=message.id)  # unpaired: ours it names, if it still waits

    def malformed_answer(self, message: JSONObject, mcp_id: RequestId, elapsed: float) -> None:
        """The answer to our request ``mcp_id``, though not a valid JSON-RPC response: recorded
        as its response, with the request's tag, exactly as received."""
        sent = self._methods.pop(mcp_id, None)
        if self._events.active and sent is not None:
            self._emit("mcp_response", "in", mcp_id, sent[0], message, sent[1], elapsed, owner=mcp_id)

    def _owner(self, message: Request | Notification) -> RequestId | None:
        return self.owner_of(message) if self.owner_of is not None else None

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
        owner: RequestId | None = None,
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
            belongs_to=owner,
        ))


def _cancelled_id(message: JSONObject, method: str) -> RequestId | None:
    """The request a ``notifications/cancelled`` of ours gives up (None for other notifications)."""
    if method != m.CANCELLED:
        return None
    params = message.get("params")
    wanted = params.get("requestId") if isinstance(params, dict) else None
    return wanted if isinstance(wanted, int | str) and not isinstance(wanted, bool) else None
