"""Tools added mid-run as an ``additional_tools`` input item, the ``tools`` array kept.

With ``--declare namespaces`` or tool search, a catalog that changes mid-run
(``notifications/tools/list_changed``, a server that connects late) keeps every request's
``tools`` byte-identical to the first request's, so the endpoint's cached prompt prefix
stays; the tools it did not declare are offered by one input item (openai 3.57
``ResponseInputItemParam`` ``AdditionalTools``): ``{"type": "additional_tools", "role":
"developer", "tools": [...]}``, each new tool as it would be declared (inside its namespace,
deferred under hosted search). A tool the servers no longer list stays in ``tools`` and is
refused at routing. Flat declarations are rewritten as before.

A compaction (``compaction.py``) leaves out the items before its compaction item, the
``additional_tools`` items among them (``addition`` offers their tools again, as it
compares with what the kept context still offers) and the ``tool_search_output`` items of
client searches: ``reloaded`` offers the tools those loaded again, in one
``additional_tools`` item, so a tool found before the compaction can still be called.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .alias import namespaced_alias
from .deferred import TOOL_SEARCH_OUTPUT
from .namespaces import function_tools_by_alias

__all__ = ["ADDITIONAL_TOOLS", "added_summary", "added_tools", "addition", "keeps_prefix", "offered_by_alias",
           "reloaded"]

ADDITIONAL_TOOLS = "additional_tools"
_PREFIX_KINDS = ("namespace", "tool_search")


def keeps_prefix(tools: Any) -> bool:
    """Whether a ``tools`` array is kept for the run (it declares a namespace or tool search)."""
    return isinstance(tools, list) and any(
        isinstance(t, dict) and t.get("type") in _PREFIX_KINDS for t in tools)


def added_tools(items: Any) -> list[dict[str, Any]]:
    """The tools the ``additional_tools`` items among ``items`` offer, in order."""
    found: list[dict[str, Any]] = []
    for item in items if isinstance(items, list) else []:
        kind = item.get("type") if isinstance(item, dict) else None
        listed = item.get("tools") if kind == ADDITIONAL_TOOLS else None
        if isinstance(listed, list):
            found.extend(t for t in listed if isinstance(t, dict))
    return found


def added_summary(items: Any) -> str:
    """`` + 2 added by additional_tools (grow.tool_1, ...)`` when ``items`` add tools, else ``""``:
    how explain and view say it."""
    added = list(function_tools_by_alias(added_tools(items)))
    if not added:
        return ""
    shown = ", ".join(added[:5]) + (", ..." if len(added) > 5 else "")
    return f" + {len(added)} added by additional_tools ({shown})"


def offered_by_alias(tools: Any, items: Any) -> dict[str, dict[str, Any]]:
    """alias → function tool a request offers: its ``tools`` first, then those its input's
    ``additional_tools`` items add."""
    return {**function_tools_by_alias(added_tools(items)), **function_tools_by_alias(tools)}


def addition(sent: list[dict[str, Any]], items: Iterable[dict[str, Any]],
             current: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The ``additional_tools`` item offering what ``current`` declares beyond the ``sent``
    tools and the additions already among ``items`` (None: nothing new)."""
    earlier = added_tools(list(items))
    known = set(function_tools_by_alias(sent)) | set(function_tools_by_alias(earlier))
    new: list[dict[str, Any]] = []
    for tool in current:
        if tool.get("type") == "namespace" and isinstance(tool.get("tools"), list):
            inner = [t for t in tool["tools"]
                     if namespaced_alias(tool["name"], t.get("name", "")) not in known]
            if inner:
                new.append({**tool, "tools": inner})
        elif isinstance(tool.get("name"), str):
            if tool["name"] not in known:
                new.append(tool)
        elif tool not in sent and tool not in earlier:
            new.append(tool)
    if not new:
        return None
    return {"type": ADDITIONAL_TOOLS, "role": "developer", "tools": new}


def reloaded(dropped: list[dict[str, Any]], kept: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The ``additional_tools`` item offering the tools the ``tool_search_output`` items among
    the ``dropped`` items loaded, less those the ``kept`` items still load or add (None: none)."""
    lost = _loaded_entries(dropped)
    if not lost:
        return None
    return addition(_loaded_entries(kept), kept, lost)


def _loaded_entries(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tools entries (namespaces) of the client ``tool_search_output`` items among
    ``items`` (a hosted search's tools stay declared, deferred: the model can search again)."""
    return [tool for item in items
            if item.get("type") == TOOL_SEARCH_OUTPUT and item.get("execution") == "client"
            for tool in item.get("tools") or [] if isinstance(tool, dict)]
