"""Verify what a proxy sent on 2026-07-28 hosts' ``subscriptions/listen`` requests.

Read from the host leg as recorded message by message (``proxy_wire``). ``listen_kept``
(correlation), per listen request that follows resources: its acknowledgement honours
only URIs the request named, and every ``notifications/resources/updated`` tagged with
its id (``_meta["io.modelcontextprotocol/subscriptionId"]``) names a URI that
acknowledgement honoured; so an update sent to a request that did not ask for it is
caught. Requests are told apart by host, exchange and id: 2026-07-28 HTTP exchanges share
host 0, each with its ``exchange`` number (``proxy/exchanges.py``), so two hosts' listen
requests of one id stay two (a transcript from before exchanges were numbered: one).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from ..protocol.listen import ACKNOWLEDGED, LISTEN, named_uris, subscription_id
from .verdict import Finding

__all__ = ["listen_findings"]

Event = dict[str, Any]
UPDATED: Final = "notifications/resources/updated"


@dataclass(slots=True)
class _Listen:
    asked: set[str] = field(default_factory=set)
    honoured: set[str] = field(default_factory=set)
    events: list[Event] = field(default_factory=list)
    told: list[tuple[str, Event]] = field(default_factory=list)


def _uris(notifications: Any) -> set[str]:
    return set(named_uris(notifications))


def _gather(events: Iterable[Event]) -> dict[tuple[Any, Any, str], _Listen]:
    listens: dict[tuple[Any, Any, str], _Listen] = {}
    for event in events:
        if event.get("kind") != "proxy_wire":
            continue
        message = event.get("message") or {}
        method, params = message.get("method"), message.get("params") or {}
        if method == LISTEN and event.get("direction") == "in" and "id" in message:
            listen = listens.setdefault((event.get("host"), event.get("exchange"), repr(message["id"])),
                                        _Listen())
            listen.asked |= _uris(params.get("notifications"))
            listen.events.append(event)
        elif method in (ACKNOWLEDGED, UPDATED) and event.get("direction") == "out":
            tagged = subscription_id(message)
            if tagged is None:
                continue
            listen = listens.setdefault((event.get("host"), event.get("exchange"), repr(tagged)), _Listen())
            listen.events.append(event)
            if method == ACKNOWLEDGED:
                listen.honoured |= _uris(params.get("notifications"))
            elif isinstance(params.get("uri"), str):
                listen.told.append((params["uri"], event))
    return listens


def listen_findings(events: Iterable[Event]) -> list[Finding]:
    """One ``listen_kept`` finding per listen request that follows resources or was told an update."""
    found: list[Finding] = []
    for (host, exchange, listen_id), listen in _gather(events).items():
        if not listen.honoured and not listen.told:
            continue
        where = f"host {host}, exchange {exchange}" if exchange is not None else f"host {host}"
        name = f"listen request {listen_id} ({where})"
        unasked = sorted(listen.honoured - listen.asked)
        wrong = [(uri, event) for uri, event in listen.told if uri not in listen.honoured]
        if unasked:
            found.append(_said(False, f"{name}: acknowledged URIs it did not name: {', '.join(unasked)}",
                               listen.events))
        elif wrong:
            found.append(_said(False, f"{name}: told resources/updated of {wrong[0][0]}, a URI it did not "
                                      "listen for", [*listen.events[:1], wrong[0][1]]))
        else:
            found.append(_said(True, f"{name}: follows {len(listen.honoured)} resource(s), told "
                                     f"{len(listen.told)} update(s) of them only", listen.events))
    return found


def _said(ok: bool, message: str, events: list[Event]) -> Finding:
    return Finding(link="correlation", ok=ok, check="listen_kept", message=message,
                   seqs=tuple(int(e["seq"]) for e in events if isinstance(e.get("seq"), int)))
