"""The offer chain: which listed tools the model is offered, and why the others are not.

The connection returns each server's ``tools/list`` as the server sent it; the catalog
passes every server's listing through one ordered chain and declares only what is left.
The first link that withholds a tool gives the reason; later links do not see it. In order:

1. declarable: what ``declare_tools`` could not declare (a duplicate name, an
   ``inputSchema`` that is not an object), said as a warning;
2. ``ConfigRules``: the config's ``allow`` / ``deny`` lists;
3. ``ParamHeaders``: on a 2026-07-28 HTTP connection, a tool whose ``x-mcp-header``
   marks break the revision's rules (SEP-2243), said as a warning;
4. ``TaskSupport``: a tool that must run as a task, on a connection that cannot run tasks;
5. the library user's filters (``RunOptions(filters=...)``, ``connect(filters=...)``).

The catalog's pin check (``relay/pins.py``) comes between 1 and 2 (``first``). Other
features are links of their own here: a policy file (``relay/policy.py``), tool search.
A filter is any object with ``withhold(listing) -> {tool name: reason}``.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from ..client.config import ServerConfig
from ..client.task_rules import task_required
from ..errors import UsageError
from ..protocol.param_headers import annotation_problem
from ..protocol.versions import MODERN_VERSIONS
from .stages.alias import assign_aliases
from .stages.declare import unusable_reason

__all__ = [
    "ConfigRules",
    "Offer",
    "ParamHeaders",
    "ServerListing",
    "TaskSupport",
    "ToolFilter",
    "Withheld",
    "checked_filters",
    "offer",
    "task_notice",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerListing:
    """One server's listed tools, as a filter sees them, and the connection facts filters use."""

    server: str
    tools: tuple[Mapping[str, Any], ...]
    """The tools still offered when this filter's turn comes, each with a unique name."""
    config: ServerConfig
    protocol_version: str | None = None
    """The MCP revision the connection speaks (None: not connected yet)."""
    tasks_unavailable: str | None = None
    """Why tools that must run as tasks cannot be called here (None: they can)."""


@runtime_checkable
class ToolFilter(Protocol):
    """One link of the offer chain."""

    def withhold(self, listing: ServerListing) -> Mapping[str, str]:
        """Tool name → why it is not offered; a tool not named is left to the next filter."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Withheld:
    """A listed tool the model is not offered, and why."""

    alias: str
    """The alias it would have had (what a user may type to ``toolrelay call``)."""
    server: str
    tool: str
    reason: str
    by: str
    """The filter that withheld it (its class name)."""

    def to_record(self) -> dict[str, str]:
        """The entry of ``tools --all --json``'s and the ``declarations`` event's ``withheld``."""
        return {"alias": self.alias, "server": self.server, "tool": self.tool, "reason": self.reason}

    def text(self) -> str:
        return f"server {self.server}: tool {self.tool} is not offered: {self.reason}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Offer:
    """The chain's answer for every server."""

    offered: tuple[tuple[str, Mapping[str, Any]], ...]
    """(server, Tool) pairs to declare, in server order, then listing order."""
    withheld: tuple[Withheld, ...] = ()
    skipped: tuple[str, ...] = ()
    """Warnings for tools that could not be declared (nameless ones among them)."""


class ConfigRules:
    """The config's ``allow`` / ``deny`` lists (deny wins), naming the rule that excludes."""

    def withhold(self, listing: ServerListing) -> Mapping[str, str]:
        config = listing.config
        if config.allow is None and not config.deny:
            return {}
        found: dict[str, str] = {}
        for tool in listing.tools:
            why = _config_rule(config, str(tool["name"]))
            if why is not None:
                found[str(tool["name"])] = why
        return found


def _config_rule(config: ServerConfig, name: str) -> str | None:
    rule = next((pattern for pattern in config.deny if fnmatch.fnmatchcase(name, pattern)), None)
    if rule is not None:
        return f'excluded by the config\'s "deny" rule "{rule}"'
    if config.allow is not None and not any(fnmatch.fnmatchcase(name, p) for p in config.allow):
        listed = ", ".join(f'"{pattern}"' for pattern in config.allow) or "empty"
        return f'not matched by the config\'s "allow" list ({listed})'
    return None


