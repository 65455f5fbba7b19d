"""The catalog: every configured server connected, every tool declared, every call routed.

``async with connect(config) as catalog`` (``assembly.catalogs``, where every catalog is
built) starts all servers concurrently (a ``client.pool.ServerPool``), assigns each
listed tool an alias and builds the router.
``declarations()`` is the exact Responses ``tools`` array; ``call(function_call,
context=...)`` (or ``call(alias, arguments_text)``) runs one call through ``dispatch``
(parse → route → hooks → validate → consent → ``tools/call``) and always returns a
``CallOutcome``.
``notifications/tools/list_changed`` marks a server; the catalog is rebuilt before the
next model turn (``refresh_if_changed``), and at once when a restarted server lists
different tools. Which listed tools are offered is the offer chain's answer
(``relay/offer.py``: the config's allow/deny, task support, the ``filters`` given); the
others are ``withheld``, each with its reason, and recorded in the ``declarations`` event.
What the servers ask of toolrelay (roots, sampling, elicitation) is answered through the
``host`` callbacks (``client.host.Host``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal

from ..client.config import ServerConfig, builtin_file_server, load_config
from ..client.connection import Connection
from ..client.host import Host
from ..client.pool import ServerPool
from ..errors import ToolrelayError, UsageError
from ..events import CatalogReady, EventStream, Notice
from ..protocol.tool_digest import tool_digest
from .dispatch import DispatchTable, dispatch
from .offer import (
    Offer,
    ParamHeaders,
    ServerListing,
    TaskSupport,
    ToolFilter,
    Withheld,
    checked_filters,
    offer,
    task_notice,
)
from .pins import PinCheck
from .resource_tool import ResourceTools
from .stages.alias import server_prefix
from .stages.arguments import ArgumentChecker
from .stages.context import CallContext
from .stages.declare import Declaration, DeclarationReport, DeclarationSet, declare_tools
from .stages.deferred import (
    TOOL_SEARCH_MODES,
    SearchCall,
    ToolSearchMode,
    always_loaded,
    deferred_tools,
    loaded_tools,
    search_output,
)
from .stages.namespaces import DECLARE_MODES, DeclareMode, namespace_description
from .stages.parse import FunctionCall
from .stages.resource_reading import declaration as reader_declaration
from .stages.result import CallOutcome
from .stages.route import Route, Router
from .stages.tool_search import SearchHit, ToolIndex, entry_for

__all__ = ["STRUCTURED_OUTPUT_MODES", "Catalog", "ConfigSource", "StructuredOutput", "servers_from"]

_TOLD = frozenset({TaskSupport.__name__, ParamHeaders.__name__})
"""The filters whose withholding is said as a warning when the catalog is built."""

StructuredOutput = Literal["auto", "off"]
STRUCTURED_OUTPUT_MODES: Final[tuple[StructuredOutput, ...]] = ("auto", "off")

ConfigSource = str | os.PathLike[str] | Sequence[ServerConfig] | None
"""A config file path, server configs, or None (the built-in file server on the cwd)."""


def servers_from(config: ConfigSource, *, events: EventStream | None = None) -> list[ServerConfig]:
    """Server configs from a config file path, a list, or None (the built-in file server)."""
    if config is None:
        return [builtin_file_server(Path.cwd())]
    if isinstance(config, (str, os.PathLike)):
        return load_config(Path(config), events=events)
    return list(config)


def _check_choice(option: str, given: object, choices: Sequence[str]) -> None:
    if given not in choices:
        raise UsageError(f"{option} must be one of {', '.join(choices)}, not {given!r}")


class Catalog:
    """Connections, declarations and the router, for one set of servers."""

    def __init__(
        self,
        servers: Sequence[ServerConfig],
        *,
        events: EventStream | None = None,
        strict: bool = False,
        protocol_version: str | None = None,
        log_dir: Path | None = None,
        host: Host | None = None,
        shared: Catalog | None = None,
        expose_resources: bool = False,
        filters: Sequence[ToolFilter] = (),
        declare: DeclareMode = "flat",
        structured_output: StructuredOutput = "auto",
        tool_search: ToolSearchMode = "off",
        always_load: Sequence[str] = (),
    ) -> None:
        """``shared``: another open catalog whose servers this one offers too, without
        starting or stopping them (a batch task's isolated servers beside the shared ones).
        ``expose_resources``: offer a ``<server>__read_resource`` tool per server with resources.
        ``filters``: links added to the offer chain, after the built-in ones (``relay/offer.py``).
        ``declare``: ``flat`` (``server__tool`` aliases) or ``namespaces`` (one per server);
        ``structured_output``: ``auto`` declares ``outputSchema`` as ``output_schema`` and sends
        valid ``structuredContent`` (``relay/stages/declare.py``), ``off`` never does.
        ``tool_search``: ``hosted`` or ``client`` declares namespaces whose tools the model
        loads by searching (``relay/stages/deferred.py``), but those ``always_load`` names
        (aliases or globs) and each server's ``toolrelay.alwaysLoad`` tools."""
        _check_choice("declare", declare, DECLARE_MODES)
        _check_choice("structured_output", structured_output, STRUCTURED_OUTPUT_MODES)
        _check_choice("tool_search", tool_search, TOOL_SEARCH_MODES)
        self.events = events or EventStream()
        self.strict = strict
        self.tool_search: ToolSearchMode = tool_search
        self._always = always_loaded(tuple(always_load))
        self._server_always = {server.name: always_loaded(server.always_load) for server in servers
                               if server.always_load}
        self.declare: DeclareMode = "namespaces" if tool_search != "off" else declare
        self.structured_output: StructuredOutput = structured_output
        self.secrets = frozenset(secret for server in servers for secret in server.secrets)
        """The config's secret values (env, headers, URL tokens): never shown or recorded."""
        beside = shared.pool if shared is not None else None
        self._pool: ServerPool = ServerPool(servers, self.events, protocol_version=protocol_version,
                                            log_dir=log_dir, host=host, shared=beside)
        self._pool.on_relisted = self._rebuild
        self._readers = ResourceTools(self._pool.connections, self.events) if expose_resources else None
        self._sets: dict[bool, DeclarationSet] = {}
        self._filters = checked_filters(filters)
        self._pins = PinCheck()  # first in the chain: it sees every listed tool
        self._pins.load(servers)  # an unreadable pin file is refused before any server starts
        self._offer = Offer(offered=())
        self._index: ToolIndex | None = None
        self._told_hidden: set[tuple[str, str]] = set()
        # Replaced, never changed in place: a call in flight keeps the table it started with.
        self._table = DispatchTable(
            router=Router(), connections=self._pool.connections, strict_aliases=frozenset(),
            checker=ArgumentChecker(), events=self.events,
        )

    @property
    def pool(self) -> ServerPool:
        """The servers' connections and tool lists (another catalog may offer them too)."""
        return self._pool

    @property
    def connections(self) -> dict[str, Connection]:
        """Server name → its connection (also for servers that could not start)."""
        return self._pool.connections

    @property
    def unavailable(self) -> dict[str, ToolrelayError]:
        """Servers that could not be started, with why."""
        return self._pool.unavailable

    @property
    def available(self) -> list[str]:
        """The servers that started, in config order."""
        return [name for name in self._pool.connections if name in self._pool.tools]

    def server_instructions(self) -> dict[str, str]:
        """Each available server's ``instructions`` from its initialize result, in config order."""
        found = {name: self._pool.connections[name].instructions for name in self.available}
        return {name: text for name, text in found.items() if text}

    def servers_named_by(self, alias: str) -> list[str]:
        """The configured servers an alias would belong to by its ``<server>__`` prefix,
        longest name first; known before any server lists its tools."""
        named = [name for name in self._pool.connections if alias.startswith(server_prefix(name))]
        return sorted(named, key=len, reverse=True)

    # -- lifecycle --------------------------------------------------------------------

    async def __aenter__(self) -> Catalog:
        await self.open()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def open(self) -> None:
        """Start every server at once; those that fail are reported and left out
        (``NoServerAvailable`` when none starts)."""
        await self._pool.open()
        if self._readers is not None:
            await self._readers.refresh(self.available)
        self._rebuild("initial")

    async def close(self) -> None:
        """Stop every server (no process is left behind)."""
        await self._pool.close()

    # -- declarations -------------------------------------------------------------------

    def _rebuild(self, reason: str) -> None:
        self._offer = offer(self._listings(), self._filters, first=(self._pins,))
        self._sets = {}  # rebuilt lazily by _set, for each mode asked for
        self._index = None  # and the search index by search_index
        plain = self._set(False)
        digests = {(server, tool["name"]): tool_digest(tool) for server, tool in self._offer.offered}
        router = Router(
            Route(
                alias=d.alias, server=d.server, tool=d.tool, rule=d.rule,
                description=d.description or "", annotations=d.annotations, output_schema=d.output_schema,
                structured=d.structured, namespace=d.namespace, digest=digests.get((d.server, d.tool)),
            )
            for d in plain.declarations
        )
        if self._readers is not None:
            router = Router([*router, *self._readers.routes(router.aliases)])
        self._table = replace(self._table, router=router)
        for skipped in self._offer.skipped:
            self.events.emit(Notice(level="warning", text=skipped))
        self._tell_hidden()
        for said in self._pins.take_notices():
            self.events.emit(Notice(level=said.level, server=said.server, text=said.text))
        if self.events.active:
            tools = self.declarations(strict=self.strict)
            withheld = [entry.to_record() for entry in self._offer.withheld]
            namespaces = {space.name: space.server for space in plain.namespaces}
            self.events.emit(CatalogReady(tools=tools, routes=router.table(), reason=reason,
                                          withheld=withheld, namespaces=namespaces, digests=router.digests(),
                                          tool_search=self._search_record(plain)))

    def _search_record(self, plain: DeclarationSet) -> dict[str, Any]:
        """The ``declarations`` event's ``tool_search``: the mode and the tools kept loaded."""
        if self.tool_search == "off":
            return {}
        kept = [d.alias for d in plain.declarations if self.keeps_loaded(d)]
        return {"mode": self.tool_search, "always_load": kept}

    def keeps_loaded(self, declaration: Declaration) -> bool:
        """Whether a tool is declared loaded under ``--tool-search`` (``--always-load`` or its
        server's ``toolrelay.alwaysLoad``)."""
        own = self._server_always.get(declaration.server)
        if own is not None and own(declaration):
            return True
        return self._always(declaration)

    def _listings(self) -> list[ServerListing]:
        """Each available server's raw tools/list with the facts of its connection, by name."""
        found = []
        for server, tools in sorted(self._pool.tools.items()):
            connection = self._pool.connections[server]
            found.append(ServerListing(
                server=server, tools=tuple(tools), config=connection.config,
                protocol_version=connection.protocol_version, tasks_unavailable=connection.tasks_unavailable,
            ))
        return found

    def _tell_hidden(self) -> None:
        """A warning, once each, for tools withheld for what the server got wrong or the
        connection cannot do: one per server for those that must run as tasks, one each
        for broken ``x-mcp-header`` marks (a user's own deny rules and filters say nothing)."""
        unseen: dict[tuple[str, str], list[Withheld]] = {}
        for entry in self._offer.withheld:
            if entry.by not in _TOLD or (entry.server, entry.tool) in self._told_hidden:
                continue
            self._told_hidden.add((entry.server, entry.tool))
            if entry.by == ParamHeaders.__name__:
                self.events.emit(Notice(level="warning", server=entry.server, text=entry.text()))
            else:
                unseen.setdefault((entry.server, entry.reason), []).append(entry)
        for (server, _), entries in unseen.items():
            self.events.emit(Notice(level="warning", server=server, text=task_notice(server, entries)))

    def _set(self, strict: bool) -> DeclarationSet:
        if strict not in self._sets:
            self._sets[strict] = declare_tools(
                self._offer.offered, strict=strict, declare=self.declare,
                descriptions=self._namespace_descriptions(), structured=self.structured_output == "auto",
            )
        return self._sets[strict]

    def _namespace_descriptions(self) -> dict[str, str]:
        """Each available server's namespace description (``--declare namespaces``)."""
        if self.declare != "namespaces":
            return {}
        found = {name: self._pool.connections[name] for name in self.available}
        return {name: namespace_description(name, c.server_info, c.instructions) for name, c in found.items()}

    @property
    def withheld(self) -> list[Withheld]:
        """Each listed tool the model is not offered, with the filter's reason."""
        return list(self._offer.withheld)

    def withheld_reason(self, alias: str) -> str | None:
        """Why ``alias`` names a listed tool that is not offered (None: it does not)."""
        return next((entry.text() for entry in self._offer.withheld if entry.alias == alias), None)

    def declarations(self, *, strict: bool | None = None) -> list[dict[str, Any]]:
        """The exact Responses ``tools`` array (strict: the OpenAI strict subset, per-tool
        fall-back). Calls to strict-declared tools get their added nulls stripped."""
        chosen = self.strict if strict is None else strict
        declared = self._set(chosen)
        offered = frozenset(d.alias for d in declared.declarations if d.strict)
        if offered != self._table.strict_aliases:
            self._table = replace(self._table, strict_aliases=offered)
        readers = [route for route in self._table.router if route.reads_resources]
        tools = deferred_tools(declared, self.tool_search, self.keeps_loaded)
        return tools + [reader_declaration(route, strict=chosen) for route in readers]

    def answer_search(self, call: SearchCall) -> tuple[dict[str, Any], list[SearchHit]]:
        """A client ``tool_search_call`` answered: the ``tool_search_output`` item (the best
        offered matches as loadable namespaced definitions) and the hits it loads."""
        hits = [] if call.problem else self.search_index().search(call.query, call.limit)
        tools = loaded_tools(self._set(self.strict), (hit.alias for hit in hits))
        return search_output(call.call_id or "", tools), hits

    def search_index(self) -> ToolIndex:
        """toolrelay's own tool search over the offered tools only (a withheld tool is never
        found); built on first use, again after each rebuild. Hits name alias, server, tool."""
        if self._index is None:
            aliases = {(d.server, d.tool): d.alias for d in self._set(False).declarations}
            self._index = ToolIndex.build(entry_for(aliases[(server, tool["name"])], server, tool)
                                          for server, tool in self._offer.offered)
        return self._index

    def report(self, *, strict: bool = True) -> list[DeclarationReport]:
        """What was changed for each tool on its way to the model, and why."""
        return [d.report for d in self._set(strict).declarations]

    @property
    def routes(self) -> list[Route]:
        return list(self._table.router)

    def route(self, alias: str) -> Route | None:
        return self._table.router.resolve(alias)

    def listed(self, route: Route) -> dict[str, Any]:
        """The Tool object the route's server listed (title, icons, ...), as it sent it."""
        tools = self._pool.tools.get(route.server, [])
        return next((tool for tool in tools if tool.get("name") == route.tool), {})

    async def refresh_if_changed(self) -> bool:
        """Re-list servers that sent tools/list_changed; True when the catalog was rebuilt."""
        changed = await self._pool.relist_changed()
        resources = self._readers is not None and await self._readers.refresh_if_changed()
        if not changed and not resources:
            return False
        why = f"tools/list_changed from {', '.join(changed)}" if changed else "resources/list_changed"
        self._rebuild(why)
        return True

    # -- calls --------------------------------------------------------------------------

    async def call(
        self, call: FunctionCall | str, arguments_text: str | None = None, *,
        context: CallContext | None = None, call_id: str | None = None,
    ) -> CallOutcome:
        """One call, parse → route → (hooks) → validate → consent → tools/call; never raises
        for a failed call (the outcome says what happened). ``call``: the model's
        ``FunctionCall``, or an alias with its ``arguments_text`` for a direct call (with the
        ``call_id`` to record it under, if any). ``context``: consent, time limit, hooks,
        ``_meta`` (``CallContext``).
        Cancelled, it records a ``cancelled`` outcome saying ``context.stop_reason()``
        (default: the run was interrupted), gives it to ``context.on_stopped`` and re-raises."""
        if isinstance(call, str):
            call = FunctionCall(call_id=call_id or "", name=call, arguments_text=arguments_text or "")
        elif call_id is not None:
            raise UsageError("call_id= goes with an alias; a FunctionCall carries its own call_id")
        return await dispatch(self._table, call, context)
