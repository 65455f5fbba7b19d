"""Verify a proxy's passed-through host tasks (``proxy/tasks.py``).

A host task is recorded once (``proxy_task``): the proxy's task id the host was given,
the (server, connection, upstream task id) it stands for, and the host that owns it. On
top of ``host_answered_once``:

- the ``tools/call`` that created it (route ``task``): ``upstream_paired``, one
  ``tools/call`` with the host's task params on that connection, by the route's MCP id and
  the proxy's key; ``task_mapped`` (correlation), the task recorded under that key is the
  one the upstream created, and the host's answer is the upstream's ``CreateTaskResult``
  with only the task id said as the proxy's;
- each host ``tasks/get`` / ``tasks/result`` / ``tasks/cancel``: ``task_owned`` (routing),
  the id the host named is a task of that host's, sent to its own server and connection
  with its upstream id (never found by the upstream id alone: two servers may both say
  ``task-1``); ``upstream_paired``, one request of the host's method carrying that
  upstream id, answered once; ``passed_on``, the host's answer is that upstream answer,
  the task id mapped, nothing else changed (an error, the same error); a task id of no
  task of that host's was sent nowhere and answered with an error;
- ``tasks/list`` (``listed``): every task in the host's answer is one of its own, as an
  upstream answer under the request's key reports it, id mapped; none is left out;
- each ``notifications/tasks/status`` passed on (``status_owned``): sent to the host that
  owns the task, for the task the upstream named, its params unchanged but for the id.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final, Protocol

from ..protocol.mcp import RELATED_TASK
from ..protocol.passthrough import passed_on, with_task_id
from ..protocol.tasks_ext import (
    as_2025_task,
    as_ext_task,
    ended_ext_task,
    lost_task_error,
    settled_message,
    with_locked_names,
)
from ..protocol.versions import MODERN_VERSIONS
from ..redaction import REDACTED
from .proxy_answers import Event, Say, Triple, passed_error
from .proxy_forgotten import forgotten_before
from .proxy_task_owners import era_of, owned_by, owner_text
from .verdict import Finding

__all__ = ["TASK_METHODS", "Legs", "judge_bridged", "judge_created", "judge_statuses", "judge_task_request",
           "state_before"]

TASK_METHODS: Final = frozenset({"tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update"})



class Legs(Protocol):
    requests: dict[Triple, list[Event]]
    responses: dict[Triple, list[Event]]
    sent_for: dict[str, list[Event]]
    tasks: dict[str, Event]
    task_keys: dict[str, list[Event]]
    routes: dict[str, list[Event]]
    host_in: dict[str, list[Event]]
    forgotten: dict[str, Event]


def mapped(result: Any, upstream_id: Any, task_id: Any) -> Any:
    """``result`` as the host should get it: the upstream's task id said as the proxy's, as
    the proxy says it (``passthrough.with_task_id``); a result that is no object as it is."""
    return with_task_id(result, upstream_id, task_id) if isinstance(result, dict) else result


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """A result without its leg's envelope, its related-task meta kept (the spec's)."""
    out = passed_on(result)
    meta = result.get("_meta")
    if isinstance(meta, dict) and RELATED_TASK in meta:
        out["_meta"] = {**(out.get("_meta") or {}), RELATED_TASK: meta[RELATED_TASK]}
    return out


def _one_upstream(said: Say, route: Event, legs: Legs, key: str, method: str
                  ) -> tuple[Finding, Event | None, Event | None]:
    triple = (route.get("server"), route.get("connection"), route.get("mcp_id"))
    requests, responses = legs.requests.get(triple, []), legs.responses.get(triple, [])
    name = f"{triple[0]} connection {triple[1]} id {triple[2]!r}"
    if len(requests) != 1 or len(responses) != 1:
        return (said("correlation", "upstream_paired", False, f"upstream {name}: {len(requests)} requests "
                     f"and {len(responses)} responses recorded, not one each", route, *requests, *responses),
                None, None)
    request, response = requests[0], responses[0]
    problem = ("it carries another key" if request.get("call_id") != key or response.get("call_id") != key
               else f"it is no {method}" if request.get("message", {}).get("method") != method else "")
    return (said("correlation", "upstream_paired", not problem,
                 f"upstream {name}: {problem}" if problem else f"paired with upstream {name}, answered once",
                 request, response), request, response)


def _passed(said: Say, response: Event, answer: Event, upstream_id: Any, task_id: Any) -> Finding:
    error = passed_error(said, response, answer)
    if error is not None:
        return error
    upstream, host = response.get("message", {}), answer.get("message", {})
    result, got = upstream.get("result"), host.get("result")
    if not isinstance(result, dict) or not isinstance(got, dict):
        return said("feedback", "passed_on", False, "the host's answer is not the upstream result",
                    response, answer)
    same = mapped(comparable(result), upstream_id, task_id) == comparable(got)
    return said("feedback", "passed_on", same,
                f"the upstream answer passed on, task id {upstream_id!r} said as {task_id!r}" if same
                else "the host's answer differs from the upstream answer it passes on (task id aside)",
                response, answer)


def judge_created(said: Say, received: Event, route: Event, answer: Event, legs: Legs, key: str
                  ) -> list[Finding]:
    """The host ``tools/call`` that created a task (route ``task``)."""
    paired, request, response = _one_upstream(said, route, legs, key, "tools/call")
    if request is None or response is None:
        return [paired]
    params = request.get("message", {}).get("params") or {}
    host_params = received.get("message", {}).get("params") or {}
    same = [params.get(k) == host_params.get(k) for k in ("arguments", "task")]
    if params.get("name") != route.get("tool") or not all(same):
        paired = said("correlation", "upstream_paired", False, "the upstream tools/call is not the host's "
                      "(its tool, arguments or task params differ)", request, response)
    created = (response.get("message", {}).get("result") or {}).get("task") or {}
    upstream_id = created.get("taskId") if isinstance(created, dict) else None
    recorded = legs.task_keys.get(key, [])
    task = recorded[0] if len(recorded) == 1 else None
    where = (route.get("server"), route.get("connection"), upstream_id)
    if task is None or (task.get("server"), task.get("connection"), task.get("upstream_task_id")) != where \
            or not owned_by(task, received, legs.host_in):
        said_task = f"{len(recorded)} tasks recorded under it" if task is None else (
            f"the task recorded stands for {task.get('server')}'s {task.get('upstream_task_id')!r} of host "
            f"{task.get('host')!r} ({owner_text(task, legs.host_in)}), not the task {upstream_id!r} of this "
            "host's the upstream created")
        return [paired, said("correlation", "task_mapped", False, said_task, route, *recorded)]
    mapping = said("correlation", "task_mapped", True,
                   f"task {task.get('task_id')!r} stands for {task.get('server')}'s {upstream_id!r}", task)
    return [paired, mapping, _passed(said, response, answer, upstream_id, task.get("task_id"))]


def judge_task_request(said: Say, received: Event, route: Event, answer: Event, legs: Legs, key: str
                       ) -> list[Finding]:
    """A host ``tasks/*`` request."""
    decision, method = route.get("decision"), received.get("method")
    if decision == "listed":
        return [_listed(said, received, answer, legs, key)]
    if decision in ("unknown", "failed", "refused"):  # refused: a state never given (proxy_task_states)
        sent = [e for e in legs.sent_for.get(key, []) if decision != "failed"]
        acknowledged = method in (_UPDATE, "tasks/cancel") and "result" in answer.get("message", {}) and \
            received.get("protocol_version") in MODERN_VERSIONS and decision == "unknown"  # the SEP: even so
        ok = not sent and ("error" in answer.get("message", {}) or acknowledged)
        what = f"{decision} ({route.get('reason')})"
        return [said("routing", "task_owned", ok, f"{what}: answered with an error" if ok
                     else f"{what}, yet sent upstream or not answered an error", route, answer, *sent)]
    named = (received.get("message", {}).get("params") or {}).get("taskId")
    task = legs.tasks.get(str(named))
    sent_to = (route.get("alias"), route.get("server"), route.get("connection"), route.get("tool"))
    owned = task is not None and owned_by(task, received, legs.host_in) and sent_to == \
        (named, task.get("server"), task.get("connection"), task.get("upstream_task_id"))
    if task is None or not owned:
        why = "no task of the proxy's has that id" if task is None else (
            f"it is host {task.get('host')!r}'s task {task.get('server')}/{task.get('upstream_task_id')!r} "
            f"({owner_text(task, legs.host_in)}), and was sent to "
            f"{route.get('server')}/{route.get('tool')!r} for host {received.get('host')!r} "
            f"(a {era_of(received.get('protocol_version'))} host)")
        return [said("routing", "task_owned", False, f"{method} of task {named!r}: {why}", route)]
    found = [said("routing", "task_owned", True, f"{method} of the host's task {named!r} → "
                  f"{task.get('server')}'s {task.get('upstream_task_id')!r}", route, task)]
    paired, request, response = _one_upstream(said, route, legs, key, str(method))
    if request is None or response is None:
        return [*found, paired]
    if (request.get("message", {}).get("params") or {}).get("taskId") != task.get("upstream_task_id"):
        paired = said("correlation", "upstream_paired", False, f"the upstream {method} names another task "
                      f"than {task.get('upstream_task_id')!r}", request)
    return [*found, paired, _passed(said, response, answer, task.get("upstream_task_id"), named)]


def _listed(said: Say, received: Event, answer: Event, legs: Legs, key: str) -> Finding:
    got = (answer.get("message", {}).get("result") or {}).get("tasks")
    if not isinstance(got, list):
        return said("feedback", "passed_on", False, "tasks/list answered without a tasks array", answer)
    reported: dict[str, Any] = {}  # proxy task id → the task as its upstream reported it, mapped
    upstream_events: list[Event] = []
    by_upstream: dict[Triple, Event] = {}  # (server, connection, upstream task id) → its first task
    for made in legs.tasks.values():
        where = (made.get("server"), made.get("connection"), made.get("upstream_task_id"))
        by_upstream.setdefault(where, made)
    for request in legs.sent_for.get(key, []):
        triple = (request.get("server"), request.get("connection"), request.get("mcp_id"))
        for response in legs.responses.get(triple, []):
            upstream_events.append(response)
            result = response.get("message", {}).get("result") or {}
            listing = request.get("message", {}).get("method") == "tasks/list"
            items = result.get("tasks") if listing else [result]
            for item in items if isinstance(items, list) else []:
                upstream_id = item.get("taskId") if isinstance(item, dict) else None
                task = by_upstream.get((triple[0], triple[1], upstream_id))
                if task is not None and task.get("host") == received.get("host") and \
                        not forgotten_before(legs.forgotten, task["task_id"], int(answer["seq"])):
                    reported[str(task["task_id"])] = mapped(comparable(item), task["upstream_task_id"],
                                                            task["task_id"])
    reported |= _bridged_listed(legs, received, answer)
    host_items = {str(item.get("taskId")): comparable(item) for item in got if isinstance(item, dict)}
    if host_items != reported:
        foreign = sorted(set(host_items) - set(reported))
        lost = sorted(set(reported) - set(host_items))
        return said("feedback", "passed_on", False, "the host's task list is not its own tasks as their "
                    f"servers reported them (not the host's or changed: {foreign}; left out: {lost})",
                    answer, *upstream_events)
    return said("feedback", "passed_on", True, f"the host's {len(host_items)} tasks, as their servers "
                "reported them, ids mapped", answer, *upstream_events)


def _bridged_listed(legs: Legs, received: Event, answer: Event) -> dict[str, Any]:
    """The host's bridged tasks (a 2025 host's, ``task_bridge.py``) made before its
    ``tasks/list`` was answered, each as the upstream task's latest state before that
    answer says it in 2025 terms (``cancelled`` once an upstream ``tasks/cancel`` was answered)."""
    expected: dict[str, Any] = {}
    seq = int(answer["seq"])
    for task in legs.tasks.values():
        key = str(task.get("key"))
        bridged = any(route.get("decision") == "bridged" for route in legs.routes.get(key, []))
        if not (bridged and owned_by(task, received, legs.host_in) and task["seq"] < seq) or \
                forgotten_before(legs.forgotten, task.get("task_id"), seq):
            continue
        state = state_before(legs, task, seq)
        if state is None:
            continue
        shown = as_2025_task(state["message"]["result"], str(task.get("task_id")))
        if _cancelled_before(legs, task, seq):
            shown = {**shown, "status": "cancelled"}
        expected[str(task.get("task_id"))] = comparable(shown)
    return expected


def _cancelled_before(legs: Legs, task: Event, seq: int) -> bool:
    for request in legs.sent_for.get(str(task.get("key")), []):
        if request.get("message", {}).get("method") != "tasks/cancel":
            continue
        triple = (request.get("server"), request.get("connection"), request.get("mcp_id"))
        if any(r["seq"] < seq and "result" in r.get("message", {}) for r in legs.responses.get(triple, [])):
            return True
    return False


def judge_statuses(statuses: list[Event], legs: Legs) -> list[Finding]:
    """Each ``notifications/tasks/status`` passed on."""
    found = []
    for status in statuses:
        task = legs.tasks.get(str(status.get("task_id")))
        upstream = (status.get("upstream") or {}).get("params") or {}
        problem = ""
        if task is None:
            problem = "for no task of the proxy's"
        elif status.get("to_host") != task.get("host"):
            problem = (f"sent to host {status.get('to_host')!r}, which does not own it "
                       f"(host {task.get('host')!r} does)")
        elif (status.get("server"), status.get("connection"), upstream.get("taskId")) != \
                (task.get("server"), task.get("connection"), task.get("upstream_task_id")):
            problem = f"{status.get('server')} told of {upstream.get('taskId')!r}, not the task it names"
        elif mapped(upstream, task.get("upstream_task_id"), task.get("task_id")) != status.get("host"):
            problem = "its params changed on the way (task id aside)"
        seqs = (status["seq"], *((task["seq"],) if task is not None else ()))
        found.append(Finding(link="correlation", check="status_owned", ok=not problem, seqs=seqs,
                             call_id=task.get("key") if task is not None else None,
                             message=f"task status of {status.get('task_id')!r}: "
                                     + (problem or "passed on to the host that owns it, id mapped")))
    return found


# -- bridged tasks: a 2025 host's task, run upstream as a 2026 extension task (task_bridge.py) --

_STATES: Final = frozenset({"tools/call", "tasks/get"})
_RESULT: Final = frozenset({"tasks/result"})
_UPDATE: Final = "tasks/update"
_LEG_KEYS: Final = frozenset({"resultType", "requestState", "inputRequests", "_meta"})
"""A 2026 task state's keys of its own leg (each side has its requestState and input keys)."""


def _upstream_at(legs: Legs, route: Event) -> tuple[Event | None, Event | None]:
    triple = (route.get("server"), route.get("connection"), route.get("mcp_id"))
    requests, responses = legs.requests.get(triple, []), legs.responses.get(triple, [])
    if len(requests) != 1 or len(responses) != 1:
        return None, None
    return requests[0], responses[0]


def _answers_before(legs: Legs, task: Event, seq: int, methods: frozenset[str]
                    ) -> Iterator[tuple[Event, Event]]:
    """The follower's upstream requests of ``task`` (its key's) by one of ``methods``, each
    with an answer recorded before ``seq``."""
    for request in legs.sent_for.get(str(task.get("key")), []):
        if request.get("message", {}).get("method") not in methods:
            continue
        triple = (request.get("server"), request.get("connection"), request.get("mcp_id"))
        for response in legs.responses.get(triple, []):
            if response["seq"] < seq:
                yield request, response


def _result_before(legs: Legs, task: Event, seq: int) -> Event | None:
    """The answer to the follower's ``tasks/result`` of ``task`` recorded before ``seq``, if any."""
    return next((response for request, response in _answers_before(legs, task, seq, _RESULT)
                 if (request["message"].get("params") or {}).get("taskId") == task.get("upstream_task_id")),
                None)


def state_before(legs: Legs, task: Event, seq: int) -> Event | None:
    """The upstream task's latest state recorded before ``seq`` (its CreateTaskResult's, then
    each ``tasks/get`` answer's), as the proxy's follower took them in."""
    latest: Event | None = None
    for _, response in _answers_before(legs, task, seq, _STATES):
        result = response.get("message", {}).get("result")
        made = result.get("task") if isinstance(result, dict) else None  # a 2025 CreateTaskResult's
        state = made if isinstance(made, dict) else result
        if isinstance(state, dict) and state.get("taskId") == task.get("upstream_task_id") and \
                (latest is None or response["seq"] > latest["seq"]):
            latest = response
    return latest


def judge_bridged(said: Say, received: Event, route: Event, answer: Event, legs: Legs, key: str
                  ) -> list[Finding]:
    """A host request answered from a bridged task (route ``bridged``)."""
    method = received.get("method")
    if method == "tools/call":
        recorded = legs.task_keys.get(key, [])
        task = recorded[0] if len(recorded) == 1 else None
        named: Any = task.get("task_id") if task is not None else None
    else:
        named = (received.get("message", {}).get("params") or {}).get("taskId")
        task = legs.tasks.get(str(named))
    creating = method == "tools/call"
    sent = route.get("mcp_id") is not None  # else no connection is named: nothing was sent upstream
    connection = route.get("connection") if sent or task is None else task.get("connection")
    where = (route.get("server"), connection, None if creating else route.get("tool"))
    owned = task is not None and owned_by(task, received, legs.host_in) and where == (
        task.get("server"), task.get("connection"), None if creating else task.get("upstream_task_id"))
    if task is None or not owned or (not creating and route.get("alias") != named):
        whose = f" ({owner_text(task, legs.host_in)}'s, and this is a " \
            f"{era_of(received.get('protocol_version'))} host's request)" if task is not None else ""
        return [said("routing", "task_owned", False, f"{method} of bridged task {named!r}: no task of this "
                     f"host's stands for the upstream task it was answered from{whose}", route)]
    legacy = _from_2025(legs, task)
    kind = "2025-11-25 task" if legacy else "extension task"
    found = [said("routing", "task_owned", True, f"{method} of the host's task {named!r} ↔ "
                  f"{task.get('server')}'s {kind} {task.get('upstream_task_id')!r}", route, task)]
    if route.get("mcp_id") is None and method in (_UPDATE, "tasks/cancel"):  # a 2026 host's: nothing sent
        return [*found, _unsent(said, received, answer, legs, task)]
    request, response = _upstream_at(legs, route)
    upstream = f"{route.get('server')} connection {route.get('connection')} id {route.get('mcp_id')!r}"
    if request is None or response is None or request.get("call_id") != task.get("key"):
        return [*found, said("correlation", "upstream_paired", False, f"upstream {upstream}: not one request "
                             "and one response of the task's own call", route)]
    asked = request.get("message", {})
    if creating:
        params, host_params = asked.get("params") or {}, received.get("message", {}).get("params") or {}
        same = params.get("name") == route.get("tool") and params.get("arguments", {}) == host_params.get(
            "arguments", {})
        if asked.get("method") != "tools/call" or not same:
            return [*found, said("correlation", "upstream_paired", False, f"upstream {upstream} is not the "
                                 "host's tools/call (its tool or arguments differ)", request)]
    found.append(said("correlation", "upstream_paired", True, f"rests on upstream {upstream}", request,
                      response))
    modern = received.get("protocol_version") in MODERN_VERSIONS
    if modern and legacy:
        return [*found, _modern_on_2025(said, str(method), asked, response, answer, legs, task)]
    judge = _modern_answer if modern else _bridged_answer
    return [*found, judge(said, str(method), asked, response, answer, legs, task)]


def _from_2025(legs: Legs, task: Event) -> bool:
    """Whether the bridged task is a 2025-11-25 server's: its call went upstream with ``task``."""
    return any(request.get("message", {}).get("method") == "tools/call"
               and isinstance((request.get("message", {}).get("params") or {}).get("task"), dict)
               for request in legs.sent_for.get(str(task.get("key")), []))


def _as_ext(result: Any, task_id: str) -> Any:
    """A 2025-11-25 task state (a ``tasks/get`` answer or a ``CreateTaskResult``) in the
    extension's terms, as the proxy shows it a 2026-07-28 host."""
    if not isinstance(result, dict):
        return result
    made = result.get("task")
    return as_ext_task(made if isinstance(made, dict) else result, task_id)


_ENDS = {"completed": "result", "failed": "error"}
"""What an extension task that ended carries (SEP-2663): a 2026-07-28 host reads its end there."""


def _modern_on_2025(said: Say, method: str, asked: dict[str, Any], response: Event, answer: Event,
                    legs: Legs, task: Event) -> Finding:
    """A 2026-07-28 host's answer from a 2025-11-25 server's task: the upstream state in the
    extension's terms; its end as the upstream ``tasks/result`` gave it; cancelled once the
    upstream ``tasks/cancel`` was answered."""
    got = answer.get("message", {}).get("result")
    task_id = str(task.get("task_id"))
    upstream = asked.get("method")
    if upstream in ("tasks/cancel", "tasks/result"):
        state = state_before(legs, task, int(response["seq"]))
        if state is None:
            return said("correlation", "task_state", False, f"no upstream task state before its {upstream}",
                        response)
        before = _as_ext(state["message"]["result"], task_id)
        if upstream == "tasks/cancel":
            refused = "error" in response.get("message", {})
            if method == "tasks/cancel":
                ok = isinstance(got, dict) and not refused
                return said("feedback", "passed_on", ok, "cancelled upstream (the 2025 tasks/cancel), "
                            "acknowledged" if ok else "the upstream refused tasks/cancel", response, answer)
            if refused:
                return said("feedback", "passed_on", False, "the host was told its task cancelled, yet the "
                            "upstream refused tasks/cancel", response, answer)
            kept = {k: v for k, v in before.items() if k not in ("result", "error")}
            ok = _modern_view(got, task_id) == kept | {"status": "cancelled"}
            return said("feedback", "passed_on", ok, "the host told its task cancelled" if ok
                        else "the host's task state is not the upstream task's, cancelled", response, answer)
        shown: Any = ended_ext_task(before, response.get("message", {}))
    elif "error" in response.get("message", {}):  # its tasks/get refused: the server lost the task
        return _lost(said, response, answer, legs, task)
    else:
        shown = _as_ext(response.get("message", {}).get("result"), task_id)
        end = _result_before(legs, task, int(answer["seq"])) if upstream == "tools/call" else None
        if end is not None and isinstance(shown, dict) and shown.get("status") in _ENDS:
            shown = ended_ext_task(shown, end.get("message", {}))  # ended as it was made: with its end
    want = "task" if method == "tools/call" else "complete"
    status = shown.get("status") if isinstance(shown, dict) else None
    if status in _ENDS and isinstance(got, dict) and _ENDS[status] not in got:
        return said("feedback", "passed_on", False, f"the host was told its task {status} without its "
                    f"{_ENDS[status]}", response, answer)
    ok = isinstance(got, dict) and got.get("resultType") == want and \
        _modern_view(got, task_id) == _modern_view(shown, task_id)
    return said("feedback", "passed_on", ok, f"the 2025 upstream task's state ({status}) in the "
                "extension's terms, the proxy's id and requestState" if ok else "the host's task state is "
                "not the upstream task state it rests on", response, answer)


def _lost(said: Say, response: Event, answer: Event, legs: Legs, task: Event) -> Finding:
    """A 2026-07-28 host's answer from a 2025-11-25 server's task whose ``tasks/get`` answered
    an error: the task ``failed``, its error the proxy's saying the server lost it, quoting
    the server's error (``[redacted]`` where the proxy redacted it)."""
    task_id = str(task.get("task_id"))
    state = state_before(legs, task, int(response["seq"]))
    got = answer.get("message", {}).get("result")
    if state is None or not isinstance(got, dict):
        return said("feedback", "passed_on", False, "no task state of the host's, or no upstream task state "
                    "before the tasks/get that lost it", response, answer)
    lost = lost_task_error(str(task.get("server")), str(task.get("upstream_task_id")),
                           response["message"]["error"])
    expected = ended_ext_task(_as_ext(state["message"]["result"], task_id), {"error": lost})
    error = got.get("error")
    told = error.get("message") if isinstance(error, dict) else None
    quoted = isinstance(told, str) and _redacted_from(told, str(lost["message"])) and \
        isinstance(error, dict) and error.get("code") == lost["code"]
    same = _modern_view({**got, "error": lost}, task_id) == _modern_view(expected, task_id)
    ok = quoted and same and got.get("resultType") == "complete"
    return said("feedback", "passed_on", ok, "the upstream lost the task: the host told it failed, quoting "
                "the upstream's error" if ok else "the host was not told its task failed with the upstream's "
                "error (the upstream lost the task)", response, answer)


def _redacted_from(told: str, said: str) -> bool:
    """Whether ``told`` is ``said``, but for parts of it redacted (``[redacted]``)."""
    pattern = ".+?".join(re.escape(part) for part in told.split(REDACTED))
    return re.fullmatch(pattern, said, flags=re.DOTALL) is not None


def _unsent(said: Say, received: Event, answer: Event, legs: Legs, task: Event) -> Finding:
    """A 2026-07-28 host's ``tasks/update`` (its answers go upstream in the follower's own
    ``tasks/update``), or its ``tasks/cancel`` of a task that had ended: acknowledged."""
    acknowledged = (answer.get("message", {}).get("result") or {}) == {} or \
        passed_on(answer.get("message", {}).get("result") or {}) == {}
    given = (received.get("message", {}).get("params") or {}).get("inputResponses") or {}
    sent: dict[str, Any] = {}
    for request in legs.sent_for.get(str(task.get("key")), []):
        message = request.get("message", {})
        if message.get("method") == _UPDATE:
            sent.update((message.get("params") or {}).get("inputResponses") or {})
    lost = sorted(k for k, v in given.items() if k in sent and sent[k] != v)
    ok = acknowledged and not lost
    return said("feedback", "passed_on", ok, f"acknowledged; {len(given)} input response(s) of the host's "
                "sent upstream as given" if ok else f"not acknowledged, or input responses {lost} went "
                "upstream changed", answer)


def _modern_view(result: Any, task_id: Any) -> Any:
    """A task state as verify compares it for a 2026-07-28 host: the leg's own keys off, an
    older draft's names as the locked spec's (a server on that draft; a transcript from before)."""
    if not isinstance(result, dict):
        return result
    return {k: v for k, v in with_locked_names(result).items() if k not in _LEG_KEYS} | {"taskId": task_id}


def _cancel_state(said: Say, asked: dict[str, Any], response: Event, legs: Legs, task: Event
                  ) -> tuple[Event, None] | tuple[None, Finding]:
    """The upstream task state an upstream ``tasks/cancel`` rests on, or the finding that it
    did not echo that state's latest ``requestState``."""
    state = state_before(legs, task, int(response["seq"]))
    echoed = (asked.get("params") or {}).get("requestState")
    latest = (state or {}).get("message", {}).get("result", {}).get("requestState")
    if state is None or echoed != latest:
        return None, said("correlation", "task_state", False, "the upstream tasks/cancel did not echo the "
                          f"latest requestState ({echoed!r}, not {latest!r})", response)
    return state, None


def _modern_answer(said: Say, method: str, asked: dict[str, Any], response: Event, answer: Event,
                   legs: Legs, task: Event) -> Finding:
    got = answer.get("message", {}).get("result")
    task_id = task.get("task_id")
    if asked.get("method") == "tasks/cancel":
        state, stale = _cancel_state(said, asked, response, legs, task)
        if state is None:
            assert stale is not None
            return stale
        if method == "tasks/cancel":
            return said("feedback", "passed_on", isinstance(got, dict), "cancelled upstream (the latest "
                        "requestState echoed), acknowledged", response, answer)
        before = _modern_view(state["message"]["result"], task_id)
        expected = {k: v for k, v in before.items() if k not in ("result", "error")} | {"status": "cancelled"}
        ok = _modern_view(got, task_id) == expected
        return said("feedback", "passed_on", ok, "the host told its task cancelled" if ok
                    else "the host's task state is not the upstream task's, cancelled", response, answer)
    shown = response.get("message", {}).get("result")
    want = "task" if method == "tools/call" else "complete"
    status = shown.get("status") if isinstance(shown, dict) else None
    if status in _ENDS and isinstance(got, dict) and _ENDS[status] not in got:
        return said("feedback", "passed_on", False, f"the host was told its task {status} without its "
                    f"{_ENDS[status]}", response, answer)
    ok = isinstance(got, dict) and got.get("resultType") == want and \
        _modern_view(got, task_id) == _modern_view(shown, task_id)
    return said("feedback", "passed_on", ok, f"the upstream task's state ({status}), the proxy's id and "
                "requestState" if ok else "the host's task state is not the upstream task state it rests on",
                response, answer)


def _bridged_answer(said: Say, method: str, asked: dict[str, Any], response: Event, answer: Event,
                    legs: Legs, task: Event) -> Finding:
    host = answer.get("message", {})
    got = comparable(host["result"]) if isinstance(host.get("result"), dict) else None
    shown = response.get("message", {}).get("result")
    task_id = str(task.get("task_id"))
    if asked.get("method") == "tasks/cancel":
        state, stale = _cancel_state(said, asked, response, legs, task)
        if state is None:
            assert stale is not None
            return stale
        if method == "tasks/result":
            ok = "error" in host
            return said("feedback", "passed_on", ok, "the host's task was cancelled: answered with an error"
                        if ok else "the host's cancelled task was answered with a result", response, answer)
        expected: Any = {**as_2025_task(state["message"]["result"], task_id), "status": "cancelled"}
        ok = got == expected
        return said("feedback", "passed_on", ok, "cancelled upstream (the latest requestState echoed); the "
                    "host told its task cancelled" if ok else "the host's task state is not the upstream "
                    "task's, cancelled", response, answer)
    if not isinstance(shown, dict) or asked.get("method") not in _STATES:
        return said("feedback", "passed_on", False, "the upstream answer is no task state", response, answer)
    if method == "tasks/result":
        settled = settled_message(host.get("id"), response.get("message", {}))
        if isinstance(settled, str):
            return said("feedback", "passed_on", False, f"the upstream task gave no result: {settled}",
                        response, answer)
        error = passed_error(said, {**response, "message": settled}, answer)  # as the task ended
        if error is not None:
            return error
        result = dict(settled["result"])
        result["_meta"] = {**(result.get("_meta") or {}), RELATED_TASK: {"taskId": task_id}}
        ok = got == comparable(result)
        return said("feedback", "passed_on", ok, f"the upstream task's result, as the host's task {task_id!r}"
                    if ok else "the host's answer is not the result the upstream task ended with", response,
                    answer)
    state = as_2025_task(shown, task_id)
    ok = (got == {"task": state}) if method == "tools/call" else got == state
    return said("feedback", "passed_on", ok, f"the upstream task's state ({shown.get('status')}) in 2025 "
                "terms" if ok else "the host's task state is not the upstream task state it rests on",
                response, answer)
