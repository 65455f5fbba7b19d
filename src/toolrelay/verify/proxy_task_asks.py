"""Verify what an upstream asked during a host's task while no request of the host's about
the task was pending (``proxy_ask`` with ``task_id`` and no key: ``proxy/tasks.py``).

Such an ask belongs to no host request: the proxy asks the host as no request's (naming
the host's task in the related-task meta) and records it under the task. ``ask_answered``
(correlation) holds it to that: the task is one of the proxy's, of the server that asked;
the upstream request, recorded once and answered once, names the task's upstream id in
its related-task meta; no host request about the task (its ``tools/call``, a ``tasks/*``
naming it) was pending when it came (else it was that request's); and, when the host
answered, the proxy's request is on the host's wire once with the host's answer, which is
what went upstream.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from .proxy_answers import Event
from .proxy_passing import Passing, _id, _same_answer
from .verdict import Finding

__all__ = ["judge_task_asks"]

_RELATED: Final = "io.modelcontextprotocol/related-task"


def judge_task_asks(passing: Passing, tasks: Mapping[str, Event], host_in: Mapping[str, list[Event]],
                    host_out: Mapping[str, list[Event]], wire_hosts: Iterable[Any]) -> list[Finding]:
    """One finding per ask recorded under a task rather than a host request."""
    hosts = set(wire_hosts)
    found = []
    for ask in passing.asks:
        if ask.get("key") or not ask.get("task_id"):
            continue
        task = tasks.get(str(ask.get("task_id")))
        asked = passing.server_requests.get((ask.get("server"), ask.get("upstream_id")), [])
        replies = passing.replies.get((ask.get("server"), ask.get("upstream_id")), [])
        problem = _problem(ask, task, asked, replies, host_in, host_out) or \
            _host_problem(ask, task, replies, passing, hosts)
        name = f"{ask.get('method')} of server {ask.get('server')} (its id {ask.get('upstream_id')!r})"
        who = "asked of the host" if ask.get("answered_by") == "host" else "answered by the proxy"
        why = f" ({ask.get('reason')})" if ask.get("reason") else ""
        said = f"{who} for its task {ask.get('task_id')!r}, no request of the host's about it pending: " \
               f"{ask.get('outcome')}{why}"
        found.append(Finding(link="correlation", check="ask_answered", ok=not problem,
                             seqs=(int(ask["seq"]), *(int(e["seq"]) for e in (*asked, *replies))),
                             call_id=task.get("key") if task is not None else None,
                             message=f"{name}: {problem or said}"))
    return found


def _problem(ask: Event, task: Event | None, asked: list[Event], replies: list[Event],
             host_in: Mapping[str, list[Event]], host_out: Mapping[str, list[Event]]) -> str:
    if task is None:
        return "recorded for no task of the proxy's"
    if ask.get("server") != task.get("server"):
        return f"asked by server {ask.get('server')}, not the task's ({task.get('server')})"
    if len(asked) != 1 or len(replies) != 1:
        return f"recorded {len(asked)} times and answered {len(replies)} times, not once each"
    meta = (asked[0].get("message", {}).get("params") or {}).get("_meta") or {}
    related = meta.get(_RELATED) if isinstance(meta, dict) else None
    if not isinstance(related, dict) or related.get("taskId") != task.get("upstream_task_id"):
        return f"its related-task meta does not name the task's upstream id {task.get('upstream_task_id')!r}"
    pending = _pending_then(task, int(asked[0]["seq"]), host_in, host_out)
    if pending is not None:
        return f"recorded under the task, yet host request {pending} about it was pending"
    return ""


def _pending_then(task: Event, seq: int, host_in: Mapping[str, list[Event]],
                  host_out: Mapping[str, list[Event]]) -> str | None:
    """The key of a host request about ``task`` received before ``seq`` and answered after it."""
    for key, received in host_in.items():
        params = (received[0].get("message") or {}).get("params") or {}
        names_it = isinstance(params, dict) and params.get("taskId") == task.get("task_id")
        about = key == task.get("key") or (names_it and received[0].get("host") == task.get("host"))
        answered = host_out.get(key, [])
        if about and int(received[0]["seq"]) < seq and (not answered or int(answered[-1]["seq"]) > seq):
            return key
    return None


def _host_problem(ask: Event, task: Event | None, replies: list[Event], passing: Passing,
                  hosts: set[Any]) -> str:
    """What is wrong with the host's part (nothing when the proxy answered, or all holds)."""
    if ask.get("answered_by") != "host" or task is None or not replies or ask.get("outcome") == "host_left":
        return ""
    answer = ask.get("host_answer") or {}
    if not _same_answer(ask.get("method"), answer, replies[0].get("message", {})):
        return "what went upstream is not the host's answer"
    if task.get("host") not in hosts:
        return ""
    request_id = _id(ask.get("host_request_id"))
    sent = passing.wire.get((task.get("host"), "ask", request_id), [])
    got = passing.wire.get((task.get("host"), "answer", request_id), [])
    if len(sent) != 1 or sent[0].get("message", {}).get("method") != ask.get("method"):
        return f"the proxy's request {ask.get('host_request_id')!r} to the host is not on the wire once"
    if not any(g.get("message") == answer for g in got):
        return "the host's answer recorded is not the one on the wire"
    return ""
