"""The transcript events of a proxy run: the host leg, and how each host request was routed.

The upstream leg is recorded as every toolrelay connection records it (``mcp_request`` /
``mcp_response`` / ... events, with the server, the connection number and the MCP id);
their ``call_id`` is the proxy's own key of the host request they serve. The host leg is
recorded here:

- ``proxy_start`` / ``proxy_end``: the proxy's name, how hosts reach it, its servers;
- ``proxy_offer``: what hosts are offered (each alias → server and tool), and what is
  withheld with why (pins, policy, the config's rules), at start and after every change;
- ``proxy_host``: one message of the host leg, ``in`` (the host's request as received)
  or ``out`` (the proxy's answer to it), with the host's JSON-RPC id and the proxy's key;
  a host's own call id (``params._meta["io.toolrelay/call_id"]``) is kept as ``host_call_id``;
  a 2026-07-28 HTTP host's (``host`` 0) carries the number of its exchange (one POST);
- ``proxy_route``: the pairing of one host request with the upstream request that
  served it (server, connection, upstream MCP id), or the decision that none would
  (``denied`` naming the rule, ``withheld``, ``unknown``), or why it failed. For a
  resource, prompt or completion request (``features.py``) ``alias`` is the name or URI
  the host gave and ``tool`` the upstream's own; a list request, answered from every
  server, is ``listed`` (its upstream requests carry the key as their ``call_id``);
- ``proxy_relayed``: an upstream notification passed on to the host of the call it came
  during (progress, with the upstream token and the host's; a log message), or a log
  message of no call to each host that set a level (``key`` empty);
- ``proxy_ask``: what an upstream asked during a host's call (sampling, elicitation) and
  who answered: the host (the proxy's request to it, its id, the host's answer; for a
  2026-07-28 host the ``input_required`` round), or the proxy's own settings (why);
- ``proxy_task``: a host's task (``tasks.py``): the proxy's task id the host was given
  and the (server, connection, upstream task id) it stands for, with the key of the host's
  ``tools/call`` that created it; its ``tasks/*`` requests are ``proxy_host`` /
  ``proxy_route`` as any request's, the route naming the host's task id (``alias``) and the
  upstream's (``tool``); the revision its host spoke (``host_version``) tells a 2025 host's
  task from a 2026-07-28 host's (both ``host`` None on stdio);
- ``proxy_task_forgotten``: a host's task the proxy no longer keeps (it keeps at most 1,000
  of each kind, the oldest forgotten first; a passed-through task whose server restarted is
  lost): from then on its id is unknown and no ``tasks/list`` lists it;
- ``proxy_task_status``: an upstream ``notifications/tasks/status`` passed on to the host
  that owns the task, the task id mapped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from ..events import Event

__all__ = [
    "HOST_CALL_ID_KEY",
    "IN",
    "OUT",
    "ProxyAsk",
    "ProxyEnd",
    "ProxyHostMessage",
    "ProxyOffer",
    "ProxyRelayed",
    "ProxyRoute",
    "ProxyStart",
    "ProxyTask",
    "ProxyTaskAbandoned",
    "ProxyTaskForgotten",
    "ProxyTaskStatus",
]

HOST_CALL_ID_KEY: Final = "io.toolrelay/call_id"
"""Where a host may put its own id for a call, in ``params._meta``: recorded, so a host's
log can be joined with the transcript (a convention of toolrelay's)."""
IN: Final = "in"
OUT: Final = "out"


@dataclass(slots=True, kw_only=True)
class ProxyStart(Event):
    kind: ClassVar[str] = "proxy_start"
    name: str
    transport: str
    """``stdio`` or the Streamable HTTP endpoint URL hosts reach the proxy at."""
    servers: list[str]


@dataclass(slots=True, kw_only=True)
class ProxyEnd(Event):
    kind: ClassVar[str] = "proxy_end"
    reason: str


@dataclass(slots=True, kw_only=True)
class ProxyOffer(Event):
    kind: ClassVar[str] = "proxy_offer"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"names"})
    reason: str
    routes: dict[str, list[str]]
    """Alias → [server, tool] of every tool offered to hosts."""
    withheld: list[dict[str, str]] = field(default_factory=list)
    names: dict[str, Any] | None = None
    """How hosts name prompts and URIs: ``uri_prefixes`` (server → the prefix of its URIs)
    and ``prompts`` (alias → [server, prompt]), ``names.py``; None before features existed."""


@dataclass(slots=True, kw_only=True)
class ProxyHostMessage(Event):
    kind: ClassVar[str] = "proxy_host"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"host_call_id", "host", "round", "exchange"})
    direction: str
    """``in`` (host → proxy) or ``out`` (proxy → host)."""
    key: str
    """The proxy's own id of the host request (unique in the run, whichever host sent it)."""
    host_id: int | str | None
    method: str | None
    message: dict[str, Any]
    protocol_version: str | None = None
    host_call_id: str | None = None
    host: int | None = None
    """The host's HTTP session number (``proxy_wire``'s); None on stdio or for a 2026-07-28 host."""
    round: int | None = None
    """A 2026-07-28 host's call: 0 for its first request, 1, 2, ... for each retry with the
    answers to what the upstream asked (``rounds.py``); all under the first request's key."""
    exchange: int | None = None
    """A 2026-07-28 HTTP host's: the number of the exchange (one POST and its answer) it
    crossed in, as ``proxy_wire`` has it (``RequestStream.exchange``); None otherwise."""


