"""``--expose-resources``: one synthetic tool per server with resources, to read them.

A tool result may point at a resource (``resource_link``) that the model has no way to
open. With resources exposed, every server that lists resources or templates is offered
one more function, ``<server>__read_resource(uri)`` (its description names a few of the
server's resources); a call of it sends ``resources/read`` to that server, tagged with
the model's ``call_id`` like a ``tools/call``, and the contents become the call's
output: text as text, a blob summarized by its MIME type and size (never dumped). A URI
the server does not know is an error outcome in the server's words. The tool only reads,
so consent is never asked.

What a reader's route and a ``resources/read`` answer are is ``resource_reading.py``'s
(pure: ``verify`` reads recorded answers with it).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from ..client.connection import Connection
from ..client.offers import list_resource_templates, list_resources, offers
from ..errors import ProtocolError, ToolrelayError, TransportError
from ..events import EventStream, Notice
from ..protocol import mcp as m
from ..protocol.exchange import Exchange
from .stages.context import CallContext
from .stages.outcomes import failed_outcome, routed
from .stages.parse import FunctionCall
from .stages.resource_reading import free_alias, outcome_from_read, plain_alias, reader_route
from .stages.result import CallOutcome
from .stages.route import Route

__all__ = ["ResourceReader", "ResourceTools", "read_for_call"]

class ResourceReader(Protocol):
    """What reading a resource for a call needs of a server connection."""

    @property
    def number(self) -> int: ...

    async def exchange(
        self, method: str, params: dict[str, Any] | None = None, *, tag: str | None = None,
        timeout: float | None = None,
    ) -> Exchange: ...


class ResourceTools:
    """The synthetic tools of one catalog: each server's listing, kept until it changes."""

    def __init__(self, connections: Mapping[str, Connection], events: EventStream) -> None:
        self._connections = connections
        self._events = events
        self._listed: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
        """Server → (resources, templates), as last listed."""
        self._changed: set[str] = set()
        self._said_clash: set[str] = set()

    async def refresh(self, servers: Iterable[str]) -> None:
        """List the resources and templates of every one of ``servers`` that offers them
        (a server that fails to list them is left out, with a notice)."""
        for name in servers:
            connection = self._connections[name]
            connection.on_resources_changed = self._changed.add
            if offers(connection, "resources"):
                await self._list(name, connection)

    async def refresh_if_changed(self) -> bool:
        """Re-list the servers that sent ``resources/list_changed``; True when one did."""
        changed = sorted(self._changed)
        self._changed.clear()  # the same set: the connections' callbacks add to it
        for name in changed:
            await self._list(name, self._connections[name])
        return bool(changed)

    async def _list(self, name: str, connection: Connection) -> None:
        try:
            listed = (await list_resources(connection), await list_resource_templates(connection))
        except ToolrelayError as exc:
            self._listed.pop(name, None)
            said = f"server {name}: its resources are not offered to the model: {exc}"
            self._events.emit(Notice(level="warning", server=name, text=said))
            return
        if listed[0] or listed[1]:
            self._listed[name] = listed
        else:
            self._listed.pop(name, None)

    def routes(self, taken: Iterable[str]) -> list[Route]:
        """One read route per server with resources, its alias clear of the ``taken`` ones
        (a server's own tool of that name keeps it; the synthetic one is suffixed, said once)."""
        used = set(taken)
        found: list[Route] = []
        for server in sorted(self._listed):
            alias = free_alias(server, used)
            plain = plain_alias(server)
            if alias != plain and server not in self._said_clash:
                self._said_clash.add(server)
                self._events.emit(Notice(level="warning", server=server, text=(
                    f"server {server} has a tool named like the resource reader {plain}: "
                    f"its resources are read with {alias} instead")))
            used.add(alias)
            found.append(reader_route(alias, server, *self._listed[server]))
        return found


async def read_for_call(
    connection: ResourceReader, route: Route, arguments: dict[str, Any], call: FunctionCall,
    context: CallContext,
) -> CallOutcome:
    """``resources/read`` of ``arguments["uri"]`` for the model's call; every ending is an outcome."""
    started = time.monotonic()
    where = routed(route, connection.number)
    try:
        params: dict[str, Any] = {"uri": arguments["uri"]}
        if context.meta:  # the hooks' entries (the trace context, SEP-414), as a tools/call carries them
            params["_meta"] = dict(context.meta)
        exchange = await connection.exchange(m.READ_RESOURCE, params,
                                             tag=call.call_id or None, timeout=context.timeout)
    except (TransportError, ProtocolError) as exc:
        return failed_outcome(exc, call, where, arguments, started)
    return outcome_from_read(exchange, call=call, route=where, arguments=arguments)


