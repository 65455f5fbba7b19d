"""Resources, resource templates, prompts and completion of every upstream server, as one server's.

The proxy's method table for the server stack (``server/features.py``). A list request
(``resources/list``, ``resources/templates/list``, ``prompts/list``) asks every server
that declares the feature, follows its pages, and answers with all of them in one page,
each URI and prompt name as hosts see it (``names.py``). A request about one thing
(``resources/read``, ``resources/subscribe``/``unsubscribe``, ``prompts/get``,
``completion/complete``) is read back to its server and the upstream's own name or URI,
sent there, and answered with what the server answered: the result unchanged but for its
era's envelope (``protocol/passthrough.py``) and, for ``resources/read``, each content's
URI given the server's prefix; an upstream JSON-RPC error is the host's. A name or URI
of no server's is a JSON-RPC error (-32602) naming it; a server that did not answer is
-32603 naming it. Each host request is recorded as a tool call's is (``records.py``),
paired by the proxy's key with the upstream requests that served it.

What a server tells of changes is passed on to every host: ``resources/list_changed``,
``prompts/list_changed`` (the prompts re-listed first, a new name clash said as a notice)
and ``resources/updated`` (its URI as hosts see it; the hosts' own transports send it only
to hosts that follow that URI: ``followed.py``). A host's ``resources/subscribe`` goes
upstream only when no other host follows the URI already (else it is ``shared``), its
``resources/unsubscribe`` only when it was the last (``followed.py``).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from ..client.connection import Connection
from ..client.offers import offers, subscribes
from ..errors import RpcError, ToolrelayError
from ..events import Notice
from ..protocol import mcp as m
from ..protocol.exchange import Exchange
from ..protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JSONObject, Notification, Request
from ..protocol.listen import NO_UPDATES
from ..protocol.passthrough import passed_on
from ..protocol.versions import MODERN_VERSIONS
from ..redaction import redact
from ..relay.catalog import Catalog
from ..server.app import CallContext, ServerSession
from ..server.features import FeatureHandler
from .changes import offer_record
from .followed import SHARED, Following
from .forward import Forwarder, forwarded_meta
from .names import HostNames
from .offered import collisions

__all__ = ["FeatureRelay", "Tell"]

Tell = Callable[[str, JSONObject | None], None]
"""A host's way of being sent a notification (method, params)."""
_MAX_PAGES: Final = 1000
_LISTS: Final = {  # method → (the feature a server must declare, the result's list key)
    m.LIST_RESOURCES: ("resources", "resources"),
    m.LIST_RESOURCE_TEMPLATES: ("resources", "resourceTemplates"),
    m.LIST_PROMPTS: ("prompts", "prompts"),
}
_CACHE_KEYS: Final = frozenset({"ttlMs", "cacheScope"})
_PASSED_ON: Final = frozenset({m.RESOURCES_CHANGED, m.PROMPTS_CHANGED, m.RESOURCE_UPDATED})