@dataclass(slots=True, kw_only=True)
class ProxyRoute(Event):
    kind: ClassVar[str] = "proxy_route"
    key: str
    host_id: int | str | None
    alias: str
    decision: str
    """``forwarded`` (answered upstream), ``failed`` (sent, no answer came: the reason says
    why), ``denied`` (by policy), ``withheld`` (not offered), ``unknown`` (no such tool,
    prompt or URI), ``listed`` (a list request, answered from every server)."""
    server: str | None = None
    tool: str | None = None
    connection: int | None = None
    mcp_id: int | str | None = None
    """The upstream request's JSON-RPC id on that connection (None: none was sent)."""
    reason: str = ""


@dataclass(slots=True, kw_only=True)
class ProxyRelayed(Event):
    kind: ClassVar[str] = "proxy_relayed"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"upstream_token", "host_token", "to_host"})
    key: str
    host_id: int | str | None
    server: str
    method: str
    upstream: dict[str, Any]
    """The notification as the upstream sent it."""
    host: dict[str, Any]
    """The params the host was sent."""
    upstream_token: Any = None
    host_token: Any = None
    to_host: int | None = None
    """The HTTP host's session number (None: the stdio host, or a 2026-07-28 one)."""


@dataclass(slots=True, kw_only=True)
class ProxyAsk(Event):
    kind: ClassVar[str] = "proxy_ask"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"host_request_id", "host_answer", "round",
                                                           "task_id"})
    key: str
    """The proxy's key of the host call the upstream asked during (empty: none, see ``task_id``)."""
    host_id: int | str | None
    server: str
    upstream_id: int | str | None
    """The upstream server's id of its request (2026-07-28 upstream: its input key)."""
    method: str
    answered_by: str
    """``host`` (passed on to the host, which answered), ``proxy`` (its own settings)."""
    outcome: str
    """What the upstream is answered: ``accept``/``decline``/``cancel`` (elicitation),
    ``sampled``, ``refused`` (an error), or ``host_left``."""
    reason: str = ""
    host_request_id: int | str | None = None
    """The proxy's request id to the host (2025 host); for 2026-07-28 the input key."""
    host_answer: dict[str, Any] | None = None
    """The host's answer as received (its result or its error)."""
    round: str | None = None
    """2026-07-28 host: the ``requestState`` of the input_required round it was asked in."""
    task_id: str | None = None
    """Asked during a host's task while no request of the host's about it was pending: the
    proxy's id of that task (``key`` empty; asked of the host as no request's)."""


@dataclass(slots=True, kw_only=True)
class ProxyTask(Event):
    kind: ClassVar[str] = "proxy_task"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"host_version"})
    key: str
    """The proxy's key of the host ``tools/call`` that created the task."""
    task_id: str
    """The proxy's own id of the task: the one the host was given (and names it by)."""
    server: str
    connection: int
    upstream_task_id: str
    """The upstream server's id of the task (two servers may both say ``task-1``)."""
    host: int | None = None
    """The HTTP host's session number that owns it (None: the stdio host, or a 2026-07-28 host)."""
    host_version: str | None = None
    """The revision its host spoke when it created the task (``2025-11-25``, or ``2026-07-28``:
    a host without a session, its task id all that names it), so ``host`` None is told apart;
    None in transcripts older than it (``verify`` then reads the era off the creating call)."""


@dataclass(slots=True, kw_only=True)
class ProxyTaskAbandoned(Event):
    """A bridged task the proxy cancelled upstream itself: its host did not answer what the
    task asked within ``--input-wait``, or its 2025 host's session ended (``task_bridge.py``)."""

    kind: ClassVar[str] = "proxy_task_abandoned"
    task_id: str
    server: str
    connection: int
    upstream_task_id: str
    reason: str
    mcp_id: Any = None
    """The id of the upstream ``tasks/cancel`` sent for it (None: the upstream did not answer one)."""
    outcome: str = "cancelled"
    """``cancelled`` (the upstream acknowledged the cancel), ``ended`` (it refused it, the task
    having ended: the host is shown that end), ``refused`` (refused, no end seen) or
    ``unanswered``."""
    declined: list[Any] = field(default_factory=list)
    """The upstream ids of the requests of a 2025 server's task the proxy answered itself
    before the cancel (an elicitation ``cancel``, anything else an error)."""


@dataclass(slots=True, kw_only=True)
class ProxyTaskForgotten(Event):
    """A host's task the proxy stopped keeping (``tasks.py``, ``task_bridge.py``)."""

    kind: ClassVar[str] = "proxy_task_forgotten"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"kept"})
    task_id: str
    reason: str
    kept: int | None = None
    """The most tasks of its kind the proxy keeps, when that is why (None: its server restarted)."""


@dataclass(slots=True, kw_only=True)
class ProxyTaskStatus(Event):
    kind: ClassVar[str] = "proxy_task_status"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"mcp_id"})
    task_id: str
    server: str
    connection: int
    upstream: dict[str, Any]
    """The notification as the upstream sent it; a bridged task's (``mcp_id``): the upstream
    ``tasks/get`` answer whose state it tells."""
    host: dict[str, Any]
    """The params the host was sent (its task id the proxy's)."""
    to_host: int | None = None
    mcp_id: Any = None
    """A bridged task's (``task_bridge.py``): the id of the upstream ``tasks/get`` whose
    changed state the host is told (None: an upstream notification passed on)."""
