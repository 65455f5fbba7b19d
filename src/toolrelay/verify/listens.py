"""Correlation of ``subscriptions/listen`` (MCP 2026-07-28): the requests toolrelay's client
leaves open so a server can tell it what changed.

A listen request is never answered while it serves. It ends by our
``notifications/cancelled`` (a new filter replaced it, or the connection closed), by the
server's answer, or with its connection when the server went away unasked (a crash). One
that ends none of these ways was dropped while the connection went on: nothing more of
that server was heard, so it is flagged. Each notification tagged with a subscription id
(``_meta["io.modelcontextprotocol/subscriptionId"]``) must name a listen request of its own
connection sent before it, and belongs to no model call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import methodcaller
from typing import Any

from ..events import MCP_NOTIFICATION, MCP_REQUEST, MCP_RESPONSE
from ..protocol.listen import ACKNOWLEDGED, LISTEN, subscription_id
from .evidence import seqs_of
from .facts import RunFacts
from .record import RunRecord
from .verdict import Finding
from .walked import REQUEST_METHODS, kept

__all__ = ["check_listens"]

_CANCELLED = "notifications/cancelled"
_METHOD = methodcaller("get", "method")
_TOLERATED_ENDINGS = frozenset({"aborted", "timeout", "error", None})
Event = dict[str, Any]


@dataclass(slots=True)
class _Listens:
    """One connection's listen requests (by id) and what ended or acknowledged them."""

    requests: dict[Any, Event] = field(default_factory=dict)
    ended: set[Any] = field(default_factory=set)
    acknowledged: set[Any] = field(default_factory=set)
    heard: int = 0


def check_listens(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """correlation: each listen request ended properly, each of its notifications on it."""
    if not run.of_kind(MCP_NOTIFICATION) and not _listened(run, facts):
        return []  # no listen request and nothing a server notified: nothing to follow
    sessions: dict[tuple[Any, Any], _Listens] = {}
    findings: list[Finding] = []
    for event in run.mcp:
        key = (event.get("server"), event.get("connection"))
        session = sessions.get(key)
        if session is None:  # not setdefault: that would make a _Listens for every event
            session = sessions[key] = _Listens()
        problem = _follow(session, event)
        if problem is not None:
            findings.append(problem)
    crashed = {(e.get("server"), e.get("connection")) for e in run.exits if e.get("expected") is False}
    for key, session in sessions.items():
        if session.requests:
            findings.extend(_ends(key, session, crashed, run.status))
    return findings


def _listened(run: RunRecord, facts: RunFacts) -> bool:
    """Whether a listen request is recorded: as check_mcp_pairs' walk found (walked.py), else
    looked for in C."""
    methods = kept(facts, REQUEST_METHODS)
    return LISTEN in methods if methods is not None else LISTEN in map(_METHOD, run.of_kind(MCP_REQUEST))


def _follow(session: _Listens, event: Event) -> Finding | None:
    kind, method, message = event["kind"], event.get("method"), event.get("message")
    if kind == MCP_REQUEST and method == LISTEN:
        session.requests[event.get("mcp_id")] = event
    elif kind == MCP_RESPONSE and event.get("mcp_id") in session.requests:
        session.ended.add(event.get("mcp_id"))
    elif kind == MCP_NOTIFICATION and method == _CANCELLED and event.get("direction") == "out":
        params = message.get("params") if isinstance(message, dict) else None
        cancelled = params.get("requestId") if isinstance(params, dict) else None
        if isinstance(cancelled, (int, str)):
            session.ended.add(cancelled)
    elif kind == MCP_NOTIFICATION and event.get("direction") == "in" and isinstance(message, dict):
        listen_id = subscription_id(message)
        if listen_id is None:
            return None
        if listen_id not in session.requests:
            return _finding(False, f"{method} from {event.get('server')} names subscription {listen_id!r}, "
                                   "which no subscriptions/listen request of its connection opened", event)
        if event.get("call_id") is not None:
            return _finding(False, f"{method} of subscription {listen_id} is recorded as part of call "
                                   f"{event['call_id']}: it belongs to the server, not to a call", event)
        if method == ACKNOWLEDGED:
            session.acknowledged.add(listen_id)
        else:
            session.heard += 1
    return None


def _ends(
    key: tuple[Any, Any], session: _Listens, crashed: set[tuple[Any, Any]], status: Any
) -> list[Finding]:
    server, connection = key
    findings: list[Finding] = []
    for listen_id, request in session.requests.items():
        if listen_id in session.ended or key in crashed or status in _TOLERATED_ENDINGS:
            continue
        findings.append(_finding(False, f"subscriptions/listen mcp id {listen_id} on {server} (connection "
                                        f"{connection}) was dropped while the connection went on: neither "
                                        "answered nor cancelled", request))
    if not findings:
        findings.append(_finding(True, f"{server} (connection {connection}): {len(session.requests)} "
                                       f"subscriptions/listen request(s), {len(session.acknowledged)} "
                                       f"acknowledged, {session.heard} notification(s) heard on them, "
                                       "each ended by its cancellation, its answer or its server's exit"))
    return findings


def _finding(ok: bool, message: str, *events: Event) -> Finding:
    return Finding(link="correlation", ok=ok, check="listens", message=message, seqs=seqs_of(*events))
