"""One typed event stream for everything that happens in a run.

Connections, handshakes, every JSON-RPC message in and out (with its server, connection
number and id), every model request and response, each call's parse, route, outcome and
feedback: each is an ``Event``. ``--wire``, progress output, the run result, transcripts
and the trace view all subscribe to the same ``EventStream``; nothing records a second
way. Events are plain data; ``Event.to_record()`` is the transcript line's payload.

Building an event costs a little, so producers check ``stream.active`` first when the
event would copy anything large.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Final

__all__ = [
    "MCP_NOTIFICATION",
    "MCP_REPLY",
    "MCP_REQUEST",
    "MCP_RESPONSE",
    "MCP_ROLES",
    "MCP_SERVER_REQUEST",
    "MCP_UNPAIRED",
    "CallOutcomeEvent",
    "CallParsed",
    "CallRouted",
    "CatalogReady",
    "Event",
    "EventStream",
    "FeedbackEvent",
    "McpInvalid",
    "McpMessage",
    "ModelRequestEvent",
    "ModelResponseEvent",
    "Notice",
    "RunEndEvent",
    "RunStartEvent",
    "ServerExitedEvent",
    "ServerReady",
    "ServerStarting",
]

Subscriber = Callable[["Event"], None]


@dataclass(slots=True, kw_only=True)
class Event:
    """Base of all events; ``seq`` and ``time`` are stamped by the stream on emit."""

    kind: ClassVar[str] = "event"
    optional_fields: ClassVar[frozenset[str]] = frozenset()
    """Fields a record holds only when they are not at their default (rare facts)."""
    seq: int = 0
    time: float = 0.0

    def to_record(self) -> dict[str, Any]:
        """The event as a JSON-ready dict: kind, seq, time, then its own fields."""
        record: dict[str, Any] = {"seq": self.seq, "time": self.time, "kind": self.event_kind}
        for f in fields(self):
            if f.name not in ("seq", "time"):
                record[f.name] = getattr(self, f.name)
        return record

    @property
    def event_kind(self) -> str:
        return type(self).kind


# -- MCP side ---------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class ServerStarting(Event):
    """A connection to a server is being opened (connection number grows on restart)."""

    kind: ClassVar[str] = "server_starting"
    server: str
    connection: int
    transport: str
    target: str
    """The command line (stdio) or URL (HTTP); never env values or headers."""


@dataclass(slots=True, kw_only=True)
class ServerReady(Event):
    """The handshake finished."""

    kind: ClassVar[str] = "server_ready"
    server: str
    connection: int
    protocol_version: str
    server_info: dict[str, Any]
    capabilities: dict[str, Any]


@dataclass(slots=True, kw_only=True)
class ServerExitedEvent(Event):
    """A server's process exited or its channel closed."""

    kind: ClassVar[str] = "server_exited"
    server: str
    connection: int
    returncode: int | None
    stderr_tail: str
    expected: bool
    """True when toolrelay shut it down itself."""


# The roles an McpMessage is recorded under: its transcript kind (see McpMessage's docstring).
MCP_REQUEST: Final = "mcp_request"
MCP_RESPONSE: Final = "mcp_response"
MCP_NOTIFICATION: Final = "mcp_notification"
MCP_SERVER_REQUEST: Final = "mcp_server_request"
MCP_REPLY: Final = "mcp_reply"
MCP_UNPAIRED: Final = "mcp_unpaired"
MCP_ROLES: Final = frozenset(
    {MCP_REQUEST, MCP_RESPONSE, MCP_NOTIFICATION, MCP_SERVER_REQUEST, MCP_REPLY, MCP_UNPAIRED}
)
"""The kinds an ``McpMessage`` is recorded under (its ``role``)."""


@dataclass(slots=True, kw_only=True)
class McpMessage(Event):
    """One JSON-RPC message between toolrelay and a server, exactly as on the wire.

    ``role`` is ``mcp_request`` (ours), ``mcp_response`` (the answer to ours),
    ``mcp_notification`` (either way), ``mcp_server_request`` (the server asks us),
    ``mcp_reply`` (our answer to it) or ``mcp_unpaired`` (an answer to nothing pending).
    """

    kind: ClassVar[str] = "mcp"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"delivered"})
    role: str
    direction: str
    """``out`` (toolrelay → server) or ``in``."""
    server: str
    connection: int
    mcp_id: int | str | None
    method: str | None
    message: dict[str, Any]
    call_id: str | None = None
    """The model's call this message serves, when it serves one: the id link."""
    elapsed: float | None = None
    delivered: bool = True
    """False for a cancellation toolrelay could not write (the server had stopped reading):
    the record never claims a message the server cannot have received. Recorded only when
    False."""

    @property
    def event_kind(self) -> str:
        return self.role

    def to_record(self) -> dict[str, Any]:
        record = Event.to_record(self)
        del record["role"]  # it is the record's kind
        if self.delivered:
            del record["delivered"]
        return record


