"""One typed event stream for everything that happens in a run.

Connections, handshakes, every JSON-RPC message in and out (with its server, connection
number and id), every model request and response, each call's parse, route, outcome and
feedback: each is an ``Event``. ``--wire``, progress output, the run result, transcripts
and the trace view all subscribe to the same ``EventStream``; nothing records a second
way. Events are plain data; ``Event.to_record()`` is the transcript line's payload.

Building an event costs a little, so producers check ``stream.active`` first when the
event would copy anything large.

What a server sends unasked (notifications, lines that are not JSON-RPC, answers to
nothing) is bounded per server and time window (``FloodLimit``): past the limit such
messages are not emitted, only counted, and one ``McpDropped`` event per server and
window says how many of what were left out. A server sending 200,000 notifications
leaves a few hundred lines in a transcript, not 100 MB. Nothing else is ever dropped.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, Final

from .flood import FloodGate, FloodLimit, FloodWindow

__all__ = [
    "DEFAULT_DIALECT",
    "MCP_NOTIFICATION",
    "MCP_REPLY",
    "MCP_REQUEST",
    "MCP_RESPONSE",
    "MCP_ROLES",
    "MCP_SERVER_REQUEST",
    "MCP_UNPAIRED",
    "AuthExchange",
    "AuthOutcome",
    "CallOutcomeEvent",
    "CallParsed",
    "CallRouted",
    "CallSpan",
    "CatalogReady",
    "CompactionEvent",
    "Event",
    "EventStream",
    "FeedbackEvent",
    "FloodLimit",
    "McpDropped",
    "McpInvalid",
    "McpMessage",
    "ModelRequestEvent",
    "ModelResponseEvent",
    "ModelStreamEvent",
    "Notice",
    "RunEndEvent",
    "RunResumedEvent",
    "RunStartEvent",
    "ServerExitedEvent",
    "ServerReady",
    "ServerStarting",
    "ToolSearchEvent",
    "UserTurnEvent",
]

Subscriber = Callable[["Event"], None]

DEFAULT_DIALECT: Final = "responses"
"""The API dialect of a model event that names none: every transcript written before model
events recorded theirs is a Responses one (``relay.stages.dialects`` reads each dialect)."""


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
        for name, optional in _record_fields(type(self)):
            value = getattr(self, name)
            if optional is not None and value == _default(optional):
                continue
            record[name] = value
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
    optional_fields: ClassVar[frozenset[str]] = frozenset({"log_level"})
    server: str
    connection: int
    protocol_version: str
    server_info: dict[str, Any]
    capabilities: dict[str, Any]
    log_level: str | None = None
    """The level of log messages asked of the server (``--server-log-level``), if one was:
    what reaches it is shown. Recorded only when asked."""


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
    belongs_to: int | str | None = None
    """The MCP id of toolrelay's own request on this connection that this message is, answers,
    cancels or came during (None: none known). Not recorded (the transcript says it by the
    ids and the call_id); it is how a batch routes the events of a shared connection to the
    task that sent the request, since call_ids repeat across tasks."""

    @property
    def event_kind(self) -> str:
        return self.role

    def to_record(self) -> dict[str, Any]:
        record = Event.to_record(self)  # without "delivered" when true (an optional field)
        del record["role"]  # it is the record's kind
        del record["belongs_to"]  # routing only
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
class McpDropped(Event):
    """Messages a server sent unasked that were not recorded: over the flood limit."""

    kind: ClassVar[str] = "mcp_dropped"
    server: str
    connection: int
    count: int
    """Messages left out in this window."""
    methods: dict[str, int]
    """What they were: notification method (``invalid`` for a non-JSON-RPC line,
    ``unpaired`` for an answer to nothing) → how many."""
    limit: int
    window: float
    """The limit: ``limit`` unasked messages per server per ``window`` seconds are kept."""

    @classmethod
    def of(cls, window: FloodWindow, limit: FloodLimit) -> McpDropped:
        return cls(server=window.server, connection=window.connection, count=window.dropped.total(),
                   methods=dict(window.dropped), limit=limit.messages, window=limit.window)


@dataclass(slots=True, kw_only=True)
class AuthExchange(Event):
    """One HTTP exchange of an OAuth sign-in or refresh: URL and status, never a body or token."""

    kind: ClassVar[str] = "auth_exchange"
    server: str
    connection: int
    step: str
    """``resource metadata``, ``server metadata``, ``registration``, ``authorization``, ``token``."""
    method: str
    url: str
    status: int | None
    """None: no answer came."""


@dataclass(slots=True, kw_only=True)
class AuthOutcome(Event):
    """A server's OAuth sign-in: ``signed_in``, ``refreshed``, ``stored``, ``needed``, ``failed``."""

    kind: ClassVar[str] = "auth"
    server: str
    connection: int
    outcome: str
    issuer: str | None
    scopes: list[str]
    how: str = ""
    """``headless`` or ``browser`` for a sign-in."""
    detail: str = ""


