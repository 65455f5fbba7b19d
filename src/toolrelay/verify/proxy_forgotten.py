"""Verify the host tasks a proxy stopped keeping (``proxy_task_forgotten``).

The proxy keeps at most 1,000 tasks of each kind (passed through, ``proxy/tasks.py``;
bridged, ``proxy/task_bridge.py``), the oldest forgotten first, and forgets a passed-through
task whose server restarted. A forgotten task is left out of every later ``tasks/list``
(``proxy_tasks._listed`` does not expect it) and its id is unknown from then on. Checked
here (``task_forgotten``, correlation): the record names a task the proxy had; forgotten for
the cap, the proxy then held at least that many tasks (a record cannot hide a task the host
should have seen listed); forgotten for a restart, its server's connection had been
replaced or had exited; and no host request was answered from it afterwards.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .proxy_answers import Event
from .verdict import Finding

__all__ = ["forgotten_before", "judge_forgotten"]

_ANSWERED_FROM = frozenset({"forwarded", "bridged"})


def forgotten_before(forgotten: Mapping[str, Event], task_id: Any, seq: int) -> bool:
    """Whether the task was forgotten before ``seq`` (a list answered then does not hold it)."""
    event = forgotten.get(str(task_id))
    return event is not None and int(event["seq"]) < seq


def judge_forgotten(events: Iterable[Event], forgotten: Mapping[str, Event], tasks: Mapping[str, Event],
                    routes: Mapping[str, list[Event]]) -> list[Finding]:
    """One finding per forgotten task."""
    recorded = list(events)
    found = []
    for event in forgotten.values():
        task = tasks.get(str(event.get("task_id")))
        problem = _problem(event, task, recorded, forgotten, routes)
        found.append(Finding(
            link="correlation", check="task_forgotten", ok=not problem,
            seqs=(int(event["seq"]), *((int(task["seq"]),) if task is not None else ())),
            call_id=task.get("key") if task is not None else None,
            message=f"task {event.get('task_id')!r} forgotten ({event.get('reason')}): "
                    + (problem or "not listed or answered from afterwards")))
    return found


def _problem(event: Event, task: Event | None, recorded: list[Event], forgotten: Mapping[str, Event],
             routes: Mapping[str, list[Event]]) -> str:
    seq = int(event["seq"])
    if task is None or int(task["seq"]) > seq:
        return "for no task the proxy had then"
    kept = event.get("kept")
    if kept is not None:
        held = sum(1 for e in recorded if e.get("kind") == "proxy_task" and int(e["seq"]) < seq) - \
            sum(1 for e in forgotten.values() if int(e["seq"]) < seq)
        if held < int(kept):
            return f"the proxy held {held} tasks then, fewer than the {kept} it keeps"
    elif not _connection_gone(task, recorded, seq):
        return (f"its server {task.get('server')}'s connection {task.get('connection')} had not restarted "
                "or exited")
    later = [route for routed in routes.values() for route in routed
             if route.get("alias") == event.get("task_id") and int(route["seq"]) > seq
             and route.get("decision") in _ANSWERED_FROM]
    if later:
        return f"yet host request {later[0].get('key')} was answered from it afterwards"
    return ""


def _connection_gone(task: Event, recorded: list[Event], seq: int) -> bool:
    """Whether the task's server connection exited, or a newer one started, before ``seq``."""
    server, number = task.get("server"), task.get("connection")
    return any(int(e["seq"]) < seq and e.get("server") == server and (
        (e.get("kind") == "server_exited" and e.get("connection") == number)
        or (e.get("kind") == "server_starting" and isinstance(e.get("connection"), int)
            and isinstance(number, int) and e["connection"] > number)) for e in recorded)
