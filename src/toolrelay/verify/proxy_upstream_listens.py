"""Verify that a proxy kept following, upstream, the resources it named on a 2026-07-28
server's ``subscriptions/listen`` requests (``proxy/followed.py``, ``client/subscriptions.py``).

A 2026-07-28 server has no ``resources/subscribe``: the proxy names the URIs hosts follow
in its listen request's ``resourceSubscriptions``, and that filter only grows (there is no
way to stop following one URI). ``upstream_listens_kept`` (correlation), per server whose
listen requests named a URI: every listen request to it names every URI an earlier one
named, on its connection or an earlier one; so a restarted server that was not listened to
again for what hosts follow is caught.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..protocol.listen import LISTEN, named_uris
from .verdict import Finding

__all__ = ["upstream_listen_findings"]

Event = dict[str, Any]


@dataclass(slots=True)
class _Server:
    named: list[str] = field(default_factory=list)
    """Every URI a listen request to it named, in order."""
    requests: list[Event] = field(default_factory=list)
    connections: set[Any] = field(default_factory=set)
    dropped: tuple[Event, list[str]] | None = None
    """The first listen request that left out URIs named before it, and those URIs."""


def _uris(event: Event) -> list[str]:
    return named_uris(((event.get("message") or {}).get("params") or {}).get("notifications"))


def _read(server: _Server, event: Event) -> None:
    uris = _uris(event)
    left_out = [uri for uri in server.named if uri not in uris]
    if left_out and server.dropped is None:
        server.dropped = (event, left_out)
    server.named += [uri for uri in uris if uri not in server.named]
    server.requests.append(event)
    server.connections.add(event.get("connection"))


def upstream_listen_findings(events: Iterable[Event]) -> list[Finding]:
    """One ``upstream_listens_kept`` finding per server whose listen requests named a URI."""
    servers: dict[Any, _Server] = {}
    for event in events:
        if event.get("kind") == "mcp_request" and (event.get("message") or {}).get("method") == LISTEN:
            _read(servers.setdefault(event.get("server"), _Server()), event)
    found: list[Finding] = []
    for name, server in servers.items():
        if not server.named:
            continue
        if server.dropped is not None:
            event, left_out = server.dropped
            where = f"server {name} connection {event.get('connection')}"
            said = (f"{where}: subscriptions/listen id {event.get('mcp_id')!r} leaves out "
                    f"{', '.join(left_out)}, which an earlier one named (no longer followed upstream)")
            found.append(_said(False, said, [event]))
        else:
            found.append(_said(True, f"server {name}: {len(server.requests)} subscriptions/listen request(s) "
                                     f"over {len(server.connections)} connection(s), each naming every URI "
                                     f"named before it ({', '.join(server.named)})", server.requests))
    return found


def _said(ok: bool, message: str, events: list[Event]) -> Finding:
    return Finding(link="correlation", ok=ok, check="upstream_listens_kept", message=message,
                   seqs=tuple(int(e["seq"]) for e in events if isinstance(e.get("seq"), int)))