@dataclass(slots=True, kw_only=True)
class McpInvalid(Event):
    """A line from a server that is not a JSON-RPC message (skipped), or an oversized one."""

    kind: ClassVar[str] = "mcp_invalid"
    server: str
    connection: int
    reason: str
    preview: str


@dataclass(slots=True, kw_only=True)
class CatalogReady(Event):
    """The tool catalog was (re)built: what the model is offered from now on."""

    kind: ClassVar[str] = "declarations"
    tools: list[dict[str, Any]]
    routes: dict[str, list[str]]
    """alias → [server, original tool name]."""
    reason: str
    """``initial`` or ``tools/list_changed from SERVER``."""


@dataclass(slots=True, kw_only=True)
class Notice(Event):
    """Something the user should be told (a restart, a fallback, a consent refusal)."""

    kind: ClassVar[str] = "notice"
    level: str
    text: str
    server: str | None = None


# -- model side ---------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class RunStartEvent(Event):
    kind: ClassVar[str] = "run_start"
    run_id: str
    model: str
    endpoint: str
    context_mode: str
    strict: bool
    task: str
    output_budget: int | None = None
    """Characters of tool output passed on (what verify re-renders feedback with)."""
    media_budget: int | None = None
    """Bytes of images and files per tool output passed on (verify re-renders with it too)."""
    multimodal: bool = True
    """Whether images/files in results became input_image/input_file parts."""


@dataclass(slots=True, kw_only=True)
class ModelRequestEvent(Event):
    """A request body sent to the Responses endpoint, exactly."""

    kind: ClassVar[str] = "model_request"
    turn: int
    url: str
    body: dict[str, Any]
    attempt: int = 1


@dataclass(slots=True, kw_only=True)
class ModelResponseEvent(Event):
    """The endpoint's answer: HTTP status and exact body (parsed JSON, or text if not JSON)."""

    kind: ClassVar[str] = "model_response"
    turn: int
    status: int
    body: Any
    elapsed: float
    attempt: int = 1


@dataclass(slots=True, kw_only=True)
class CallParsed(Event):
    """A function_call item's arguments text, verbatim, and what parsing made of it."""

    kind: ClassVar[str] = "call_parsed"
    call_id: str | None
    alias: str
    arguments_text: str
    arguments: Any = None
    error: str | None = None


@dataclass(slots=True, kw_only=True)
class CallRouted(Event):
    """alias → server and original tool name (the router's decision)."""

    kind: ClassVar[str] = "call_routed"
    call_id: str | None
    alias: str
    server: str
    tool: str


@dataclass(slots=True, kw_only=True)
class CallOutcomeEvent(Event):
    """How one call ended (its class), with the MCP id that served it."""

    kind: ClassVar[str] = "call_outcome"
    call_id: str | None
    outcome: dict[str, Any]


@dataclass(slots=True, kw_only=True)
class FeedbackEvent(Event):
    """The function_call_output item built for a call."""

    kind: ClassVar[str] = "feedback"
    call_id: str
    item: dict[str, Any]
    cut: list[str] = field(default_factory=list)
    """What of the result the model did not get, one phrase each (empty: all of it)."""


@dataclass(slots=True, kw_only=True)
class RunEndEvent(Event):
    kind: ClassVar[str] = "run_end"
    status: str
    reason: str
    final_text: str | None = None
    turns: int = 0


@dataclass
class EventStream:
    """Fan-out of events to subscribers, stamping each with a sequence number and time."""

    _subscribers: list[Subscriber] = field(default_factory=list)
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    active: bool = field(default=False, init=False)
    """Whether anyone listens: producers check it before building an event (on every message)."""
    _fanout: tuple[Subscriber, ...] = field(default=(), init=False, repr=False)
    """The subscribers as emit() calls them: a snapshot kept, not copied for every event."""

    def __post_init__(self) -> None:
        self._changed()

    def _changed(self) -> None:
        self._fanout = tuple(self._subscribers)
        self.active = bool(self._fanout)

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add a subscriber; returns a function that removes it."""
        self._subscribers.append(subscriber)
        self._changed()

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)
                self._changed()

        return unsubscribe

    def emit(self, event: Event) -> None:
        fanout = self._fanout
        if not fanout:
            return
        event.seq = next(self._seq)
        event.time = time.time()
        for subscriber in fanout:
            subscriber(event)