@dataclass(slots=True, kw_only=True)
class CatalogReady(Event):
    """The tool catalog was (re)built: what the model is offered from now on."""

    kind: ClassVar[str] = "declarations"
    optional_fields: ClassVar[frozenset[str]] = frozenset(
        {"withheld", "namespaces", "digests", "tool_search"})
    tools: list[dict[str, Any]]
    routes: dict[str, list[str]]
    """alias → [server, original tool name]."""
    reason: str
    """``initial`` or ``tools/list_changed from SERVER``."""
    withheld: list[dict[str, str]] = field(default_factory=list)
    """Listed tools not offered: ``{alias, server, tool, reason}`` each (``relay/offer.py``)."""
    namespaces: dict[str, str] = field(default_factory=dict)
    """``--declare namespaces``: namespace → the server it stands for (recorded only then)."""
    digests: dict[str, str] = field(default_factory=dict)
    """alias → the digest of its tool's definition as offered (``protocol/tool_digest.py``)."""
    tool_search: dict[str, Any] = field(default_factory=dict)
    """``--tool-search hosted|client``: ``{mode, always_load: [aliases declared loaded]}``."""


@dataclass(slots=True, kw_only=True)
class Notice(Event):
    """Something the user should be told (a restart, a fallback, a consent refusal)."""

    kind: ClassVar[str] = "notice"
    level: str
    text: str
    server: str | None = None


# -- model side ---------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class CompactionEvent(Event):
    """A response's ``compaction`` item that later inputs start from (``relay/stages/compaction.py``)."""

    kind: ClassVar[str] = "compaction"
    turn: int
    """The turn whose response holds the item."""
    response_id: str | None
    dropped: int
    """The context's items before the compaction item: left out of the next request on."""


@dataclass(slots=True, kw_only=True)
class RunStartEvent(Event):
    kind: ClassVar[str] = "run_start"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"early", "input", "settings"})
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
    early: str | None = None
    """Which calls of a streamed response may start before it is complete (``--early``:
    all, read-only, none); verify holds each early start to it. Older transcripts lack it."""
    input: list[dict[str, Any]] | None = None
    """The run's first input items when they are not the task as one user message (a
    server's prompt, attached resources); verify expects the first request to start so."""
    settings: dict[str, Any] | None = None
    """The request settings every request of the run carries (``--request-settings``, the
    sampling options: ``RequestSettings.extra``, in the loop's names as the run's API takes
    them: ``assembly.request_file``); verify holds each request to them. Recorded only when there are some."""


@dataclass(slots=True, kw_only=True)
class RunResumedEvent(RunStartEvent):
    """A stopped run goes on in the same transcript (appended): where, and what it keeps.

    Everything before it stays as it was; a ``run_end`` before it (Ctrl-C's ``aborted``)
    was not the run's end. ``turn`` is the turn it goes on at."""

    kind: ClassVar[str] = "run_resumed"
    turn: int = 1
    note: str = ""


