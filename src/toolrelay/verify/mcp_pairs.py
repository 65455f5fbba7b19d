"""The walk over a run's MCP events that pairs each session's requests and answers
(``correlation.check_mcp_pairs`` judges what it found), and picks out the tools/list
events the listings are made of (``facts``): one walk over the run's largest kind of
event for both, each event fetched from memory once (``RunFacts`` keeps what it found in
``walked``, under ``walked.MCP_WALK``; a check run on its own walks again).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from ..events import MCP_NOTIFICATION, MCP_REPLY, MCP_REQUEST, MCP_RESPONSE, MCP_SERVER_REQUEST
from .evidence import seqs_of
from .verdict import Finding

__all__ = ["LISTED", "MCP_WALK", "McpWalk", "Session", "broken_pair", "walk_mcp"]

_PAIRED_KINDS = frozenset({MCP_REQUEST, MCP_RESPONSE, MCP_SERVER_REQUEST, MCP_REPLY})
_NAMED_KINDS = frozenset({MCP_REQUEST, MCP_NOTIFICATION, MCP_SERVER_REQUEST})
"""Kinds whose message carries the method the event records."""
_NO_SESSION: Final = object()
"""The server and connection before the first MCP event (no event's: they are JSON values)."""
LISTED: Final = "tools/list"
MCP_WALK: Final = "mcp_walk"
"""Where ``RunFacts.walked`` keeps the walk made with the listings (``facts._listings``), for
``check_mcp_pairs`` (``walked.py`` names it too)."""


@dataclass(slots=True)
class Session:
    server: Any
    connection: Any
    open: dict[Any, dict[str, Any]] = field(default_factory=dict)
    seen: set[Any] = field(default_factory=set)
    answered: int = 0
    cancelled: set[Any] = field(default_factory=set)
    exited: bool = False

    @property
    def name(self) -> str:
        return f"{self.server} (connection {self.connection})"


@dataclass(slots=True)
class McpWalk:
    """What the walk found: each session (by server and connection), the pairing faults in
    order, the requests' methods (None: a method not a string), the tools/list events."""

    sessions: dict[tuple[Any, Any], Session]
    findings: list[Finding]
    methods: set[str] | None
    listed: list[dict[str, Any]]


def broken_pair(
    message: str,
    *events: dict[str, Any] | None,
    mcp_id: Any = None,
    server: Any = None,
    call_id: str | None = None,
) -> Finding:
    return Finding(
        link="correlation",
        ok=False,
        check="mcp_pairs",
        message=message,
        mcp_id=mcp_id,
        server=server,
        call_id=call_id,
        seqs=seqs_of(*events),
    )


def walk_mcp(mcp: list[dict[str, Any]]) -> McpWalk:
    """Pair the MCP events of each session, in order (what check_mcp_pairs judges)."""
    sessions: dict[tuple[Any, Any], Session] = {}
    findings: list[Finding] = []
    listed: list[dict[str, Any]] = []
    server: Any = _NO_SESSION
    connection: Any = _NO_SESSION
    session = Session(None, None)
    opened, seen = session.open, session.seen  # the session's, at hand for the common events
    methods: set[str] | None = set()  # the requests' methods, kept for check_listens (walked.py)
    for event in mcp:
        if event.get("method") == LISTED:
            listed.append(event)
        if event.get("server") != server or event.get("connection") != connection:  # most: the last one's
            server, connection = event.get("server"), event.get("connection")
            found = sessions.get((server, connection))
            if found is None:  # not setdefault: that would make a Session for every event
                found = sessions[(server, connection)] = Session(server, connection)
            session = found
            opened, seen = session.open, session.seen
        # the two common events, as their message says, paired here (verify's speed: no call for
        # each of a run's MCP events): a JSON-RPC 2.0 request with a new id, an answer to an open
        # request of its session; anything else is _pair's
        message = event.get("message")
        if type(message) is dict and event.get("mcp_id") == (mcp_id := message.get("id")):
            kind = event["kind"]
            if kind == MCP_RESPONSE:
                if opened.pop(mcp_id, None) is not None:
                    session.answered += 1
                    continue
            elif (kind == MCP_REQUEST and message.get("jsonrpc") == "2.0"
                  and message.get("method") == (method := event.get("method"))
                  and mcp_id not in seen):
                seen.add(mcp_id)
                opened[mcp_id] = event
                if methods is not None:
                    if type(method) is str:
                        methods.add(method)
                    else:
                        methods = None  # nothing to keep (_with_method)
                continue
        if methods is not None and event["kind"] == MCP_REQUEST:
            methods = _with_method(methods, event.get("method"))
        problem = _pair(session, event)
        if problem is not None:
            findings.append(problem)
    return McpWalk(sessions, findings, methods, listed)


def _with_method(methods: set[str], method: Any) -> set[str] | None:
    """``methods`` with ``method`` added; None (nothing to keep) for a method not a string."""
    if type(method) is not str:
        return None
    methods.add(method)
    return methods


def _pair(session: Session, event: dict[str, Any]) -> Finding | None:
    kind = event["kind"]
    message: dict[str, Any] = event["message"] if isinstance(event.get("message"), dict) else {}
    mcp_id = message.get("id")
    if kind == MCP_RESPONSE and event.get("mcp_id") == mcp_id and mcp_id in session.open:
        del session.open[mcp_id]  # the common answer, to a request of its session (verify's speed)
        session.answered += 1
        return None
    unlike = _unlike_its_event(kind, event, message)
    if unlike is not None:
        return broken_pair(f"the {kind} event on {session.name} {unlike}", event, mcp_id=event.get("mcp_id"),
                       server=session.server)
    if kind in _PAIRED_KINDS and event.get("mcp_id") != mcp_id:
        return broken_pair(
            f"the {kind} event on {session.name} records mcp id {event.get('mcp_id')}, its message "
            f"has id {mcp_id}",
            event,
            mcp_id=mcp_id,
            server=session.server,
        )
    if kind == MCP_REQUEST:
        if mcp_id in session.seen:
            return broken_pair(
                f"mcp id {mcp_id} is used twice on {session.name}: ids must be unique in a session",
                event,
                mcp_id=mcp_id,
                server=session.server,
            )
        session.seen.add(mcp_id)
        session.open[mcp_id] = event
    elif kind == MCP_RESPONSE:
        request = session.open.pop(mcp_id, None)
        if request is None:
            why = "answers an id already answered" if mcp_id in session.seen else "answers no request"
            return broken_pair(
                f"the response with mcp id {mcp_id} on {session.name} {why}",
                event,
                mcp_id=mcp_id,
                server=session.server,
                call_id=event.get("call_id"),
            )
        session.answered += 1
    elif kind == MCP_NOTIFICATION and message.get("method") == "notifications/cancelled":
        params = message.get("params")
        if isinstance(params, dict):
            session.cancelled.add(params.get("requestId"))
    return None


def _unlike_its_event(kind: str, event: dict[str, Any], message: dict[str, Any]) -> str | None:
    """How the recorded message departs from the event that records it, if it does."""
    # An answer to our request is recorded as the server sent it, malformed or not: whether
    # it is a JSON-RPC response is judged (and tied to the call's outcome) at server_check.
    if message.get("jsonrpc") != "2.0" and kind != MCP_RESPONSE:
        return (f"(mcp id {event.get('mcp_id')}) holds a message that is not JSON-RPC 2.0 "
                f"(jsonrpc: {message.get('jsonrpc')!r})")
    if kind in _NAMED_KINDS and message.get("method") != event.get("method"):
        return f"records method {event.get('method')}, its message has method {message.get('method')!r}"
    return None


