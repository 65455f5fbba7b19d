"""``subscriptions/listen`` served (MCP 2026-07-28): the open listen requests, and what they hear.

A service whose lists change (the proxy, whose upstream servers' lists do) carries a
``ListenHub`` as ``listen_hub``; the 2026-07-28 side then declares ``listChanged`` for
what the hub offers and serves ``subscriptions/listen`` (HTTP: ``http_stateless.py``, a
POST whose SSE stream stays open; stdio: ``app.py``, a request left unanswered until the
client cancels it). Each open request first gets ``notifications/subscriptions/acknowledged``
with the subset of its filter honoured, then every notification the service publishes
that the filter asks for, each carrying the request's id under
``_meta["io.modelcontextprotocol/subscriptionId"]``.

Resource subscriptions (the filter's ``resourceSubscriptions``, URIs) are honoured for the
URIs the service ``follows`` (the proxy: a URI of an upstream server that lets clients
subscribe); those are acknowledged, handed to ``follow`` (the proxy subscribes upstream),
and ``notifications/resources/updated`` goes to each open request that named its URI,
to no other. A hub without ``follows`` honours none (left out of the acknowledgement, as
the revision lets a server say).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from ..protocol import jsonrpc
from ..protocol import mcp as m
from ..protocol.jsonrpc import JSONObject, Request, RequestId
from ..protocol.listen import ACKNOWLEDGED, SUBSCRIPTION_ID_KEY, honoured_filter

__all__ = ["FILTER_KEYS", "RESOURCE_SUBSCRIPTIONS", "ListenHub", "Listening"]

RESOURCE_SUBSCRIPTIONS: Final = "resourceSubscriptions"
"""The filter key naming the resource URIs a listen request follows."""

FILTER_KEYS: Final = {
    m.TOOLS_CHANGED: "toolsListChanged",
    m.PROMPTS_CHANGED: "promptsListChanged",
    m.RESOURCES_CHANGED: "resourcesListChanged",
}
"""Each list-change notification by the listen filter key that asks for it."""


@dataclass(slots=True, eq=False)
class Listening:
    """One open listen request: its id, what it asked and was granted, how it is sent to."""

    request_id: RequestId
    honoured: JSONObject
    send: Callable[[JSONObject], None]


class ListenHub:
    """The open listen requests of one service, told each change they asked for."""

    def __init__(self, offers: Mapping[str, bool], *, follows: Callable[[str], bool] | None = None,
                 follow: Callable[[list[str]], None] | None = None) -> None:
        """``offers``: the filter keys this service can honour (``toolsListChanged``, ...);
        ``follows``: whether the service can tell a resource URI's updates (None: it tells
        none); ``follow``: told the URIs a listen request was granted, as it opens."""
        self.offers = {key: True for key, offered in offers.items() if offered}
        self.follows = follows
        self.follow = follow
        self._open: dict[int, Listening] = {}
        self._numbers = itertools.count(1)

    @property
    def follows_resources(self) -> bool:
        """Whether resource subscriptions are honoured (``resources.subscribe`` is declared)."""
        return self.follows is not None

    def declares(self, feature: str) -> bool:
        """Whether the list of ``feature`` (``tools``, ``prompts``, ``resources``) is told."""
        return self.offers.get(f"{feature}ListChanged") is True

    def open(self, request: Request, send: Callable[[JSONObject], None]) -> int:
        """Acknowledge ``request`` (sent at once) and follow it; the number closes it."""
        wanted = (request.params or {}).get("notifications")
        asked = wanted if isinstance(wanted, dict) else {}
        honoured = honoured_filter(asked, self.offers)
        uris = self._followed(asked.get(RESOURCE_SUBSCRIPTIONS))
        if uris:
            honoured[RESOURCE_SUBSCRIPTIONS] = uris
        assert request.id is not None
        listening = Listening(request.id, honoured, send)
        number = next(self._numbers)
        self._open[number] = listening
        send(self._tagged(listening, ACKNOWLEDGED, {"notifications": honoured}))
        if uris and self.follow is not None:
            self.follow(uris)
        return number

    def _followed(self, asked: object) -> list[str]:
        """The URIs of a filter's ``resourceSubscriptions`` this hub honours, once each."""
        if self.follows is None or not isinstance(asked, list):
            return []
        wanted: Iterable[str] = dict.fromkeys(uri for uri in asked if isinstance(uri, str))
        return [uri for uri in wanted if self.follows(uri)]

    def close(self, number: int) -> None:
        self._open.pop(number, None)

    @property
    def listening(self) -> int:
        """How many listen requests are open."""
        return len(self._open)

    def publish(self, method: str, params: JSONObject | None = None) -> None:
        """Send ``method`` to every open request whose filter asks for it (a resource's
        update: to those that named its URI)."""
        for listening in list(self._open.values()):
            if self._asked(listening, method, params):
                try:
                    listening.send(self._tagged(listening, method, params))
                except (ConnectionError, RuntimeError):  # that client went away: its own path closes it
                    continue

    @staticmethod
    def _asked(listening: Listening, method: str, params: JSONObject | None) -> bool:
        if method == m.RESOURCE_UPDATED:
            followed = listening.honoured.get(RESOURCE_SUBSCRIPTIONS)
            return isinstance(followed, list) and (params or {}).get("uri") in followed
        key = FILTER_KEYS.get(method)
        return key is not None and listening.honoured.get(key) is True

    @staticmethod
    def _tagged(listening: Listening, method: str, params: JSONObject | None) -> JSONObject:
        body = dict(params or {})
        meta = body.get("_meta")
        body["_meta"] = {**(meta if isinstance(meta, dict) else {}),
                         SUBSCRIPTION_ID_KEY: listening.request_id}
        return jsonrpc.notification(method, body)
