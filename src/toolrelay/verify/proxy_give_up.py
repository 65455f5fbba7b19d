"""Verify the bridged tasks the proxy gave up on (``proxy_task_abandoned``, ``proxy/task_bridge.py``).

A task's host gave no answer to what the task asked within ``--input-wait`` (or left), so
the proxy answered what was pending itself and cancelled the task upstream. Each such
record is ``task_abandoned`` (correlation) when:

- the upstream ``tasks/cancel`` it names was sent for that task, on its connection,
  answered once, and echoed the task's latest ``requestState`` (an extension task's; a
  2025-11-25 task has none);
- every request the upstream asked during the task's call before that cancel was answered
  upstream before the cancel was sent; those the record names as the proxy's own
  (``declined``) by a ``proxy_ask`` of the proxy's with the give-up's reason, and with
  the decline itself (an elicitation ``{"action": "cancel"}``, anything else an error);
- the record's ``outcome`` is the cancel's answer (``cancelled`` only when it was
  acknowledged), and when it was refused no answer of the host's about the task after it
  says ``cancelled``: the host is shown the upstream's own end (the task's other answers
  are held to the upstream message each rests on by ``proxy_tasks``).
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from .proxy_answers import Event
from .proxy_passing import Passing
from .proxy_tasks import Legs, state_before
from .verdict import Finding

__all__ = ["judge_abandoned"]

ELICIT: Final = "elicitation/create"


class GiveUpLegs(Legs, Protocol):
    host_out: dict[str, list[Event]]
    passing: Passing


def judge_abandoned(abandoned: list[Event], legs: GiveUpLegs) -> list[Finding]:
    """Each bridged task the proxy gave up on."""
    found = []
    for event in abandoned:
        task = legs.tasks.get(str(event.get("task_id")))
        triple = (event.get("server"), event.get("connection"), event.get("mcp_id"))
        requests, responses = legs.requests.get(triple, []), legs.responses.get(triple, [])
        problem = _cancel_problem(event, task, requests, responses, legs)
        if task is not None and not problem:
            problem = _asks_problem(event, task, requests[0]["seq"], legs.passing) or \
                _shown_problem(event, task, responses[0], legs)
        seqs = (event["seq"], *(r["seq"] for r in (*requests, *responses)))
        said = problem or _how_it_ended(event, responses[0])
        found.append(Finding(link="correlation", check="task_abandoned", ok=not problem, seqs=seqs,
                             call_id=task.get("key") if task is not None else None,
                             message=f"task {event.get('task_id')!r} given up ({event.get('reason')}): "
                                     f"{said}"))
    return found


def _cancel_problem(event: Event, task: Event | None, requests: list[Event], responses: list[Event],
                    legs: Legs) -> str:
    """What is wrong with the upstream ``tasks/cancel`` the record names ('': nothing)."""
    asked = requests[0].get("message", {}) if len(requests) == 1 else {}
    if task is None:
        return "for no task of the proxy's"
    if asked.get("method") != "tasks/cancel" or len(responses) != 1:
        return "no upstream tasks/cancel recorded for it"
    if (asked.get("params") or {}).get("taskId") != task.get("upstream_task_id") or \
            (event.get("server"), event.get("connection")) != (task.get("server"), task.get("connection")):
        return "the upstream tasks/cancel names another task"
    state = state_before(legs, task, int(responses[0]["seq"]))
    echoed = (asked.get("params") or {}).get("requestState")
    latest = (state or {}).get("message", {}).get("result", {}).get("requestState")
    if state is None or echoed != latest:
        return f"the upstream tasks/cancel did not echo the latest requestState ({echoed!r}, not {latest!r})"
    return ""


def _asks_problem(event: Event, task: Event, cancel_seq: int, passing: Passing) -> str:
    """What is wrong with how the task's asks were answered before the cancel ('': nothing)."""
    key, server, connection = task.get("key"), task.get("server"), task.get("connection")
    declined = event.get("declined") or []
    own = {str(ask.get("upstream_id")) for ask in passing.asks if ask.get("key") == key
           and ask.get("answered_by") == "proxy" and ask.get("reason") == event.get("reason")}
    asked_ids = []
    for (from_server, mcp_id), asked in passing.server_requests.items():
        request = next((e for e in asked if e.get("call_id") == key and e.get("connection") == connection
                        and e["seq"] < cancel_seq), None)
        if from_server != server or request is None:
            continue
        asked_ids.append(mcp_id)
        name = f"{request.get('method')} (its id {mcp_id!r})"
        reply = next((r for r in passing.replies.get((server, mcp_id), []) if r["seq"] < cancel_seq), None)
        if reply is None:
            return f"{name} was not answered upstream before the tasks/cancel"
        if mcp_id not in declined:
            continue  # its host answered it in time
        if str(mcp_id) not in own:
            return f"{name}: no answer of the proxy's recorded with the give-up's reason"
        if not _is_decline(request.get("method"), reply.get("message", {})):
            return f"{name}: what went upstream is not the proxy's decline"
    unasked = [mcp_id for mcp_id in declined if mcp_id not in asked_ids]
    return f"the proxy is recorded answering {unasked!r}, which the task did not ask" if unasked else ""


def _is_decline(method: Any, reply: Event) -> bool:
    """The proxy's own answer to an ask of a task given up (``TaskBridge._declined``)."""
    if method == ELICIT:
        return reply.get("result") == {"action": "cancel"}
    return "error" in reply


def _shown_problem(event: Event, task: Event, response: Event, legs: GiveUpLegs) -> str:
    """What is wrong with the record's outcome, or what the host was told after ('': nothing)."""
    acknowledged = "result" in response.get("message", {})
    outcome = event.get("outcome", "cancelled")  # (older records: no outcome, always cancelled)
    if (outcome == "cancelled") != acknowledged:
        return f"recorded {outcome!r}, yet the upstream {'acknowledged' if acknowledged else 'refused'} " \
               "the tasks/cancel"
    if acknowledged:
        return ""
    for key, routed in legs.routes.items():
        if not any(route.get("alias") == task.get("task_id") for route in routed):
            continue
        told = [answer for answer in legs.host_out.get(key, [])
                if answer["seq"] > response["seq"] and _says_cancelled(answer)]
        if told:
            return "the host was told its task cancelled, yet the upstream refused the tasks/cancel"
    return ""


def _says_cancelled(answer: Event) -> bool:
    result = answer.get("message", {}).get("result")
    if not isinstance(result, dict):
        return False
    made = result.get("task")
    state = made if isinstance(made, dict) else result  # a CreateTaskResult's
    return bool(state.get("status") == "cancelled")


def _how_it_ended(event: Event, response: Event) -> str:
    declined = len(event.get("declined") or [])
    answered = f" after the proxy answered {declined} pending ask(s) itself" if declined else ""
    if "result" in response.get("message", {}):
        return f"cancelled upstream{answered}, the latest requestState echoed"
    return f"the upstream refused tasks/cancel: the task had ended (the host shown its end){answered}"