@dataclass(slots=True, kw_only=True)
class UserTurnEvent(RunStartEvent):
    """A conversation's next user turn (``toolrelay.Conversation.send``): the run goes on
    with the user's new input, in the same transcript (appended by a later process too).

    ``turn`` is the model turn it starts at (turns are numbered through the conversation);
    ``number`` the user turn's (2 for the second message); ``input`` the items it adds
    after the context so far; ``task`` the user's text. A ``run_end`` before it ended the
    previous user turn, not the run."""

    kind: ClassVar[str] = "user_turn"
    turn: int = 1
    number: int = 2


@dataclass(slots=True, kw_only=True)
class ModelRequestEvent(Event):
    """A request body sent to the model endpoint, exactly."""

    kind: ClassVar[str] = "model_request"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"body_sha256"})
    turn: int
    url: str
    body: dict[str, Any]
    attempt: int = 1
    dialect: str = DEFAULT_DIALECT
    """The API the body is written in (``responses``): verify and view read it by this."""
    body_sha256: str | None = None
    """SHA-256 (hex) of the exact bytes posted; the transcript checks a rebuilt body by it."""


@dataclass(slots=True, kw_only=True)
class ModelResponseEvent(Event):
    """The endpoint's answer: HTTP status and exact body (parsed JSON, or text if not JSON).

    For a streamed answer (one per attempt, after its ``model_stream`` events) ``body`` is
    the Response used: the terminal event's, or the one assembled from the events."""

    kind: ClassVar[str] = "model_response"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"streamed", "stream_events", "differences", "cut"})
    turn: int
    status: int
    body: Any
    elapsed: float
    attempt: int = 1
    streamed: bool = False
    """The answer was a stream of server-sent events (recorded only when true)."""
    stream_events: int = 0
    """How many: the ``model_stream`` events of this attempt."""
    differences: list[str] = field(default_factory=list)
    """Where the terminal event's output differs from the streamed items (known quirks aside)."""
    cut: str | None = None
    """Why the stream ended before a terminal event (the connection closed, it stalled, ...);
    ``body`` is then what had been assembled."""
    dialect: str = DEFAULT_DIALECT
    """The API the answer is written in: verify and view pick the reader for it by this."""


@dataclass(slots=True, kw_only=True)
class ModelStreamEvent(Event):
    """One server-sent event of a streamed answer, exactly as received: a transcript line each.

    Its ``time`` shows when it arrived, so a call's start can be placed inside the stream."""

    kind: ClassVar[str] = "model_stream"
    turn: int
    attempt: int
    index: int
    """Position in this attempt's stream, from 0."""
    event: str | None
    """The SSE ``event:`` field."""
    data: str
    """The SSE ``data:`` text as received (a person can read it: JSON text)."""
    dialect: str = DEFAULT_DIALECT
    """The API whose stream events these are."""


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
    optional_fields: ClassVar[frozenset[str]] = frozenset({"digest"})
    call_id: str | None
    alias: str
    server: str
    tool: str
    digest: str | None = None
    """The digest of the definition the route was declared with (None: a resource reader)."""


@dataclass(slots=True, kw_only=True)
class CallSpan(Event):
    """The OpenTelemetry span of a call (a traced run, ``otel/``): how the transcript names
    the trace's ``execute_tool`` span, which ``verify --otel`` holds to the call."""

    kind: ClassVar[str] = "call_span"
    call_id: str | None
    alias: str
    trace_id: str
    """32 hex digits, as OTLP JSON writes it."""
    span_id: str
    """16 hex digits."""


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
    optional_fields: ClassVar[frozenset[str]] = frozenset({"for_user"})
    call_id: str
    item: dict[str, Any]
    cut: list[str] = field(default_factory=list)
    """What of the result the model did not get, one phrase each (empty: all of it)."""
    for_user: list[str] = field(default_factory=list)
    """Content the server meant for the user only (audience ["user"]): shown, not sent."""


