"""``--expose-resources``: one synthetic tool per server with resources, to read them.

A tool result may point at a resource (``resource_link``) that the model has no way to
open. With resources exposed, every server that lists resources or templates is offered
one more function, ``<server>__read_resource(uri)`` (its description names a few of the
server's resources); a call of it sends ``resources/read`` to that server, tagged with
the model's ``call_id`` like a ``tools/call``, and the contents become the call's
output: text as text, a blob summarized by its MIME type and size (never dumped). A URI
the server does not know is an error outcome in the server's words. The tool only reads,
so consent is never asked.

``outcome_from_read`` is the one classification of a ``resources/read`` exchange; ``verify``
calls it on the recorded messages as the live path does.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Iterable, Mapping
from typing import Any, Final, Protocol

from ..client.connection import Connection
from ..client.offers import list_resource_templates, list_resources, offers
from ..errors import ProtocolError, ToolrelayError, TransportError
from ..events import EventStream, Notice
from ..protocol import mcp as m
from ..protocol.peer import Exchange
from .alias import MAX_ALIAS_LENGTH, SEPARATOR, server_prefix
from .call import failed_outcome, routed
from .context import CallContext
from .parse import FunctionCall
from .result import CallExchange, CallOutcome, CallRoute, Verdict
from .route import Route

__all__ = [
    "READ_TOOL",
    "ResourceReader",
    "ResourceTools",
    "contents_result",
    "declaration",
    "describe",
    "outcome_from_read",
    "read_for_call",
    "reader_route",
]

READ_TOOL: Final = "read_resource"
"""The synthetic tool's name after its server's prefix."""
_SHOWN_RESOURCES: Final = 5
_SHOWN_TEMPLATES: Final = 3
_SHOWN_CHARS: Final = 160
_RULE: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"uri": {"type": "string", "description": "the resource's URI, e.g. from a resource_link"}},
    "required": ["uri"],
    "additionalProperties": False,
}


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
            alias = _free_alias(server, used)
            plain = _cut_alias(server, "")
            if alias != plain and server not in self._said_clash:
                self._said_clash.add(server)
                self._events.emit(Notice(level="warning", server=server, text=(
                    f"server {server} has a tool named like the resource reader {plain}: "
                    f"its resources are read with {alias} instead")))
            used.add(alias)
            found.append(reader_route(alias, server, *self._listed[server]))
        return found


def reader_route(
    alias: str, server: str, resources: list[dict[str, Any]], templates: list[dict[str, Any]]
) -> Route:
    """The route of ``server``'s reader, described from its listed resources and templates."""
    return Route(alias=alias, server=server, tool=m.READ_RESOURCE, rule=_RULE,
                 description=describe(server, resources, templates), annotations={"readOnlyHint": True},
                 reads_resources=True)


def describe(server: str, resources: list[dict[str, Any]], templates: list[dict[str, Any]]) -> str:
    """The reader's description: what it does, and a few of the server's resources."""
    shown = [_resource_line(r) for r in resources[:_SHOWN_RESOURCES]]
    if len(resources) > _SHOWN_RESOURCES:
        shown.append(f"... and {len(resources) - _SHOWN_RESOURCES} more")
    shown += [_clip(f"{t.get('uriTemplate')} (template)") for t in templates[:_SHOWN_TEMPLATES]]
    return (f"Read a resource of server {server} by its URI (for example one a resource_link in a "
            f"tool result points at). Its resources include: {'; '.join(shown)}.")


def declaration(route: Route, *, strict: bool) -> dict[str, Any]:
    """The Responses ``tools`` entry of a read route."""
    return {"type": "function", "name": route.alias, "description": route.description,
            "parameters": route.rule, "strict": strict}


def _free_alias(server: str, used: set[str]) -> str:
    """``<server>__read_resource``, the server's part cut to fit 64 characters, suffixed
    ``_2``, ``_3``... while the name is taken."""
    for suffix in ("", *(f"_{n}" for n in range(2, 100))):
        alias = _cut_alias(server, suffix)
        if alias not in used:
            return alias
    raise ValueError(f"no free alias for the resource reader of server {server}")


def _cut_alias(server: str, suffix: str) -> str:
    tail = SEPARATOR + READ_TOOL + suffix
    return server_prefix(server).removesuffix(SEPARATOR)[: MAX_ALIAS_LENGTH - len(tail)] + tail


def _resource_line(resource: dict[str, Any]) -> str:
    label = resource.get("title") or resource.get("name")
    return _clip(f"{resource.get('uri')} ({label})" if label else str(resource.get("uri")))


def _clip(line: str) -> str:
    """A server's names are its own words: each line of the description is kept short."""
    return line if len(line) <= _SHOWN_CHARS else line[: _SHOWN_CHARS - 1] + "…"


async def read_for_call(
    connection: ResourceReader, route: Route, arguments: dict[str, Any], call: FunctionCall,
    context: CallContext,
) -> CallOutcome:
    """``resources/read`` of ``arguments["uri"]`` for the model's call; every ending is an outcome."""
    started = time.monotonic()
    where = routed(route, connection.number)
    try:
        exchange = await connection.exchange(m.READ_RESOURCE, {"uri": arguments["uri"]},
                                             tag=call.call_id or None, timeout=context.timeout)
    except (TransportError, ProtocolError) as exc:
        return failed_outcome(exc, call, where, arguments, started)
    return outcome_from_read(exchange, call=call, route=where, arguments=arguments)


def outcome_from_read(
    exchange: Exchange, *, call: FunctionCall, route: CallRoute, arguments: dict[str, Any] | None = None,
) -> CallOutcome:
    """Classify a completed ``resources/read``: the server's refusal (protocol error, in its
    words), a malformed answer, or the contents as a result (ok)."""
    return CallOutcome(
        call=call, route=route, arguments=arguments, verdict=_read_verdict(exchange),
        elapsed=exchange.elapsed,
        exchange=CallExchange(mcp_id=exchange.mcp_id, request=exchange.request, response=exchange.response),
    )


def _read_verdict(exchange: Exchange) -> Verdict:
    if exchange.error is not None:
        error = exchange.error
        return Verdict(status="protocol_error", error_code=error.code, error_data=error.data,
                       message=error.message)
    contents = (exchange.result or {}).get("contents")
    if not isinstance(contents, list) or not all(isinstance(item, dict) for item in contents):
        return Verdict(status="protocol_error", message='server returned a malformed resources/read result: '
                                                        '"contents" must be an array of objects')
    return Verdict(status="ok", result=contents_result(contents))


def contents_result(contents: list[dict[str, Any]]) -> dict[str, Any]:
    """Resource contents as a tool result the feedback renders: text as text, a blob as a
    line naming its URI, MIME type and size."""
    blocks = [_content_block(item) for item in contents]
    return {"content": blocks or [{"type": "text", "text": "(the resource has no contents)"}]}


def _content_block(item: dict[str, Any]) -> dict[str, Any]:
    text = item.get("text")
    if isinstance(text, str):
        return {"type": "text", "text": text}
    mime = item.get("mimeType") if isinstance(item.get("mimeType"), str) else "unknown type"
    size = _blob_size(item.get("blob"))
    return {"type": "text", "text": f"[binary resource {item.get('uri')}: {mime}, {size}]"}


def _blob_size(blob: Any) -> str:
    if not isinstance(blob, str):
        return "no data"
    try:
        return f"{len(base64.b64decode(blob, validate=True))} bytes"
    except (binascii.Error, ValueError):
        return f"{len(blob)} characters of data that is not base64"
