"""The stand-in's tool search (a script entry's ``"search"``): the items the API would send.

The request's ``tool_search`` tool says who runs the search. Hosted (no ``execution``, or
``"server"``): the stand-in emits the ``tool_search_call`` and, as the API does, the
``tool_search_output`` itself, loading the request's deferred tools (``defer_loading:
true`` inside a namespace) that best match the query, as namespaces without the
``defer_loading`` mark. Client (``execution: "client"``): it emits the call alone and the
relay must answer it with a ``tool_search_output`` of the same call_id in the next
request (``checks.py`` refuses a request that does not).

Matching is deliberately simple (it stands in for the API's search, not for toolrelay's):
the number of query words found in a tool's namespace, name and description, ties in
declaration order; a tool that shares no word is not loaded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from .script import ScriptedSearch
from .state import IdSource

__all__ = ["SearchFailure", "search_items"]

DEFAULT_LIMIT: Final = 5
_WORD: Final = re.compile(r"[a-z0-9]+")


class SearchFailure(ValueError):
    """The script searches, but the request declares no ``tool_search`` tool."""


def search_items(search: ScriptedSearch, body: Mapping[str, Any], ids: IdSource) -> list[dict[str, Any]]:
    """The ``tool_search_call`` (and, hosted, its ``tool_search_output``) of a scripted search."""
    tools = body.get("tools")
    tools = tools if isinstance(tools, list) else []
    declared = next((t for t in tools if isinstance(t, Mapping) and t.get("type") == "tool_search"), None)
    if declared is None:
        raise SearchFailure("the script searches for tools, but the request declares no tool_search tool")
    execution = "client" if declared.get("execution") == "client" else "server"
    arguments: dict[str, Any] = {"query": search.query}
    if search.limit is not None:
        arguments["limit"] = search.limit
    call_id = ids.next("call")
    call = {"id": ids.next("tsc"), "type": "tool_search_call", "call_id": call_id, "execution": execution,
            "arguments": arguments, "status": "completed"}
    if execution == "client":
        return [call]
    loaded = _loaded(tools, search.query, search.limit or DEFAULT_LIMIT)
    output = {"id": ids.next("tso"), "type": "tool_search_output", "call_id": call_id, "execution": "server",
              "status": "completed", "tools": loaded}
    return [call, output]


def _words(text: Any) -> set[str]:
    return set(_WORD.findall(str(text).lower().replace("_", " "))) if text else set()


def _loaded(tools: list[Any], query: str, limit: int) -> list[dict[str, Any]]:
    """The best-matching deferred tools, grouped in their namespaces (first-found order)."""
    wanted = _words(query)
    scored: list[tuple[int, int, Mapping[str, Any], Mapping[str, Any]]] = []
    for space in tools:
        if not isinstance(space, Mapping) or space.get("type") != "namespace":
            continue
        for tool in space.get("tools") or []:
            if isinstance(tool, Mapping) and tool.get("defer_loading") is True:
                text = _words(space.get("name")) | _words(tool.get("name")) | _words(tool.get("description"))
                score = len(wanted & text)
                if score:
                    scored.append((-score, len(scored), space, tool))
    grouped: dict[str, dict[str, Any]] = {}
    for _, _, space, tool in sorted(scored, key=lambda entry: entry[:2])[:limit]:
        name = str(space.get("name"))
        holder = grouped.setdefault(name, {"type": "namespace", "name": name,
                                           "description": space.get("description", ""), "tools": []})
        holder["tools"].append({key: value for key, value in tool.items() if key != "defer_loading"})
    return list(grouped.values())
