"""The resources hosts follow, each followed upstream once while any host follows it.

Two kinds of host follow a resource (a URI as hosts see it, ``toolrelay://SERVER/...``, of a
server that lets clients subscribe, ``resources.subscribe``):

- a 2025 host's session, with ``resources/subscribe`` (``resources/unsubscribe`` ends it);
  it is told ``notifications/resources/updated`` of the URIs it subscribed to and no other
  (``wants``: the spec sends updates for resources the client subscribed to);
- a 2026-07-28 host's listen request naming the URI in its ``resourceSubscriptions``
  filter; the listen hub sends each update to the requests that named its URI
  (``server/listen_hub.py``). The hub does not say when a listen request closes, so a URI
  a listen request named stays followed upstream until the proxy stops (an update no open
  request asked for is dropped by the hub).

Upstream, each (server, URI) is followed once: the first host to follow it has it
subscribed there (``resources/subscribe`` for a 2025 server, recorded as the host's
request's upstream leg by ``features.py``; the listen filter for a 2026-07-28 one,
``client.offers.subscribe_resource``), later ones share it, and when the last host
following it leaves, it is unsubscribed there (``resources/unsubscribe``). A 2026-07-28
server has no way to stop following one URI (its listen filter only grows): its updates
are then dropped at the proxy, where no host wants them. A session that ended (DELETE, or
evicted) is let go at the next subscription change or update, as if it had unsubscribed.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Final

from ..client.offers import subscribe_resource, subscribes
from ..errors import ToolrelayError
from ..events import EventStream, Notice
from ..protocol import mcp as m
from ..protocol.versions import MODERN_VERSIONS
from ..relay.catalog import Catalog
from ..server.app import ServerSession
from .names import HostNames

__all__ = ["SHARED", "Following"]

Followed = tuple[str, str]
"""(server, the upstream's own URI)."""
SHARED: Final = "shared"
"""The route decision of a host's subscribe or unsubscribe that sent nothing upstream."""


class Following:
    """Who follows each resource, and its upstream subscription (once each)."""

    def __init__(self, catalog: Catalog, names: HostNames, events: EventStream) -> None:
        self.catalog = catalog
        self.names = names
        self.events = events
        self._sessions: dict[Followed, set[ServerSession]] = {}
        self._listened: set[Followed] = set()
        self._upstream: dict[Followed, asyncio.Future[None]] = {}
        """Each upstream subscription made or being made (its future: done once it is)."""
        self._leaving: set[asyncio.Task[None]] = set()
        """Upstream unsubscriptions under way (held: a task nobody holds may be collected)."""

    # -- 2026-07-28 hosts' listen requests -------------------------------------------

    def follows(self, host_uri: str) -> bool:
        """Whether ``host_uri`` names a resource of a server that tells its updates."""
        found = self.names.upstream_uri(host_uri)
        if found is None or found[0] not in self.catalog.available:
            return False
        return subscribes(self.catalog.connections[found[0]])

    def follow(self, host_uris: list[str]) -> None:
        """Follow each of ``host_uris`` for a listen request: subscribed upstream unless it is
        already (in the background: a listen request is acknowledged at once)."""
        for host_uri in host_uris:
            found = self.names.upstream_uri(host_uri)
            if found is None:
                continue
            self._listened.add(found)
            if found not in self._upstream:
                self._upstream[found] = asyncio.ensure_future(self._listen_subscribe(*found))

    async def _listen_subscribe(self, server: str, uri: str) -> None:
        try:
            await subscribe_resource(self.catalog.connections[server], uri)
        except ToolrelayError as exc:
            self._upstream.pop((server, uri), None)  # a later listen request tries again
            self._listened.discard((server, uri))
            self.events.emit(Notice(level="warning", server=server,
                                    text=f"could not follow {uri} on server {server} for a host's listen "
                                         f"request: {exc}"))

    # -- 2025 hosts' subscriptions -----------------------------------------------------

    def upstream_of(self, followed: Followed) -> asyncio.Future[None] | None:
        """The upstream subscription of ``followed``, made or being made (None: there is none)."""
        return self._upstream.get(followed)

    def hold(self, session: ServerSession, followed: Followed) -> asyncio.Future[None] | None:
        """``session`` follows ``followed`` from now on. None: nobody did, and the caller
        subscribes upstream (then says how it went: ``subscribed``); else the upstream
        subscription another host's request made, or is making."""
        self.sweep()
        self._sessions.setdefault(followed, set()).add(session)
        made = self._upstream.get(followed)
        if made is None:
            self._upstream[followed] = asyncio.get_running_loop().create_future()
        return made

    def subscribed(self, followed: Followed, error: BaseException | None) -> None:
        """How the upstream subscription ``hold`` left to its caller went (``error``: refused)."""
        made = self._upstream.get(followed)
        if error is not None:
            self._upstream.pop(followed, None)  # the next host to subscribe tries again
        if made is not None and not made.done():
            if error is not None:
                made.set_exception(error)
                made.exception()  # whoever shares it reads it; unread, it is not an error to log
            else:
                made.set_result(None)
        if error is None and not self._sessions.get(followed) and followed not in self._listened:
            self._let_go(followed)  # every host left while it was being made

    def release(self, session: ServerSession | None, followed: Followed) -> bool:
        """``session`` no longer follows ``followed``; whether the caller is to unsubscribe
        upstream (the last host following it left, and it was subscribed there)."""
        holders = self._sessions.get(followed, set())
        if session is not None:
            holders.discard(session)
        if holders or followed in self._listened:
            return False
        self._sessions.pop(followed, None)
        made = self._upstream.get(followed)
        if made is not None and not made.done():
            return False  # being made: let go once it is (``subscribed``)
        self._upstream.pop(followed, None)
        return made is not None and made.exception() is None

    def wants(self, session: ServerSession, host_uri: str) -> bool:
        """Whether ``session`` subscribed to ``host_uri`` (it is told its updates, and only it is)."""
        found = self.names.upstream_uri(host_uri)
        return found is not None and session in self._sessions.get(found, set())

    def sweep(self) -> None:
        """Let go of the sessions that ended; unsubscribe upstream what nobody follows now."""
        for followed, holders in list(self._sessions.items()):
            ended = {session for session in holders if session.peer.closed is not None}
            if not ended:
                continue
            holders -= ended
            if self.release(None, followed):
                self._let_go(followed)

    def _let_go(self, followed: Followed) -> None:
        """Unsubscribe upstream (in the background) what no host follows now."""
        self._upstream.pop(followed, None)
        leaving = asyncio.ensure_future(self._unsubscribe(*followed))
        self._leaving.add(leaving)
        leaving.add_done_callback(self._leaving.discard)

    async def _unsubscribe(self, server: str, uri: str) -> None:
        connection = self.catalog.connections[server]
        if connection.protocol_version in MODERN_VERSIONS:
            return  # no way to stop following one URI there: its updates are dropped here
        with contextlib.suppress(ToolrelayError):  # a server that went away follows nothing
            await connection.exchange(m.UNSUBSCRIBE_RESOURCE, {"uri": uri})

