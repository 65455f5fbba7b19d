"""The loop's tool-search step (``--tool-search client``): answer the model's searches.

After each response, every ``tool_search_call`` with ``execution: "client"`` is answered
by the catalog's own search (``Catalog.answer_search``: the best offered matches, as
loadable namespaced definitions) with one ``tool_search_output`` input item of the same
call_id, recorded as a ``tool_search`` event. Hosted searches (``execution: "server"``)
were run by the API and are only replayed. A catalog that cannot search (a library's own
``ToolCatalog``) answers none, and a response with client searches then ends the run as
the loop ends any response it cannot answer.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ..events import EventStream, ToolSearchEvent
from .stages.deferred import SearchCall, read_search_calls
from .stages.tool_search import SearchHit

__all__ = ["SearchingCatalog", "answer_searches"]


@runtime_checkable
class SearchingCatalog(Protocol):
    """A catalog that answers client searches (``relay.catalog.Catalog``)."""

    def answer_search(self, call: SearchCall) -> tuple[dict[str, Any], list[SearchHit]]: ...


def answer_searches(catalog: object, output: list[dict[str, Any]], turn: int,
                    events: EventStream) -> list[dict[str, Any]]:
    """The ``tool_search_output`` items answering the response's client searches, in order."""
    if not isinstance(catalog, SearchingCatalog):
        return []
    answered: list[dict[str, Any]] = []
    for call in read_search_calls(output):
        if call.execution != "client" or call.call_id is None:
            continue
        item, hits = catalog.answer_search(call)
        events.emit(ToolSearchEvent(
            turn=turn, call_id=call.call_id, query=call.query, limit=call.limit,
            hits=[_hit(hit) for hit in hits],
            item=item, problem=call.problem,
        ))
        answered.append(item)
    return answered


def _hit(hit: SearchHit) -> dict[str, Any]:
    return {"alias": hit.alias, "server": hit.server, "tool": hit.tool, "score": round(hit.score, 3)}