class ParamHeaders:
    """2026-07-28 over HTTP: a tool whose ``x-mcp-header`` marks break SEP-2243's rules (its
    calls could not carry their ``Mcp-Param-*`` headers as the server expects them)."""

    def withhold(self, listing: ServerListing) -> Mapping[str, str]:
        if listing.protocol_version not in MODERN_VERSIONS or listing.config.transport != "http":
            return {}
        found: dict[str, str] = {}
        for tool in listing.tools:
            problem = annotation_problem(tool.get("inputSchema"))
            if problem is not None:
                found[str(tool["name"])] = f"{problem} (MCP 2026-07-28, SEP-2243)"
        return found


_TASK_RULE = "(execution.taskSupport: required)"


class TaskSupport:
    """A tool that must run as a task, where the connection cannot run tasks."""

    def withhold(self, listing: ServerListing) -> Mapping[str, str]:
        why = listing.tasks_unavailable
        if why is None:
            return {}
        reason = f"it must run as a task {_TASK_RULE}, and {why}"
        return {str(tool["name"]): reason for tool in listing.tools if task_required(dict(tool))}


def task_notice(server: str, tools: Sequence[Withheld]) -> str:
    """The one notice for a server's tools withheld by ``TaskSupport`` (all for one reason)."""
    if len(tools) == 1:
        return tools[0].text()
    why = tools[0].reason.split(f"{_TASK_RULE}, and ", 1)[-1]
    names = ", ".join(entry.tool for entry in tools)
    return f"server {server}: tools {names} are not offered: they must run as tasks {_TASK_RULE}, and {why}"


BUILT_IN: tuple[ToolFilter, ...] = (ConfigRules(), ParamHeaders(), TaskSupport())


def checked_filters(filters: Iterable[object]) -> tuple[ToolFilter, ...]:
    """``filters`` as given, each checked to be a filter before any server starts."""
    found: list[ToolFilter] = []
    for index, candidate in enumerate(filters):
        if not isinstance(candidate, ToolFilter):
            kind = type(candidate).__name__
            raise UsageError(f"filters[{index}] ({kind}) is not a tool filter: it needs a withhold(listing) "
                             "method returning {tool name: reason} (toolrelay.ToolFilter)")
        found.append(candidate)
    return tuple(found)


def offer(
    listings: Iterable[ServerListing], filters: Sequence[ToolFilter] = (), *, first: Sequence[ToolFilter] = ()
) -> Offer:
    """Every listing through the chain: declarable, ``first`` (the catalog's pin check: it
    sees every declarable tool, so one another link withholds is not taken for gone), the
    built-in filters, then ``filters``."""
    offered: list[tuple[str, Mapping[str, Any]]] = []
    withheld: list[Withheld] = []
    skipped: list[str] = []
    for listing in listings:
        kept, refused = _declarable(listing, skipped)
        withheld.extend(refused)
        for link in (*first, *BUILT_IN, *filters):
            said = link.withhold(replace(listing, tools=kept)) if kept else {}
            withheld.extend(_entry(listing.server, name, str(said[name]), link)
                            for name in (str(tool["name"]) for tool in kept) if name in said)
            kept = tuple(tool for tool in kept if tool["name"] not in said)
        offered.extend((listing.server, tool) for tool in kept)
    return Offer(offered=tuple(offered), withheld=tuple(withheld), skipped=tuple(skipped))


def _declarable(
    listing: ServerListing, skipped: list[str]
) -> tuple[tuple[Mapping[str, Any], ...], list[Withheld]]:
    """The tools ``declare_tools`` can declare; a warning (and, when named, an entry) for each other."""
    accepted: dict[tuple[str, str], Mapping[str, Any]] = {}
    refused: list[Withheld] = []
    for index, tool in enumerate(listing.tools):
        problem = unusable_reason(tool, listing.server, accepted)
        if problem is None:
            accepted[(listing.server, tool["name"])] = tool
            continue
        skipped.append(f"server '{listing.server}': tool #{index + 1} skipped: {problem}")
        name = tool.get("name") if isinstance(tool, Mapping) else None
        if isinstance(name, str) and name:
            refused.append(_entry(listing.server, name, problem, "declarable"))
    return tuple(accepted.values()), refused


def _entry(server: str, tool: str, reason: str, by: ToolFilter | str) -> Withheld:
    alias = assign_aliases([(server, tool)])[(server, tool)]
    name = by if isinstance(by, str) else type(by).__name__
    return Withheld(alias=alias, server=server, tool=tool, reason=reason, by=name)