@dataclass(slots=True, kw_only=True)
class ToolSearchEvent(Event):
    """A client-executed ``tool_search_call`` answered by toolrelay's own search
    (``--tool-search client``): what was asked, what was found, the item sent back."""

    kind: ClassVar[str] = "tool_search"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"problem"})
    turn: int
    call_id: str | None
    query: str
    limit: int
    hits: list[dict[str, Any]]
    """``{alias, server, tool, score}`` each, best first: the tools the output loads."""
    item: dict[str, Any]
    """The ``tool_search_output`` input item, exactly."""
    problem: str | None = None
    """Why the arguments could not be searched with (then nothing is loaded)."""


@dataclass(slots=True, kw_only=True)
class RunEndEvent(Event):
    kind: ClassVar[str] = "run_end"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"cost", "price"})
    status: str
    reason: str
    final_text: str | None = None
    turns: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    """Token counts summed over the run's responses (``relay.stages.usage``); absent ones left out."""
    cost: dict[str, float] = field(default_factory=dict)
    """With a price table (``--prices``): the dollars ``usage`` costs at ``price``, by part and
    ``total`` (``relay.stages.cost``); recorded only then."""
    price: dict[str, float] = field(default_factory=dict)
    """The model's row of the price table the cost was computed with (dollars per million)."""


_RECORD_FIELDS: dict[type[Event], tuple[tuple[str, Any], ...]] = {}


def _record_fields(cls: type[Event]) -> tuple[tuple[str, Any], ...]:
    """``cls``'s fields as ``to_record`` writes them, in order, each with its dataclass
    field when it is optional (left out at its default), else None: worked out once per
    class, not for every event (a batch records ~20 per task)."""
    found = _RECORD_FIELDS.get(cls)
    if found is None:
        optional = cls.optional_fields
        found = tuple((f.name, f if f.name in optional else None) for f in fields(cls)
                      if f.name not in ("seq", "time"))
        _RECORD_FIELDS[cls] = found
    return found


def _default(f: Any) -> Any:
    """A dataclass field's default value (its factory called: an empty list)."""
    if f.default_factory is not MISSING:
        return f.default_factory()
    return f.default


def _what(event: McpMessage | McpInvalid) -> str:
    if isinstance(event, McpInvalid):
        return "invalid"
    return event.method or "unpaired"


def _unasked(event: Event) -> bool:
    """A message the server sent on its own: a notification, a stray answer, a bad line."""
    if isinstance(event, McpMessage):
        return event.role == MCP_UNPAIRED or (event.role == MCP_NOTIFICATION and event.direction == "in")
    return isinstance(event, McpInvalid)


@dataclass
class EventStream:
    """Fan-out of events to subscribers, stamping each with a sequence number and time.

    ``flood`` bounds what servers send unasked (None: no bound)."""

    _subscribers: list[Subscriber] = field(default_factory=list)
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    active: bool = field(default=False, init=False)
    """Whether anyone listens: producers check it before building an event (on every message)."""
    _fanout: tuple[Subscriber, ...] = field(default=(), init=False, repr=False)
    """The subscribers as emit() calls them: a snapshot kept, not copied for every event."""
    flood: FloodLimit | None = field(default_factory=FloodLimit)
    _gate: FloodGate | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self._gate = FloodGate(self.flood) if self.flood is not None else None
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
        if not self._fanout:
            return
        if self._gate is not None and not self._admit(self._gate, event):
            return
        self._send(event)

    def _admit(self, gate: FloodGate, event: Event) -> bool:
        """Whether ``event`` is recorded; first, the flood summaries now due before it."""
        now = time.monotonic()
        windows_ended = gate.due(now)
        admitted = True
        if isinstance(event, (McpMessage, McpInvalid)) and _unasked(event):
            admitted, closed = gate.admit(event.server, event.connection, _what(event), now)
            windows_ended += [closed] if closed is not None else []
        elif isinstance(event, (RunEndEvent, ServerExitedEvent, ServerStarting)):
            windows_ended += gate.flush(None if isinstance(event, RunEndEvent) else event.server)
        for window in windows_ended:
            self._send(McpDropped.of(window, gate.limit))
        return admitted

    def _send(self, event: Event) -> None:
        event.seq = next(self._seq)
        event.time = time.time()
        for subscriber in self._fanout:
            subscriber(event)
