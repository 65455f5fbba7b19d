"""Verify the ``requestState`` a 2026-07-28 host names in its ``tasks/get``, ``tasks/update``
and ``tasks/cancel`` of a bridged task (``proxy/task_bridge.py``).

Each task message the proxy sends such a host carries a ``requestState`` of the proxy's
own; a request naming one the proxy never gave for that task is refused (-32602, route
``refused``), as SEP-2663 lets a server refuse a state it did not issue; one naming none
is taken (a host that keeps no state). ``state_given`` (correlation) holds each request
that names a state to that: taken only when an answer of the proxy's before it gave that
state for that task, refused only when none did.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..protocol.versions import MODERN_VERSIONS
from .proxy_answers import Event
from .verdict import Finding

__all__ = ["judge_states"]

_METHODS: Final = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})
_JUDGED: Final = frozenset({"bridged", "refused"})


def judge_states(host_in: Mapping[str, list[Event]], host_out: Mapping[str, list[Event]],
                 routes: Mapping[str, list[Event]], tasks: Mapping[str, Event]) -> list[Finding]:
    """One finding per 2026-07-28 host request naming a ``requestState`` of a bridged task."""
    given = _given(host_out, tasks)
    found = []
    for key, received in host_in.items():
        first = received[0]
        params = (first.get("message") or {}).get("params") or {}
        routed = routes.get(key) or [{}]
        if first.get("method") not in _METHODS or first.get("protocol_version") not in MODERN_VERSIONS \
                or not isinstance(params, dict) or params.get("requestState") is None \
                or routed[-1].get("decision") not in _JUDGED:
            continue
        state, named = params["requestState"], params.get("taskId")
        gave = [seq for seq, said in given.get(str(named), []) if said == state and seq < int(first["seq"])]
        refused = routed[-1].get("decision") == "refused"
        ok = bool(gave) != refused
        what = (f"refused: requestState {state!r} was never given for task {named!r}" if refused and ok
                else f"refused requestState {state!r}, which the proxy gave for task {named!r}" if refused
                else f"requestState {state!r}, one the proxy gave for task {named!r}" if ok
                else f"taken though requestState {state!r} was never given for task {named!r}")
        host_id = (first.get("message") or {}).get("id")
        found.append(Finding(link="correlation", check="state_given", ok=ok, call_id=key, mcp_id=host_id,
                             seqs=(int(first["seq"]), *gave[:1], *(int(r["seq"]) for r in routed if r)),
                             message=f"host request {key} (host id {host_id!r}): {what}"))
    return found


def _given(host_out: Mapping[str, list[Event]], tasks: Mapping[str, Event]
           ) -> dict[str, list[tuple[int, Any]]]:
    """Task id → (seq, requestState) of each answer of the proxy's that named the task."""
    given: dict[str, list[tuple[int, Any]]] = {}
    for answers in host_out.values():
        for answer in answers:
            result = (answer.get("message") or {}).get("result")
            if isinstance(result, dict) and str(result.get("taskId")) in tasks and "requestState" in result:
                said = (int(answer["seq"]), result["requestState"])
                given.setdefault(str(result["taskId"]), []).append(said)
    return given
