"""``notifications/tools/list_changed`` from an upstream server, passed on to every host.

The pool marks the server changed (``client/pool.py``); here the catalog is re-listed
at once, which runs the offer chain again (the pins are checked before anything new is
offered), the new offer is recorded (``proxy_offer``), a collision the change brings
is told as a notice (the aliases stay unique: the catalog adds a hash), and each host
connected is told its tool list changed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from ..errors import ToolrelayError
from ..events import EventStream, Notice
from ..relay.catalog import Catalog
from .names import HostNames
from .offered import collisions
from .records import ProxyOffer

__all__ = ["ChangeRelay", "offer_record"]

log = logging.getLogger("toolrelay.proxy")


def offer_record(catalog: Catalog, reason: str, names: HostNames | None = None) -> ProxyOffer:
    """The offer as recorded: each tool by the name hosts call it (its alias, or its own
    name with ``keep_names``), and the names of what else is offered (``names.py``)."""
    keep = names is not None and names.keep_names
    routes = {route.tool if keep else route.alias: [route.server, route.tool] for route in catalog.routes}
    return ProxyOffer(reason=reason, routes=routes, withheld=[w.to_record() for w in catalog.withheld],
                      names=names.to_record() if names is not None else None)


class ChangeRelay:
    """Re-lists a changed server and tells the hosts; one re-listing at a time."""

    def __init__(self, catalog: Catalog, events: EventStream, names: HostNames | None = None) -> None:
        self.catalog = catalog
        self.events = events
        self.names = names
        self.hosts: dict[int, Callable[[], None]] = {}
        """Each connected host's way of being told (by a number of the caller's choosing)."""
        self._task: asyncio.Task[None] | None = None
        self._again = False

    def watch(self) -> None:
        """Follow every connection's tools/list_changed (after the catalog opened)."""
        for connection in self.catalog.connections.values():
            previous = connection.on_tools_changed

            def changed(name: str, previous: Callable[[str], None] | None = previous) -> None:
                if previous is not None:
                    previous(name)
                self._schedule()

            connection.on_tools_changed = changed

    def _schedule(self) -> None:
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = asyncio.ensure_future(self._relist())

    async def _relist(self) -> None:
        while True:
            self._again = False
            try:
                rebuilt = await self.catalog.refresh_if_changed()
            except ToolrelayError as exc:
                said = f"re-listing after tools/list_changed failed: {exc}"
                self.events.emit(Notice(level="warning", text=said))
                rebuilt = False
            if rebuilt:
                self._told()
            if not self._again:
                return

    def _told(self) -> None:
        for clash in collisions((route.server, route.tool) for route in self.catalog.routes):
            self.events.emit(Notice(level="warning", text=f"tool name collision after a change: {clash}; "
                                                          "the later tool's alias carries a hash"))
        self.events.emit(offer_record(self.catalog, "tools/list_changed", self.names))
        for tell in list(self.hosts.values()):
            try:
                tell()
            except ToolrelayError as exc:  # a host that went away
                log.debug("could not tell a host its tools changed: %s", exc)