class FeatureRelay:
    """Answers hosts' resource, prompt and completion requests from the catalog's servers."""

    def __init__(self, catalog: Catalog, forwarder: Forwarder, names: HostNames) -> None:
        self.catalog = catalog
        self.forwarder = forwarder
        self.events = forwarder.events
        self.names = names
        self.list_changes = False
        """Whether hosts are told of list changes (``listChanged``): set where the transport can."""
        self.hosts: dict[int, Tell] = {}
        """Each connected host's way of being sent what a server told (a number of the caller's)."""
        self._relisting: asyncio.Task[None] | None = None
        self.opened = False
        self.modern_host: int | None = None
        """The host number 2026-07-28 exchanges are recorded under (HTTP: ``MODERN_HOST``)."""
        self.following: Following | None = None
        """Who follows which resource (``followed.py``); None: each subscribe goes upstream."""
        """Whether the start's names are taken (later changes are recorded as offers)."""

    # -- what is offered ----------------------------------------------------------------

    def _servers(self, feature: str) -> list[Connection]:
        return [self.catalog.connections[name] for name in self.catalog.available
                if offers(self.catalog.connections[name], feature)]

    def capabilities(self) -> JSONObject:
        declared: JSONObject = {}
        if self._servers("resources"):
            subscribe = any(subscribes(c) for c in self._servers("resources"))
            declared["resources"] = {"subscribe": subscribe, "listChanged": self.list_changes}
        if self._servers("prompts"):
            declared["prompts"] = {"listChanged": self.list_changes}
        if self._servers("completions"):
            declared["completions"] = {}
        return declared

    def methods(self) -> Mapping[str, FeatureHandler]:
        table: dict[str, Callable[[str, Request], Awaitable[JSONObject]]] = {
            **dict.fromkeys(_LISTS, self._list),
            m.READ_RESOURCE: self._read, m.GET_PROMPT: self._get_prompt, m.COMPLETE: self._complete,
        }
        served = {method: self._served(answer) for method, answer in table.items()}
        for method in (m.SUBSCRIBE_RESOURCE, m.UNSUBSCRIBE_RESOURCE):  # the host's session follows it
            served[method] = self._served(self._subscribe, with_session=True)
        return served

    async def open(self) -> list[str]:
        """Name every server's prompts (at start): the collisions found, said with both."""
        await self._list_prompts(None)
        self.opened = True
        return self.prompt_collisions()

    def prompt_collisions(self) -> list[str]:
        if self.names.keep_names:  # one server: its prompt names are unique already
            return []
        return collisions(self.names.prompts.values(), "prompt")

    # -- one host request -----------------------------------------------------------------

    def _served(self, answer: Callable[..., Awaitable[JSONObject]], *, with_session: bool = False
                ) -> FeatureHandler:
        def handler(params: JSONObject | None, context: CallContext) -> Awaitable[JSONObject]:
            request = context.request
            assert request is not None  # every transport gives it
            host = self.forwarder.calls.number_of(context.session)
            if context.session is None and context.protocol_version in MODERN_VERSIONS:
                host = self.modern_host  # a 2026-07-28 exchange has no session: its number tells it
            exchange = context.stream.exchange if context.stream is not None else None
            bound = functools.partial(answer, session=context.session) if with_session else answer
            return self._recorded(bound, request, context.protocol_version, host, exchange)
        return handler

    async def _recorded(self, answer: Callable[[str, Request], Awaitable[JSONObject]], request: Request,
                        version: str | None, host: int | None, exchange: int | None) -> JSONObject:
        return await self.forwarder.recorded(
            request, version, host, lambda key: answer(key, request), exchange)

    async def _list(self, key: str, request: Request) -> JSONObject:
        if request.method == m.LIST_PROMPTS:
            listed = await self._list_prompts(key)
            items = [{**prompt, "name": self.names.prompt_alias(server, prompt["name"])}
                     for server, prompt in listed]
        else:
            field = "uri" if request.method == m.LIST_RESOURCES else "uriTemplate"
            items = [{**item, field: self.names.host_uri(server, str(item.get(field, "")))}
                     for server, item in await self._gather(key, request.method)]
        self.forwarder.route_to(key, request, request.method, "listed")
        return {_LISTS[request.method][1]: items}

    async def _list_prompts(self, key: str | None) -> list[tuple[str, JSONObject]]:
        listed = [(server, prompt) for server, prompt in await self._gather(key, m.LIST_PROMPTS)
                  if isinstance(prompt.get("name"), str)]
        before = dict(self.names.prompts)
        self.names.set_prompts((server, prompt["name"]) for server, prompt in listed)
        if self.opened and self.names.prompts != before:  # recorded, so verify reads names by it
            self.events.emit(offer_record(self.catalog, "prompts/list", self.names))
        return listed

    async def _gather(self, key: str | None, method: str) -> list[tuple[str, JSONObject]]:
        feature, item_key = _LISTS[method]
        servers = self._servers(feature)
        pages = await asyncio.gather(*(self._pages(c, method, item_key, key) for c in servers))
        return [(c.name, item) for c, items in zip(servers, pages, strict=True) for item in items]

    async def _pages(self, connection: Connection, method: str, item_key: str, key: str | None
                     ) -> list[JSONObject]:
        found: list[JSONObject] = []
        cursor: Any = None
        for _ in range(_MAX_PAGES):
            try:
                page = {"cursor": cursor} if cursor is not None else None
                exchange = await connection.exchange(method, page, tag=key)
                result = exchange.raise_for_error()
            except ToolrelayError as exc:  # one server's failure leaves the others' lists whole
                if method == m.LIST_RESOURCE_TEMPLATES and isinstance(exc, RpcError) and exc.code == -32601:
                    return found  # a server with resources but no templates
                said = redact(str(exc), self.catalog.secrets)
                self.events.emit(Notice(level="warning", text=f"server {connection.name}: {method} failed: "
                                                              f"{said}; its part of the list is left out"))
                return found
            items = result.get(item_key)
            found += [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []
            cursor = result.get("nextCursor")
            if not isinstance(cursor, (str, int)) or isinstance(cursor, bool):
                return found
        return found

    async def _read(self, key: str, request: Request) -> JSONObject:
        server, uri = self._resource(key, request, m.require_str(request.params, "uri"))
        result = await self._upstream(key, request, server, uri, {**(request.params or {}), "uri": uri})
        contents = result.get("contents")
        if isinstance(contents, list):
            result["contents"] = [{**c, "uri": self.names.host_uri(server, c["uri"])}
                                  if isinstance(c, dict) and isinstance(c.get("uri"), str) else c
                                  for c in contents]
        return result

    async def _subscribe(self, key: str, request: Request, session: ServerSession | None) -> JSONObject:
        host_uri = m.require_str(request.params, "uri")
        server, uri = self._resource(key, request, host_uri)
        if self.following is not None and session is not None:
            return await self._follow(key, request, session, (server, uri))
        return await self._subscribe_upstream(key, request, server, uri)

    async def _subscribe_upstream(self, key: str, request: Request, server: str, uri: str) -> JSONObject:
        host_uri = m.require_str(request.params, "uri")
        connection = self.catalog.connections[server]
        if connection.protocol_version in MODERN_VERSIONS:  # no resources/subscribe: its listen filter
            unfollowed = "" if subscribes(connection) else NO_UPDATES
            if request.method == m.SUBSCRIBE_RESOURCE and not unfollowed:
                await connection.watch_resource(uri)
            # an unsubscribe sends nothing: the client has no "unwatch" (a listen filter only
            # grows), so the server's updates of it go on and are dropped here, where no host
            # follows it any more (``followed.py``, ``serve.py``)
            self.forwarder.route_to(key, request, host_uri, "listened", target=(server, uri),
                                    reason=unfollowed)
            return {}
        return await self._upstream(key, request, server, uri, {**(request.params or {}), "uri": uri})

    async def _follow(self, key: str, request: Request, session: ServerSession, followed: tuple[str, str]
                      ) -> JSONObject:
        """A 2025 host's subscribe or unsubscribe: upstream only for the first host to follow
        the URI, or the last to leave it; else ``shared`` (nothing sent, answered ``{}``)."""
        following, host_uri = self.following, m.require_str(request.params, "uri")
        assert following is not None
        if request.method == m.UNSUBSCRIBE_RESOURCE:
            if following.release(session, followed):
                return await self._subscribe_upstream(key, request, *followed)
            why = "another host still follows it" if following.upstream_of(followed) else "nothing follows it"
            self.forwarder.route_to(key, request, host_uri, SHARED, target=followed, reason=why)
            return {}
        made = following.hold(session, followed)
        if made is None:  # the first to follow it: subscribed upstream
            try:
                result = await self._subscribe_upstream(key, request, *followed)
            except BaseException as exc:
                following.subscribed(followed, exc)
                following.release(session, followed)
                raise
            following.subscribed(followed, None)
            return result
        try:
            await asyncio.shield(made)
        except (ToolrelayError, asyncio.CancelledError) as exc:  # another host's subscription was refused
            following.release(session, followed)
            self.forwarder.route_to(key, request, host_uri, "failed", target=followed, reason=str(exc))
            raise RpcError(INTERNAL_ERROR, f"toolrelay proxy: server {followed[0]} did not follow "
                                           f"{followed[1]}: {exc}") from None
        self.forwarder.route_to(key, request, host_uri, SHARED, target=followed,
                                reason="followed already, for another host")
        return {}

    async def _get_prompt(self, key: str, request: Request) -> JSONObject:
        alias = m.require_str(request.params, "name")
        server, prompt = self._prompt(key, request, alias)
        return await self._upstream(key, request, server, prompt, {**(request.params or {}), "name": prompt})

    async def _complete(self, key: str, request: Request) -> JSONObject:
        ref = m.require_object(request.params, "ref")
        if ref.get("type") == "ref/prompt":
            alias = m.require_str(ref, "name")
            server, name = self._prompt(key, request, alias)
            upstream_ref = {**ref, "name": name}
        else:
            alias = m.require_str(ref, "uri")
            server, name = self._resource(key, request, alias)
            upstream_ref = {**ref, "uri": name}
        params = {**(request.params or {}), "ref": upstream_ref}
        return await self._upstream(key, request, server, name, params)

    # -- names read back ----------------------------------------------------------------

    def _resource(self, key: str, request: Request, host_uri: str) -> tuple[str, str]:
        found = self.names.upstream_uri(host_uri)
        if found is None or found[0] not in self.catalog.available:
            self.forwarder.route_to(key, request, host_uri, "unknown", reason="no server's URI")
            raise RpcError(INVALID_PARAMS, f"Unknown resource: {host_uri} (the proxy's URIs begin with "
                           f"{self.names.prefix('<server>') or 'the server URI'})", {"uri": host_uri})
        return found

    def _prompt(self, key: str, request: Request, alias: str) -> tuple[str, str]:
        found = self.names.prompts.get(alias)
        if found is None:
            said = "no prompt of that name is offered"
            self.forwarder.route_to(key, request, alias, "unknown", reason=said)
            raise RpcError(INVALID_PARAMS, f"Unknown prompt: {alias}")
        return found

    # -- upstream -----------------------------------------------------------------------

    async def _upstream(self, key: str, request: Request, server: str, name: str, params: JSONObject
                        ) -> JSONObject:
        """``request`` sent to ``server`` with ``params`` (the upstream's own ``name``)."""
        connection = self.catalog.connections[server]
        alias = m.feature_target(request.params or {}) or name
        sent = {k: v for k, v in params.items() if k != "_meta"}
        meta = forwarded_meta(request.params)
        if meta:
            sent["_meta"] = meta
        try:
            exchange = await connection.exchange(request.method, sent, tag=key)
        except ToolrelayError as exc:
            said = redact(str(exc), self.catalog.secrets)
            self.forwarder.route_to(key, request, alias, "failed", target=(server, name), reason=said)
            text = f"toolrelay proxy: server {server} did not answer: {said}"
            raise RpcError(INTERNAL_ERROR, text) from None
        self._routed(key, request, alias, server, name, exchange, connection.number)
        if exchange.error is not None:
            raise RpcError(exchange.error.code, exchange.error.message, exchange.error.data)
        assert exchange.result is not None
        # its cache directives are the upstream leg's, as its envelope is (a 2026-07-28 host's
        # answer gets the proxy's own)
        return {k: v for k, v in passed_on(exchange.result).items() if k not in _CACHE_KEYS}

    def _routed(self, key: str, request: Request, alias: str, server: str, name: str, exchange: Exchange,
                number: int) -> None:
        self.forwarder.route_to(key, request, alias, "forwarded", target=(server, name),
                                sent=[(exchange, number)])

    # -- what servers tell ---------------------------------------------------------------

    def watch(self) -> None:
        """Pass on what each server tells of its resources and prompts (after the catalog
        opened); whoever followed its notifications before (the calls' progress) still does."""
        for connection in self.catalog.connections.values():
            connection.also_notify(self._told)

    def _told(self, server: str, note: Notification, call: str | None) -> None:
        if note.method not in _PASSED_ON:
            return
        params: JSONObject | None = None
        if note.method == m.RESOURCE_UPDATED:
            uri = (note.params or {}).get("uri")
            params = {"uri": self.names.host_uri(server, uri)} if isinstance(uri, str) else None
            if params is None:
                return
        if note.method == m.PROMPTS_CHANGED:
            self._relisting = asyncio.ensure_future(self._prompts_changed())
            return
        self._tell(note.method, params)

    async def _prompts_changed(self) -> None:
        try:
            await self._list_prompts(None)
        except ToolrelayError as exc:
            self.events.emit(Notice(level="warning", text=f"re-listing prompts after a change failed: {exc}"))
        for clash in self.prompt_collisions():
            self.events.emit(Notice(level="warning", text=f"prompt name collision after a change: {clash}; "
                                                          "the later prompt's name carries a hash"))
        self._tell(m.PROMPTS_CHANGED, None)

    def _tell(self, method: str, params: JSONObject | None) -> None:
        for tell in list(self.hosts.values()):
            try:
                tell(method, params)
            except ToolrelayError:  # a host that went away
                continue

