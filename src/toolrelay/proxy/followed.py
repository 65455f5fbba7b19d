"""The resources 2026-07-28 hosts follow on their listen requests, followed upstream.

A 2026-07-28 host names the URIs it wants updates of in its ``subscriptions/listen``
filter (``resourceSubscriptions``, the proxy's URIs: ``toolrelay://SERVER/...``). The
proxy honours a URI that names a server of its config that lets clients subscribe
(``resources.subscribe``), and follows it there once: ``resources/subscribe`` for a 2025
server, its own listen filter for a 2026-07-28 one (``client.offers.subscribe_resource``).
The server's ``notifications/resources/updated`` comes back through ``features.py``
(its URI as hosts see it), and the listen hub sends it to the requests that named that
URI (``server/listen_hub.py``). An upstream subscription stays until the proxy stops: an
update no open request asked for is dropped by the hub. A subscription the server
refuses is a notice.
"""

from __future__ import annotations

import asyncio

from ..client.offers import subscribe_resource, subscribes
from ..errors import ToolrelayError
from ..events import EventStream, Notice
from ..relay.catalog import Catalog
from .names import HostNames

__all__ = ["ListenFollower"]


class ListenFollower:
    """Which host URIs can be followed, and their upstream subscriptions (once each)."""

    def __init__(self, catalog: Catalog, names: HostNames, events: EventStream) -> None:
        self.catalog = catalog
        self.names = names
        self.events = events
        self._followed: dict[tuple[str, str], asyncio.Task[None]] = {}

    def follows(self, host_uri: str) -> bool:
        """Whether ``host_uri`` names a resource of a server that tells its updates."""
        found = self.names.upstream_uri(host_uri)
        if found is None or found[0] not in self.catalog.available:
            return False
        return subscribes(self.catalog.connections[found[0]])

    def follow(self, host_uris: list[str]) -> None:
        """Subscribe upstream to each of ``host_uris`` not followed yet (in the background:
        a listen request is acknowledged at once)."""
        for host_uri in host_uris:
            found = self.names.upstream_uri(host_uri)
            if found is None or found in self._followed:
                continue
            self._followed[found] = asyncio.ensure_future(self._subscribe(*found))

    async def _subscribe(self, server: str, uri: str) -> None:
        try:
            await subscribe_resource(self.catalog.connections[server], uri)
        except ToolrelayError as exc:
            self._followed.pop((server, uri), None)  # a later listen request tries again
            self.events.emit(Notice(level="warning", server=server,
                                    text=f"could not follow {uri} on server {server} for a host's listen "
                                         f"request: {exc}"))
