"""The catalog: every configured server connected, every tool declared, every call routed.

``async with connect(config) as catalog`` starts all servers concurrently, lists their
tools (all pages), assigns each an alias and builds the router. ``declarations()`` is
the exact Responses ``tools`` array; ``call(alias, arguments_text)`` runs one call
through parse → route → validate → (consent) → ``tools/call`` and always returns a
``CallOutcome``. ``notifications/tools/list_changed`` marks a server; the catalog is
rebuilt before the next model turn (``refresh_if_changed``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from ..errors import ToolrelayError
from ..events import CallOutcomeEvent, CallParsed, CallRouted, CatalogReady, EventStream, Notice
from ..protocol.versions import DEFAULT_VERSION
from ..relay.alias import unknown_tool_message
from ..relay.arguments import ArgumentChecker, ArgumentError, parse_arguments
from ..relay.call import call_tool
from ..relay.declare import DeclarationReport, DeclarationSet, declare_tools
from ..relay.loop import Approver
from ..relay.optional_nulls import strip_optional_nulls
from ..relay.result import CallOutcome
from ..relay.route import Route, Router
from .config import ServerConfig, builtin_file_server, load_config
from .connection import Connection

__all__ = ["Catalog", "connect", "servers_from"]

ConfigSource = str | os.PathLike[str] | Sequence[ServerConfig] | None


def servers_from(config: ConfigSource, *, events: EventStream | None = None) -> list[ServerConfig]:
    """Server configs from a config file path, a list, or None (the built-in file server)."""
    if config is None:
        return [builtin_file_server(Path.cwd())]
    if isinstance(config, (str, os.PathLike)):
        return load_config(Path(config), events=events)
    return list(config)


class Catalog:
    """Connections, declarations and the router, for one set of servers."""

    def __init__(
        self,
        servers: Sequence[ServerConfig],
        *,
        events: EventStream | None = None,
        strict: bool = False,
        protocol_version: str = DEFAULT_VERSION,
        log_dir: Path | None = None,
    ) -> None:
        self.events = events or EventStream()
        self.strict = strict
        self.connections: dict[str, Connection] = {
            s.name: Connection(s, self.events, protocol_version=protocol_version, log_dir=log_dir)
            for s in servers
        }
        self.unavailable: dict[str, ToolrelayError] = {}
        """Servers that could not be started, with why."""
        self._tools: dict[str, list[dict[str, Any]]] = {}
        self._changed: set[str] = set()
        self._sets: dict[bool, DeclarationSet] = {}
        self._router = Router()
        self._offered_strict: set[str] = set()
        self._checker = ArgumentChecker()

    # -- lifecycle --------------------------------------------------------------------

    async def __aenter__(self) -> Catalog:
        await self.open()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def open(self) -> None:
        """Start every server at once; those that fail are reported and left out."""
        names = list(self.connections)
        started = await asyncio.gather(*(self._start(n) for n in names), return_exceptions=True)
        for name, outcome in zip(names, started, strict=True):
            if isinstance(outcome, ToolrelayError):
                self.unavailable[name] = outcome
                text = f"server {name} unavailable: {outcome}"
                self.events.emit(Notice(level="error", text=text, server=name))
            elif isinstance(outcome, BaseException):
                await self.close()
                raise outcome
        if names and len(self.unavailable) == len(names):
            await self.close()
            raise next(iter(self.unavailable.values()))
        self._rebuild("initial")

    async def _start(self, name: str) -> None:
        connection = self.connections[name]
        connection.on_tools_changed = self._mark_changed
        connection.on_restart = self._relist
        await connection.start()
        self._tools[name] = await connection.list_tools()

    async def close(self) -> None:
        """Stop every server (no process is left behind)."""
        await asyncio.gather(*(c.close() for c in self.connections.values()), return_exceptions=True)

    # -- declarations -------------------------------------------------------------------

    def _rebuild(self, reason: str) -> None:
        self._sets = {}  # rebuilt lazily by _set, for each mode asked for
        plain = self._set(False)
        self._router = Router(
            Route(
                alias=d.alias, server=d.server, tool=d.tool, rule=d.rule,
                description=d.description or "", annotations=d.annotations,
            )
            for d in plain.declarations
        )
        for skipped in plain.skipped:
            self.events.emit(Notice(level="warning", text=skipped))
        if self.events.active:
            tools = self.declarations(strict=self.strict)
            self.events.emit(CatalogReady(tools=tools, routes=self._router.table(), reason=reason))

    def _set(self, strict: bool) -> DeclarationSet:
        if strict not in self._sets:
            pairs = [(server, tool) for server in sorted(self._tools) for tool in self._tools[server]]
            self._sets[strict] = declare_tools(pairs, strict=strict)
        return self._sets[strict]

    def declarations(self, *, strict: bool | None = None) -> list[dict[str, Any]]:
        """The exact Responses ``tools`` array (strict: the OpenAI strict subset, per-tool
        fall-back). Calls to strict-declared tools get their added nulls stripped."""
        chosen = self.strict if strict is None else strict
        declared = self._set(chosen)
        self._offered_strict = {d.alias for d in declared.declarations if d.strict}
        return declared.tools()

    def report(self, *, strict: bool = True) -> list[DeclarationReport]:
        """What was changed for each tool on its way to the model, and why."""
        return [d.report for d in self._set(strict).declarations]

    @property
    def routes(self) -> list[Route]:
        return list(self._router)

    def route(self, alias: str) -> Route | None:
        return self._router.resolve(alias)

    async def refresh_if_changed(self) -> bool:
        """Re-list servers that sent tools/list_changed; True when the catalog was rebuilt."""
        if not self._changed:
            return False
        # Cleared in place: a notification that arrives while we re-list stays marked.
        changed = sorted(self._changed)
        self._changed.clear()
        for name in changed:
            self._tools[name] = await self.connections[name].list_tools()
        self._rebuild(f"tools/list_changed from {', '.join(changed)}")
        return True

    def _mark_changed(self, name: str) -> None:
        self._changed.add(name)

    async def _relist(self, name: str) -> None:
        tools = await self.connections[name].list_tools()
        if tools != self._tools.get(name):
            self._tools[name] = tools
            self._rebuild(f"restart of {name}")

    # -- calls --------------------------------------------------------------------------

    async def call(
        self,
        alias: str,
        arguments_text: str,
        *,
        call_id: str | None = None,
        approve: Approver | None = None,
        timeout: float | None = None,
        malformed: str | None = None,
    ) -> CallOutcome:
        """One call, parse → route → validate → consent → tools/call; never raises for a
        failed call (the outcome says what happened)."""
        try:
            outcome = await self._call(alias, arguments_text, call_id, approve, timeout, malformed)
        except asyncio.CancelledError:
            stopped = CallOutcome(status="cancelled", alias=alias, call_id=call_id,
                                  arguments_text=arguments_text, message="the run was interrupted")
            self.events.emit(CallOutcomeEvent(call_id=call_id, outcome=stopped.to_record()))
            raise
        self.events.emit(CallOutcomeEvent(call_id=call_id, outcome=outcome.to_record()))
        return outcome

    async def _call(
        self, alias: str, text: str, call_id: str | None, approve: Approver | None,
        timeout: float | None, malformed: str | None,
    ) -> CallOutcome:
        parsed = ArgumentError(kind="json", message=malformed) if malformed else parse_arguments(text)
        error = parsed.message if isinstance(parsed, ArgumentError) else None
        self.events.emit(CallParsed(
            call_id=call_id, alias=alias, arguments_text=text,
            arguments=None if error else parsed, error=error,
        ))
        facts: dict[str, Any] = {"alias": alias, "call_id": call_id, "arguments_text": text}
        route = self._router.resolve(alias)
        if route is None:
            message = unknown_tool_message(alias, self._router.aliases)
            return CallOutcome(status="unknown_tool", message=message, **facts)
        self.events.emit(CallRouted(call_id=call_id, alias=alias, server=route.server, tool=route.tool))
        facts |= {"server": route.server, "tool": route.tool}
        if isinstance(parsed, ArgumentError):
            return CallOutcome(status="invalid_arguments", message=parsed.message, **facts)
        value = strip_optional_nulls(parsed, route.rule) if alias in self._offered_strict else parsed
        facts["arguments"] = value
        problem = self._checker.validate(alias, route.rule, value)
        if problem is not None:
            return CallOutcome(status="invalid_arguments", message=problem.message, **facts)
        if approve is not None and not route.read_only:
            refusal = await approve(route, value)
            if refusal is not None:
                return CallOutcome(status="not_approved", message=refusal, **facts)
        connection = self.connections[route.server]
        return await call_tool(
            connection, route, value, call_id=call_id, arguments_text=text, timeout=timeout
        )


def connect(
    config: ConfigSource = None,
    *,
    events: EventStream | None = None,
    strict: bool = False,
    protocol_version: str = DEFAULT_VERSION,
    log_dir: Path | None = None,
) -> Catalog:
    """A catalog over ``config`` (a config file, server configs, or None for the built-in
    file server on the current directory); use it as ``async with connect(...) as catalog``."""
    stream = events or EventStream()
    servers = servers_from(config, events=stream)
    return Catalog(servers, events=stream, strict=strict, protocol_version=protocol_version, log_dir=log_dir)
