"""Every configured server at once: started together, their tool lists kept current.

A ``ServerPool`` starts all servers concurrently and records the ones that could not
start (with why), holds each server's ``tools/list`` result as the server sent it (all
pages, minus what the config filters out), marks servers that send
``notifications/tools/list_changed`` so they are re-listed on request, re-lists a
server after a restart, and closes everything. What the tools become for the model is
decided above this package (``relay.catalog``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import NoServerAvailable, ToolrelayError, unavailable_text
from ..events import EventStream, Notice
from ..protocol.versions import DEFAULT_VERSION
from .config import ServerConfig
from .connection import Connection
from .host import Host
from .shutdown import stopping_servers

__all__ = ["ServerPool"]

ToolLists = Mapping[str, list[dict[str, Any]]]
"""Server name → the tools it listed (the raw MCP tool objects)."""


class ServerPool:
    """The connections of one set of servers and the tools each one lists.

    With ``shared``, the pool also offers the servers of another pool that someone else
    opens and closes (a batch task's own servers beside the batch's shared ones): their
    connections and tools are seen here, only this pool's own are started and stopped.

    ``protocol_version`` (``--protocol-version``), when given, is asked of every server;
    otherwise each server's config pin (``toolrelay.protocolVersion``), else ``auto``."""

    def __init__(
        self,
        servers: Sequence[ServerConfig],
        events: EventStream,
        *,
        protocol_version: str | None = None,
        log_dir: Path | None = None,
        host: Host | None = None,
        shared: ServerPool | None = None,
    ) -> None:
        self.events = events
        self._own: dict[str, Connection] = {
            s.name: Connection(
                s, events, protocol_version=protocol_version or s.protocol_version or DEFAULT_VERSION,
                log_dir=log_dir, host=host,
            )
            for s in servers
        }
        self._shared = shared
        self.connections: dict[str, Connection] = {**(shared.connections if shared else {}), **self._own}
        self.unavailable: dict[str, ToolrelayError] = dict(shared.unavailable) if shared else {}
        """Servers that could not be started, with why."""
        self.on_relisted: Callable[[str], None] | None = None
        """Called with the reason when a restart brought a different tool list."""
        self._tools: dict[str, list[dict[str, Any]]] = {}
        self._changed: set[str] = set()

    @property
    def tools(self) -> ToolLists:
        """Each available server's tools, as last listed."""
        return {**self._shared.tools, **self._tools} if self._shared is not None else self._tools

    async def open(self) -> None:
        """Start every server at once; those that fail are reported (a notice each) and
        left out.

        Raises ``NoServerAvailable`` (each server's why, and no notice repeating it) when
        no server could start, and anything that is not a ``ToolrelayError`` (after
        closing what did start).
        """
        names = list(self._own)
        try:
            started = await asyncio.gather(*(self._start(n) for n in names), return_exceptions=True)
        except BaseException:  # cancelled while starting (a closed stdout, asyncio.run's end)
            await self.close()
            raise
        for name, outcome in zip(names, started, strict=True):
            if isinstance(outcome, ToolrelayError):
                self.unavailable[name] = outcome
            elif isinstance(outcome, BaseException):
                await self.close()
                raise outcome
        if names and not self.tools:  # nothing started here, and nothing shared to use either
            await self.close()
            raise NoServerAvailable(self.unavailable)
        for name in names:
            if name in self.unavailable:
                text = unavailable_text(name, self.unavailable[name])
                self.events.emit(Notice(level="error", text=text, server=name))

    async def _start(self, name: str) -> None:
        connection = self.connections[name]
        connection.on_tools_changed = self._mark_changed
        connection.on_restart = self._relist_after_restart
        await connection.start()
        self._tools[name] = await connection.list_tools()
        if name in self._changed:  # changed while it was first listed: it is still setting up
            self._changed.discard(name)
            self._tools[name] = await connection.list_tools()

    async def close(self) -> None:
        """Stop every server (no process is left behind): a Ctrl-C or SIGTERM meanwhile
        hurries the stop rather than breaking it off (``shutdown.stopping_servers``)."""
        with stopping_servers():
            await asyncio.gather(*(c.close() for c in self._own.values()), return_exceptions=True)

    def _mark_changed(self, name: str) -> None:
        self._changed.add(name)

    async def relist_changed(self) -> list[str]:
        """Re-list the servers that sent tools/list_changed since the last time; their names."""
        # Taken and cleared in place: a notification that arrives while we re-list stays
        # marked for the next time (replacing the set would lose every later one).
        changed = sorted(self._changed)
        self._changed.clear()
        for name in changed:
            self._tools[name] = await self.connections[name].list_tools()
        if self._shared is not None:
            changed += await self._shared.relist_changed()
        return changed

    async def _relist_after_restart(self, name: str) -> None:
        tools = await self.connections[name].list_tools()
        if tools != self._tools.get(name):
            self._tools[name] = tools
            if self.on_relisted is not None:
                self.on_relisted(f"restart of {name}")
