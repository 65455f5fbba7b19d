"""Stage 1, declare (``--tool-search hosted|client``): tools the model loads by searching.

Tool search always declares namespaces (one per server, ``namespaces.py``).

- ``hosted``: every tool is declared inside its namespace with ``defer_loading: true``
  (an always-loaded one without it) and ``{"type": "tool_search"}`` is added: the API
  searches the deferred definitions and loads what it finds (its ``tool_search_call`` and
  ``tool_search_output`` items are replayed like any other output item).
- ``client``: only the always-loaded tools are declared (their namespaces, nothing else),
  plus the client-executed ``tool_search`` tool (``search_tool``): toolrelay answers each
  ``tool_search_call`` with a ``tool_search_output`` (``search_output``) whose ``tools``
  are the best matches of its own index (``tool_search.py``), as namespaces.

``read_search_calls`` reads the model's search calls of a response (arguments are an
object: ``{"query": text, "limit": n}``; a JSON text is read too). Everything here is
pure: the catalog and the loop's ``relay.searches`` do the I/O.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from .declare import Declaration, DeclarationSet
from .namespaces import function_tools_by_alias, namespace_tool
from .tool_search import DEFAULT_LIMIT

__all__ = [
    "CLIENT",
    "HOSTED",
    "MAX_SEARCH_LIMIT",
    "SEARCH_PARAMETERS",
    "TOOL_SEARCH",
    "TOOL_SEARCH_CALL",
    "TOOL_SEARCH_MODES",
    "TOOL_SEARCH_OUTPUT",
    "SearchCall",
    "ToolSearchMode",
    "always_loaded",
    "declaration_summary",
    "deferred_tools",
    "loaded_by_alias",
    "loaded_tools",
    "read_search_calls",
    "search_item_text",
    "search_output",
    "search_tool",
]

ToolSearchMode = Literal["off", "hosted", "client"]
TOOL_SEARCH_MODES: Final[tuple[ToolSearchMode, ...]] = ("off", "hosted", "client")
HOSTED: Final = "hosted"
CLIENT: Final = "client"
TOOL_SEARCH: Final = "tool_search"
TOOL_SEARCH_CALL: Final = "tool_search_call"
TOOL_SEARCH_OUTPUT: Final = "tool_search_output"
MAX_SEARCH_LIMIT: Final = 20
"""Tools one client search loads at most, whatever limit the model asks for."""
SEARCH_DESCRIPTION: Final = (
    "Search the tools of the connected MCP servers and load the best matches, so that you can "
    "call them. Describe the task in a few words (what to do, on which service); the tools "
    "found are loaded inside their server's namespace."
)
SEARCH_PARAMETERS: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What the tool should do, in a few words"},
        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT,
                  "description": f"How many tools to load (default {DEFAULT_LIMIT})"},
    },
    "required": ["query"],
    "additionalProperties": False,
}


def search_tool(mode: ToolSearchMode) -> dict[str, Any]:
    """The ``tool_search`` entry of the ``tools`` array: hosted, or executed by toolrelay."""
    if mode == CLIENT:
        return {"type": TOOL_SEARCH, "execution": "client", "description": SEARCH_DESCRIPTION,
                "parameters": SEARCH_PARAMETERS}
    return {"type": TOOL_SEARCH}


def always_loaded(patterns: Sequence[str]) -> Callable[[Declaration], bool]:
    """Whether a declaration stays loaded: a pattern (an alias or a glob) matches its alias
    (``namespace.name``), its ``server.tool`` or its ``server__tool``."""
    given = tuple(patterns)

    def matches(declaration: Declaration) -> bool:
        names = (declaration.alias, f"{declaration.server}.{declaration.tool}",
                 f"{declaration.server}__{declaration.tool}")
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in given for name in names)

    return matches


def deferred_tools(
    declared: DeclarationSet, mode: ToolSearchMode, keep: Callable[[Declaration], bool]
) -> list[dict[str, Any]]:
    """The ``tools`` array of a tool-search mode (``declared`` holds namespaces)."""
    if mode == "off":
        return declared.tools()
    spaces: list[dict[str, Any]] = []
    for space in declared.namespaces:
        mine = [d for d in declared.declarations if d.server == space.server]
        if mode == HOSTED:
            inner = [d.function_tool if keep(d) else {**d.function_tool, "defer_loading": True} for d in mine]
        else:
            inner = [d.function_tool for d in mine if keep(d)]
        if inner:
            spaces.append(namespace_tool(space, inner))
    return [*spaces, search_tool(mode)]


def loaded_tools(declared: DeclarationSet, aliases: Iterable[str]) -> list[dict[str, Any]]:
    """The loadable definitions of ``aliases``: their namespaces, each holding the found
    tools in the order found (namespaces in the order of their first tool)."""
    by_alias = declared.by_alias()
    spaces = {space.server: space for space in declared.namespaces}
    grouped: dict[str, list[dict[str, Any]]] = {}
    for alias in aliases:
        found = by_alias.get(alias)
        if found is not None and found.server in spaces:
            grouped.setdefault(found.server, []).append(found.function_tool)
    return [namespace_tool(spaces[server], tools) for server, tools in grouped.items()]


def loaded_by_alias(items: Any) -> dict[str, dict[str, Any]]:
    """alias → function tool loaded by the ``tool_search_output`` items among ``items`` (a
    request's input: what searches loaded before it), the first loaded of each alias."""
    found: dict[str, dict[str, Any]] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("type") == TOOL_SEARCH_OUTPUT:
            for alias, tool in function_tools_by_alias(item.get("tools")).items():
                found.setdefault(alias, tool)
    return found


def search_output(call_id: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``tool_search_output`` input item answering a client search call."""
    return {"type": TOOL_SEARCH_OUTPUT, "call_id": call_id, "execution": "client", "status": "completed",
            "tools": tools}


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchCall:
    """One ``tool_search_call`` output item."""

    index: int
    """Its place in the response's output."""
    call_id: str | None
    execution: str
    """``server`` (hosted: the API ran it) or ``client`` (toolrelay answers it)."""
    query: str
    limit: int
    problem: str | None = None
    """Why its arguments cannot be searched with (it is still answered, with no tools)."""


def read_search_calls(output: Iterable[Any]) -> list[SearchCall]:
    """The response's ``tool_search_call`` items, in output order."""
    found = []
    for index, item in enumerate(output):
        if isinstance(item, dict) and item.get("type") == TOOL_SEARCH_CALL:
            found.append(_read(index, item))
    return found


def _read(index: int, item: dict[str, Any]) -> SearchCall:
    call_id = item.get("call_id") if isinstance(item.get("call_id"), str) else None
    execution = str(item.get("execution") or "server")
    arguments = item.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            arguments = None
    if not isinstance(arguments, dict):
        return SearchCall(index=index, call_id=call_id, execution=execution, query="", limit=DEFAULT_LIMIT,
                          problem="its arguments are not an object with a query")
    query, limit = arguments.get("query"), arguments.get("limit", DEFAULT_LIMIT)
    problem = None
    if not isinstance(query, str) or not query.strip():
        query, problem = "", "its arguments name no query (a non-empty string)"
    if limit is None:
        limit = DEFAULT_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        limit, problem = DEFAULT_LIMIT, problem or f"limit must be a whole number from 1 (got {limit!r})"
    return SearchCall(index=index, call_id=call_id, execution=execution, query=query,
                      limit=min(limit, MAX_SEARCH_LIMIT), problem=problem)


def declaration_summary(tools: Any) -> str:
    """What a request's ``tools`` declare, in one line with a digest of the whole array:
    ``500 tool(s) in 20 namespace(s) (474 deferred), tool_search (client) · digest 1a2b…``."""
    listed = tools if isinstance(tools, list) else []
    functions = function_tools_by_alias(listed)
    spaces = sum(1 for t in listed if isinstance(t, dict) and t.get("type") == "namespace")
    deferred = sum(1 for t in functions.values() if t.get("defer_loading") is True)
    parts = [f"{len(functions)} tool(s)" + (f" in {spaces} namespace(s)" if spaces else "")
             + (f" ({deferred} deferred)" if deferred else "")]
    for tool in listed:
        if isinstance(tool, dict) and tool.get("type") == TOOL_SEARCH:
            parts.append(f"tool_search ({'client' if tool.get('execution') == 'client' else 'hosted'})")
    canonical = json.dumps(listed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:12]
    return f"{', '.join(parts)} · digest {digest}"


def search_item_text(item: Any) -> str | None:
    """A ``tool_search_call`` / ``tool_search_output`` item in a few words (None: neither)."""
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind == TOOL_SEARCH_CALL:
        arguments = item.get("arguments")
        query = arguments.get("query") if isinstance(arguments, dict) else arguments
        return f"tool_search_call ({item.get('execution', 'server')}) {json.dumps(query, ensure_ascii=False)}"
    if kind == TOOL_SEARCH_OUTPUT:
        loaded = list(function_tools_by_alias(item.get("tools")))
        return f"tool_search_output loads {', '.join(loaded) or 'nothing'}"
    return None
