"""Verify which resource updates a proxy sent to each 2025 host: those it subscribed to only.

Read from the host leg as recorded message by message (``proxy_wire``), host by host (the
stdio host, each HTTP session by its number). ``updates_subscribed`` (correlation), per
host that subscribed to a resource or was told an update: every
``notifications/resources/updated`` it was sent (not one of a 2026-07-28 listen request's,
which carry their request's id and are ``listen_kept``'s) names a URI it subscribed to
with ``resources/subscribe`` and had not left with ``resources/unsubscribe``. A URI counts
as subscribed from the host's request on (the upstream may tell of a change before the
proxy answers), unless that request was answered with an error, and as left once the
unsubscribe is answered. So an update sent to a host that never asked for it (or to the
other of two hosts) is caught. And each update rests on one an upstream sent: a host is told
of a URI no more often than its server told the proxy of it before (the server's URI under
the prefix the proxy's offer recorded), so an update the proxy made up is caught too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from ..protocol.listen import subscription_id
from .verdict import Finding

__all__ = ["subscription_findings"]

Event = dict[str, Any]
UPDATED: Final = "notifications/resources/updated"
SUBSCRIBE: Final = "resources/subscribe"
UNSUBSCRIBE: Final = "resources/unsubscribe"


@dataclass(slots=True)
class _Host:
    subscribed: set[str] = field(default_factory=set)
    asked: dict[str, tuple[str, str]] = field(default_factory=dict)
    """An open request's id → (its method, its URI)."""
    told: int = 0
    events: list[Event] = field(default_factory=list)
    wrong: tuple[str, Event] | None = None
    """The first update of a URI the host had not subscribed to, and its event."""
    heard: dict[str, int] = field(default_factory=dict)
    """Updates told the host, by URI."""
    unfounded: tuple[str, Event] | None = None
    """The first update no upstream update of its URI stands for, and its event."""


@dataclass(slots=True)
class _Upstream:
    """What the servers told the proxy: updates by the URI hosts see (``prefixes``'s)."""

    prefixes: dict[str, str] = field(default_factory=dict)
    told: dict[str, int] = field(default_factory=dict)
    flooded: set[str] = field(default_factory=set)
    """The prefixes of servers some of whose updates went unrecorded (``mcp_dropped``)."""

    def read(self, event: Event) -> None:
        kind = event.get("kind")
        if kind == "proxy_offer":
            names = event.get("names") or {}
            self.prefixes = dict(names.get("uri_prefixes") or {}) or self.prefixes
        elif kind == "mcp_notification" and event.get("method") == UPDATED:
            uri = ((event.get("message") or {}).get("params") or {}).get("uri")
            prefix = self.prefixes.get(str(event.get("server")))
            if isinstance(uri, str) and prefix is not None:
                self.told[prefix + uri] = self.told.get(prefix + uri, 0) + 1
        elif kind == "mcp_dropped" and UPDATED in (event.get("methods") or {}):
            self.flooded.add(self.prefixes.get(str(event.get("server")), ""))  # not all of them recorded

    def stands_for(self, uri: str, times: int) -> bool:
        """Whether ``times`` updates of ``uri`` rest on the server's (all, or some unrecorded)."""
        return times <= self.told.get(uri, 0) or any(uri.startswith(p) for p in self.flooded if p)


def _id(value: Any) -> str:
    return f"{type(value).__name__}:{value}"


def _read(host: _Host, event: Event, upstream: _Upstream) -> None:
    message = event.get("message") or {}
    method, params = message.get("method"), message.get("params") or {}
    uri = params.get("uri") if isinstance(params, dict) else None
    incoming = event.get("direction") == "in"
    if incoming and method in (SUBSCRIBE, UNSUBSCRIBE) and "id" in message and isinstance(uri, str):
        host.asked[_id(message["id"])] = (method, uri)
        host.events.append(event)
        if method == SUBSCRIBE:
            host.subscribed.add(uri)
    elif not incoming and method is None and _id(message.get("id")) in host.asked:
        asked, named = host.asked.pop(_id(message.get("id")))
        host.events.append(event)
        if (asked == SUBSCRIBE and "error" in message) or (asked == UNSUBSCRIBE and "result" in message):
            host.subscribed.discard(named)
    elif not incoming and method == UPDATED and subscription_id(message) is None and isinstance(uri, str):
        host.told += 1
        host.events.append(event)
        if uri not in host.subscribed and host.wrong is None:
            host.wrong = (uri, event)
        host.heard[uri] = host.heard.get(uri, 0) + 1
        if not upstream.stands_for(uri, host.heard[uri]) and host.unfounded is None:
            host.unfounded = (uri, event)


def subscription_findings(events: Iterable[Event]) -> list[Finding]:
    """One ``updates_subscribed`` finding per host that subscribed to a resource or was told an update."""
    hosts: dict[Any, _Host] = {}
    upstream = _Upstream()
    for event in events:
        if event.get("kind") == "proxy_wire" and event.get("exchange") is None:  # 2026-07-28 HTTP: no session
            _read(hosts.setdefault(event.get("host"), _Host()), event, upstream)
        else:
            upstream.read(event)
    found: list[Finding] = []
    for number, host in hosts.items():
        if not host.events:
            continue
        name = "the stdio host" if number is None else f"HTTP host {number}"
        if host.wrong is not None:
            uri, event = host.wrong
            found.append(_said(False, f"{name}: told resources/updated of {uri}, which it had not subscribed "
                                      "to", [*host.events[:1], event]))
        elif host.unfounded is not None:
            uri, event = host.unfounded
            found.append(_said(False, f"{name}: told resources/updated of {uri} with no update of it from "
                                      "its server before", [event]))
        else:
            found.append(_said(True, f"{name}: told {host.told} resource update(s), each of a resource it "
                                     "subscribed to", host.events))
    return found


def _said(ok: bool, message: str, events: list[Event]) -> Finding:
    return Finding(link="correlation", ok=ok, check="updates_subscribed", message=message,
                   seqs=tuple(int(e["seq"]) for e in events if isinstance(e.get("seq"), int)))
