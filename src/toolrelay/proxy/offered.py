"""What hosts are offered: each upstream tool under its catalog alias (``server__tool``).

The catalog (``relay/catalog.py``) lists every server, runs the offer chain (pins, the
config's rules, the policy's denials) and gives each offered tool an alias; the router
reads an alias back to its (server, tool) pair. A host is offered each tool as its server
listed it, renamed to the alias. Two pairs that would share an alias are a collision: the
proxy refuses to start over one (``collisions``), since a host's user would otherwise see
a name with a hash in it and not know which tool it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from ..relay.catalog import Catalog
from ..relay.stages.alias import assign_aliases
from ..relay.stages.route import Route

__all__ = ["collisions", "host_tools"]

_HOST_HIDDEN: Final = ("execution",)
"""Tool keys a host is not shown: the proxy runs a task tool as a task itself and answers
with its result, so the host calls it as any other tool (unless its tasks pass through:
``tasks.py``)."""


def host_tools(catalog: Catalog, shows_execution: Callable[[Route], bool] | None = None
               ) -> list[dict[str, Any]]:
    """Every offered tool as its server listed it, named by its alias; its ``execution``
    (task support) only where ``shows_execution`` says the host's tasks pass through."""
    offered = []
    for route in catalog.routes:
        shown = shows_execution is not None and shows_execution(route)
        tool = {key: value for key, value in catalog.listed(route).items()
                if shown or key not in _HOST_HIDDEN}
        tool["name"] = route.alias
        offered.append(tool)
    return offered


def collisions(pairs: Iterable[tuple[str, str]], what: str = "tool") -> list[str]:
    """Each alias that two (server, name) pairs would share, said with the pairs (``what``
    they name: a tool, or a prompt, ``names.py``)."""
    by_alias: dict[str, list[tuple[str, str]]] = {}
    for pair in sorted(set(pairs)):
        by_alias.setdefault(assign_aliases([pair])[pair], []).append(pair)
    return [
        f"{alias} would name "
        + " and ".join(f"{what} {name!r} of server {server!r}" for server, name in found)
        for alias, found in sorted(by_alias.items()) if len(found) > 1
    ]
