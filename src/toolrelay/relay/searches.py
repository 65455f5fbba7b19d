"""The loop's tool-search step (``--tool-search hosted|client``): searches answered, and
only loaded tools run.

``ToolSearches`` is one run's state. Before each request it reads what the model can call
(``see_request``): the declared tools (deferred ones too: a hosted search loads them
within the response, where a call may start before the response ends), and every tool a
``tool_search_output`` of the conversation loaded. After each response (``answer``) it
adds the tools a hosted search loaded in it, and answers every ``tool_search_call`` with
``execution: "client"`` by the catalog's own search (``Catalog.answer_search``: the best
offered matches, as loadable namespaced definitions) with one ``tool_search_output`` input
item of the same call_id, recorded as a ``tool_search`` event. Hosted searches were run
by the API and are only replayed.

It is also a ``CallHook``: while the request declared a ``tool_search`` tool, a call to a
tool that was neither declared nor loaded by a search (under ``client``: one no search
loaded) is refused (``refused_by_hook``,
the reason fed back), as the API would never have let the model see it. A catalog that
cannot search (a library's own ``ToolCatalog``) answers no search.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ..events import EventStream, ToolSearchEvent
from .stages.additions import offered_by_alias
from .stages.context import CallContext, CallHook
from .stages.deferred import TOOL_SEARCH, SearchCall, loaded_by_alias, read_search_calls
from .stages.parse import FunctionCall
from .stages.tool_search import SearchHit

__all__ = ["SearchingCatalog", "ToolSearches"]


@runtime_checkable
class SearchingCatalog(Protocol):
    """A catalog that answers client searches (``relay.catalog.Catalog``)."""

    def answer_search(self, call: SearchCall) -> tuple[dict[str, Any], list[SearchHit]]: ...


class ToolSearches(CallHook):
    """One run's searches: what is loaded, the client searches' answers, the call gate."""

    def __init__(self) -> None:
        self.searching = False
        """The latest request declared a ``tool_search`` tool."""
        self.callable: set[str] = set()
        self.removed: set[str] = set()

    def see_request(self, tools: list[dict[str, Any]], history: list[dict[str, Any]]) -> None:
        """What the next response may call: the declared tools (a hosted search loads a
        deferred one within the response, and its call may start while the response still
        streams: ``verify`` holds it to the load), and those earlier searches loaded."""
        self.searching = any(isinstance(t, dict) and t.get("type") == TOOL_SEARCH for t in tools)
        self.callable = set(offered_by_alias(tools, history)) | set(loaded_by_alias(history))

    def answer(self, catalog: object, output: list[dict[str, Any]], turn: int,
               events: EventStream) -> list[dict[str, Any]]:
        """The ``tool_search_output`` items answering the response's client searches, in order."""
        self.callable |= set(loaded_by_alias(output))  # hosted: loaded within the response
        asked = [call for call in read_search_calls(output)
                 if call.execution == "client" and call.call_id is not None]
        # isinstance against a runtime-checkable Protocol walks its members: only when asked
        if not asked or not isinstance(catalog, SearchingCatalog):
            return []
        answered: list[dict[str, Any]] = []
        for call in asked:
            assert call.call_id is not None
            item, hits = catalog.answer_search(call)
            events.emit(ToolSearchEvent(turn=turn, call_id=call.call_id, query=call.query, limit=call.limit,
                                        hits=[_hit(hit) for hit in hits], item=item, problem=call.problem))
            answered.append(item)
        return answered

    def see_removed(self, removed: set[str]) -> None:
        """The tools the kept ``tools`` (or an ``additional_tools`` item) still offer that the
        servers no longer list: a call of one is refused with why (additions.py)."""
        self.removed = removed

    def with_gate(self, hooks: tuple[CallHook, ...]) -> tuple[CallHook, ...]:
        """``hooks``, and this gate last while the run searches for tools or offers removed ones."""
        return (*hooks, self) if self.searching or self.removed else hooks

    async def before_call(self, call: FunctionCall, context: CallContext) -> str | None:
        if context.server is None and call.alias in self.removed:
            return (f"{call.alias} is no longer available: its server's tool list changed during the run "
                    "(tools/list_changed) and no longer lists it, so nothing was sent; do not call it again")
        if not self.searching or context.server is None or call.alias in self.callable:
            return None  # an unknown tool is the dispatch's to report
        return (f"{call.alias} is not loaded: its definition is found by tool search, so search for "
                "it first and call it once a search has loaded it")


def _hit(hit: SearchHit) -> dict[str, Any]:
    return {"alias": hit.alias, "server": hit.server, "tool": hit.tool, "score": round(hit.score, 3)}
