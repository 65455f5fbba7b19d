"""Verify a ``toolrelay proxy`` transcript: the host leg held to the upstream leg, id by id.

A proxy run has no model side. What is judged, for each host request (the proxy's key
pairs its two legs, never the host's call id alone; ids are compared on both legs):

- ``host_answered_once`` (correlation): recorded once as received and answered once,
  with the host's own JSON-RPC id;
- ``routed`` (routing): the alias the host named leads, by the offer recorded before it,
  to the server and tool the route names; a host's own call id is the one in its request;
- ``upstream_paired`` (correlation): a forwarded call is one ``tools/call`` on that
  server's connection with the route's MCP id, the tool's own name and the host's
  arguments, answered exactly once on that connection;
- ``passed_on`` (feedback): the host's answer is the upstream answer to that request (for a
  tool that runs as an MCP task, the answer to the task's ``tasks/result``),
  unchanged but for its era's envelope (``protocol/passthrough.py``): the same result,
  the same ``isError``, the same JSON-RPC error; so an answer swapped between two
  requests, an altered result or a flipped ``isError`` is caught;
- ``on_the_wire`` (correlation, hosts whose leg is recorded message by message as
  ``proxy_wire``: stdio, each HTTP session by its number, each 2026-07-28 HTTP exchange by
  its ``exchange`` number): the answer recorded is one that host was sent, in the
  request's own exchange (two hosts' requests of one id are never taken for each other);
- ``decision_kept`` (routing): a call the policy denied, or a tool withheld, was never
  sent upstream, and the host was answered a tool error naming the reason;
- what passed through a call besides its answer (``proxy_passing``): each upstream ask
  answered once and delivered to the request that asked (``ask_answered``; asked during a
  host's task with no request of the host's about it pending, to the host as no request's:
  ``proxy_task_asks``), progress
  tokens mapped consistently (``progress_mapped``), a cancelled call cancelled upstream
  and not answered (``cancel_honoured``);
- what 2026-07-28 hosts' listen requests were told (``proxy_listens``): resource updates
  only of the URIs each request named and was granted (``listen_kept``);
- what 2025 hosts were told of resources (``proxy_subscriptions``): updates only of the
  URIs each host subscribed to (``updates_subscribed``);
- what the proxy follows on 2026-07-28 servers' listen requests (``proxy_upstream_listens``):
  each names every URI an earlier one to that server named, after a restart too
  (``upstream_listens_kept``).

Resource, prompt and completion requests are judged by ``proxy_features.py`` the same way,
a host's own tasks (``tasks/*``, the ``tools/call`` that created one, their status
notifications) by ``proxy_tasks.py``, the bridged tasks the proxy gave up on by
``proxy_give_up.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from ..protocol.mcp import TERMINAL_TASK_STATUSES
from ..protocol.passthrough import passed_on
from ..protocol.tasks_ext import created_ext_task, settled_message
from .proxy_answers import Event, Say, Triple, passed_error
from .proxy_bridged_status import judge_bridged_status
from .proxy_features import FEATURE_METHODS, judge_feature, without_envelope
from .proxy_forgotten import judge_forgotten
from .proxy_give_up import judge_abandoned
from .proxy_listens import listen_findings
from .proxy_passing import Passing, passing_findings
from .proxy_rounds import asks_again, is_in_rounds, round_chain
from .proxy_subscriptions import subscription_findings
from .proxy_task_asks import judge_task_asks
from .proxy_task_states import judge_states
from .proxy_tasks import (
    TASK_METHODS,
    judge_bridged,
    judge_created,
    judge_statuses,
    judge_task_request,
)
from .proxy_upstream_listens import upstream_listen_findings
from .record import RunRecord
from .verdict import Finding, Verdict, link_rank

__all__ = ["is_proxy_run", "verify_proxy"]

PROXY_KINDS: Final = frozenset({"proxy_start", "proxy_host", "proxy_route", "proxy_ask", "proxy_relayed"})
_NOT_SENT: Final = frozenset({"denied", "withheld", "unknown"})
_HOST_CALL_ID: Final = "io.toolrelay/call_id"

"""A request's finding: (link, check, ok, message, *the events it rests on)."""


def is_proxy_run(run: RunRecord) -> bool:
    """Whether ``run`` was recorded by ``toolrelay proxy``."""
    return any(run.of_kind(kind) for kind in PROXY_KINDS)


@dataclass(slots=True)
class _Legs:
    host_in: dict[str, list[Event]] = field(default_factory=dict)
    host_out: dict[str, list[Event]] = field(default_factory=dict)
    routes: dict[str, list[Event]] = field(default_factory=dict)
    requests: dict[Triple, list[Event]] = field(default_factory=dict)
    responses: dict[Triple, list[Event]] = field(default_factory=dict)
    sent_for: dict[str, list[Event]] = field(default_factory=dict)
    """Upstream requests by the key (``call_id``) they carry."""
    offers: list[Event] = field(default_factory=list)
    end: Event | None = None
    wire: dict[Any, list[Event]] = field(default_factory=dict)
    """The host leg as on the wire (stdio hosts, and each HTTP host's session): the
    proxy's answers, by (host, exchange, their id); ``exchange`` is None but for a
    2026-07-28 HTTP exchange (older transcripts: always None)."""
    wire_hosts: set[Any] = field(default_factory=set)
    """The hosts whose leg is on the wire (None: the stdio host)."""
    passing: Passing = field(default_factory=Passing)
    """What passed through the calls besides their answers (``proxy_passing``)."""
    tasks: dict[str, Event] = field(default_factory=dict)
    """The hosts' tasks (``proxy_task``) by the proxy's task id."""
    task_keys: dict[str, list[Event]] = field(default_factory=dict)
    """The same, by the key of the host ``tools/call`` that created each."""
    statuses: list[Event] = field(default_factory=list)
    abandoned: list[Event] = field(default_factory=list)
    """The bridged tasks the proxy cancelled upstream itself (``proxy_task_abandoned``)."""
    forgotten: dict[str, Event] = field(default_factory=dict)
    """The tasks the proxy stopped keeping (``proxy_task_forgotten``) by the proxy's task id."""
    ready: dict[str, list[Event]] = field(default_factory=dict)
    """Each server's handshakes (``server_ready``), by its name."""


def _legs(events: Iterable[Event]) -> _Legs:
    legs = _Legs()
    for event in events:
        legs.passing.add(event)
        kind = event.get("kind")
        if kind == "proxy_host":
            side = legs.host_in if event.get("direction") == "in" else legs.host_out
            side.setdefault(str(event.get("key")), []).append(event)
        elif kind == "proxy_route":
            legs.routes.setdefault(str(event.get("key")), []).append(event)
        elif kind == "proxy_offer":
            legs.offers.append(event)
        elif kind == "proxy_task":
            legs.tasks[str(event.get("task_id"))] = event
            legs.task_keys.setdefault(str(event.get("key")), []).append(event)
        elif kind == "proxy_task_status":
            legs.statuses.append(event)
        elif kind == "proxy_task_abandoned":
            legs.abandoned.append(event)
        elif kind == "proxy_task_forgotten":
            legs.forgotten[str(event.get("task_id"))] = event
        elif kind == "server_ready":
            legs.ready.setdefault(str(event.get("server")), []).append(event)
        elif kind == "proxy_end":
            legs.end = event
        elif kind == "proxy_wire":
            legs.wire_hosts.add(event.get("host"))
            message = event.get("message") or {}
            if event.get("direction") == "out" and ("result" in message or "error" in message):
                party = (event.get("host"), event.get("exchange"))
                legs.wire.setdefault((*party, _id_key(message.get("id"))), []).append(event)
        elif kind in ("mcp_request", "mcp_response"):
            triple = (event.get("server"), event.get("connection"), event.get("mcp_id"))
            (legs.requests if kind == "mcp_request" else legs.responses).setdefault(triple, []).append(event)
            if kind == "mcp_request" and event.get("call_id") is not None:
                legs.sent_for.setdefault(str(event["call_id"]), []).append(event)
    return legs


def verify_proxy(run: RunRecord) -> Verdict:
    """The verdict on a proxy transcript."""
    legs = _legs(run.events)
    findings: list[Finding] = []
    unfinished: list[str] = []
    for key, received in legs.host_in.items():
        findings += _one_request(key, received, legs, unfinished)
    findings += passing_findings(legs.passing, legs.host_in, legs.host_out, legs.routes, legs.sent_for,
                                 lambda key: _sayer(key, legs.host_in.get(key, [])), legs.wire_hosts,
                                 legs.task_keys, legs.tasks)
    findings += listen_findings(run.events)  # what 2026-07-28 hosts' listen requests were told
    findings += judge_statuses([s for s in legs.statuses if s.get("mcp_id") is None], legs)
    findings += [judge_bridged_status(s, legs) for s in legs.statuses if s.get("mcp_id") is not None]
    findings += judge_abandoned(legs.abandoned, legs)
    findings += judge_forgotten(run.events, legs.forgotten, legs.tasks, legs.routes)
    findings += judge_task_asks(legs.passing, legs.tasks, legs.host_in, legs.host_out, legs.wire_hosts)
    findings += judge_states(legs.host_in, legs.host_out, legs.routes, legs.tasks)
    findings += subscription_findings(run.events)  # and 2025 hosts, of the resources they subscribed to
    findings += upstream_listen_findings(run.events)  # followed upstream, on 2026-07-28 servers
    findings.sort(key=lambda finding: link_rank(finding.link))
    broken = next((finding for finding in findings if not finding.ok), None)
    if legs.end is None:
        unfinished.insert(0, "the transcript ends without proxy_end: the proxy was stopped before it ended")
    if not legs.host_in:
        unfinished.append("no host called a tool through the proxy")
    return Verdict(findings=findings, broken=broken, finished=not unfinished, unfinished=unfinished,
                   run_status="completed" if legs.end is not None else None, run_id=run.run_id,
                   source=str(run.source))


def _sayer(key: str, received: list[Event]) -> Say:
    """The findings of host request ``key``: named by it and its host id, resting on its events."""
    host_id = received[0].get("message", {}).get("id") if received else None
    seqs = tuple(e["seq"] for e in received)

    def said(link: str, check: str, ok: bool, message: str, *more: Event) -> Finding:
        return Finding(link=link, ok=ok, check=check, message=f"host request {key} (host id {host_id!r}): "
                       f"{message}", seqs=seqs + tuple(e["seq"] for e in more), call_id=key, mcp_id=host_id)

    return said


def _one_request(key: str, received: list[Event], legs: _Legs, unfinished: list[str]) -> list[Finding]:
    first = received[0]
    host_id = first.get("message", {}).get("id")
    said = _sayer(key, received)
    answers = legs.host_out.get(key, [])
    routes = legs.routes.get(key, [])
    route = routes[-1] if routes else None
    chained: list[Finding] = []
    if is_in_rounds(received) and len(routes) <= 1:  # a 2026-07-28 host's input_required rounds
        link, last, ended = round_chain(said, received, answers)
        if not link.ok:
            return [link]
        chained, received, answers = [link], [last], [ended] if ended is not None else []
    if len(received) > 1 or len(routes) > 1:
        return [said("correlation", "host_answered_once", False,
                     f"recorded {len(received)} times as received and routed {len(routes)} times")]
    if route is not None and route.get("decision") == "cancelled":
        given = [answer for answer in answers if not asks_again(answer)]  # a round asked; it answered nothing
        return [*chained, _cancelled(said, given, route, legs, key)]
    if not answers:
        unfinished.append(f"host request {key} (host id {host_id!r}) has no answer recorded")
        return []
    if len(answers) > 1:
        return [said("correlation", "host_answered_once", False, f"answered {len(answers)} times", *answers)]
    answer = answers[0]
    found = [*chained, _answered(said, received[0], answer)]
    if answer.get("host") in legs.wire_hosts:
        found.append(_on_wire(said, answer, legs))
    if route is None:
        return [*found, said("routing", "routed", False, "answered without a recorded route", answer)]
    if route.get("decision") == "bridged":  # a 2025 host's task, a 2026 extension task upstream
        if first.get("method") == "tools/call":
            found.append(_routed(said, first, route, legs))
        return [*found, *judge_bridged(said, first, route, answer, legs, key)]
    if first.get("method") in TASK_METHODS:  # a host's own tasks
        return [*found, *judge_task_request(said, first, route, answer, legs, key)]
    if first.get("method") in FEATURE_METHODS:  # resources, prompts, completion
        if route.get("decision") == "unknown":
            return [*found, _decision(said, route, answer, legs, key)]
        return [*found, *judge_feature(said, first, route, answer, legs, key)]
    found.append(_routed(said, first, route, legs))
    if route.get("decision") in _NOT_SENT:
        found.append(_decision(said, route, answer, legs, key))
    elif route.get("decision") == "forwarded":
        found += _forwarded(said, first, route, answer, legs, key)
    elif route.get("decision") == "task":  # the host's own task, created upstream
        found += judge_created(said, first, route, answer, legs, key)
    else:  # failed: sent (maybe), no answer came; the host was told
        told = "was told so as a tool error" if _is_error(answer) else "was not told"
        found.append(said("feedback", "passed_on", _is_error(answer),
                          f"the upstream call failed ({route.get('reason')}) and the host {told}",
                          route, answer))
    return found


def _answered(said: Say, received: Event, answer: Event) -> Finding:
    asked, got = received.get("message", {}).get("id"), answer.get("message", {}).get("id")
    if received.get("exchange") != answer.get("exchange"):  # a 2026-07-28 HTTP exchange's own answer
        return said("correlation", "host_answered_once", False,
                    f"received in exchange {received.get('exchange')}, answered in exchange "
                    f"{answer.get('exchange')}", answer)
    return said("correlation", "host_answered_once", asked == got and received.get("host_id") == asked,
                f"answered once, with the host's id {got!r}" if asked == got
                else f"answered with id {got!r}, not the request's id {asked!r}", answer)


def _id_key(value: Any) -> tuple[str, str]:
    """A JSON-RPC id as a key: 1 and "1" are different ids."""
    return (type(value).__name__, str(value))


def _on_wire(said: Say, answer: Event, legs: _Legs) -> Finding:
    """The recorded answer is one the host really got, as sent (its era's envelope aside)."""
    recorded = answer.get("message", {})
    for sent in legs.wire.get((answer.get("host"), answer.get("exchange"), _id_key(recorded.get("id"))), []):
        message = sent.get("message", {})
        if "error" in recorded and message.get("error") == recorded["error"]:
            return said("correlation", "on_the_wire", True, "the answer is the one sent to the host", sent)
        result, got = message.get("result"), recorded.get("result")
        both = isinstance(result, dict) and isinstance(got, dict)
        if both and without_envelope(result) == without_envelope(got):
            return said("correlation", "on_the_wire", True, "the answer is the one sent to the host", sent)
    return said("correlation", "on_the_wire", False,
                "no message sent to the host on the wire is this answer", answer)


def _routed(said: Say, received: Event, route: Event, legs: _Legs) -> Finding:
    params = received.get("message", {}).get("params") or {}
    named = params.get("name")
    found = params.get("_meta")
    meta: dict[str, Any] = found if isinstance(found, dict) else {}
    if meta.get(_HOST_CALL_ID) != received.get("host_call_id") and isinstance(meta.get(_HOST_CALL_ID), str):
        return said("routing", "routed", False, "the host's own call id is not the one its request carries",
                    route)
    if route.get("alias") != named:
        return said("routing", "routed", False,
                    f"routed as {route.get('alias')!r}, but the host named {named!r}", route)
    offer = next((o for o in reversed(legs.offers) if o["seq"] < received["seq"]), None)
    target = (offer or {}).get("routes", {}).get(named)
    sent = route.get("decision") in ("forwarded", "task", "bridged")
    if sent and target != [route.get("server"), route.get("tool")]:
        return said("routing", "routed", False, f"{named} leads to {target} by the offer, but was sent to "
                    f"{route.get('server')}/{route.get('tool')}", route)
    target_text = f"{route.get('server')}/{route.get('tool')}" if route.get("tool") else ""
    return said("routing", "routed", True, f"{named} → {route.get('decision')} {target_text}".rstrip(), route)


def _decision(said: Say, route: Event, answer: Event, legs: _Legs, key: str) -> Finding:
    sent = legs.sent_for.get(key, [])
    if sent:
        return said("routing", "decision_kept", False,
                    f"{route.get('decision')} ({route.get('reason')}), yet sent upstream", route, *sent)
    if route.get("decision") == "unknown":
        ok = "error" in answer.get("message", {})
        return said("routing", "decision_kept", ok, "an unknown tool, answered with a JSON-RPC error" if ok
                    else "an unknown tool, but not answered with a JSON-RPC error", route, answer)
    reason = str(route.get("reason") or "")
    text = _text(answer)
    ok = _is_error(answer) and reason in text
    return said("routing", "decision_kept", ok,
                f"{route.get('decision')}: {reason}; the host was told so as a tool error" if ok
                else f"{route.get('decision')} ({reason}), but the host's answer is not a tool error "
                "naming it",
                route, answer)


def _forwarded(
    said: Say, received: Event, route: Event, answer: Event, legs: _Legs, key: str,
) -> list[Finding]:
    triple = (route.get("server"), route.get("connection"), route.get("mcp_id"))
    requests, responses = legs.requests.get(triple, []), legs.responses.get(triple, [])
    name = f"{triple[0]} connection {triple[1]} id {triple[2]!r}"
    if len(requests) != 1 or len(responses) != 1:
        counted = f"{len(requests)} requests and {len(responses)} responses recorded, not one each"
        return [said("correlation", "upstream_paired", False, f"upstream {name}: {counted}",
                     route, *requests, *responses)]
    request, response = requests[0], responses[0]
    params = request.get("message", {}).get("params") or {}
    host_params = received.get("message", {}).get("params") or {}
    problems = [
        "it carries another key" if request.get("call_id") != key or response.get("call_id") != key else "",
        "it is no tools/call" if request.get("message", {}).get("method") != "tools/call" else "",
        f"it names {params.get('name')!r}, not {route.get('tool')!r}"
        if params.get("name") != route.get("tool") else "",
        "its arguments are not the host's" if params.get("arguments", {}) != host_params.get("arguments", {})
        else "",
    ]
    problem = next((p for p in problems if p), None)
    paired = said("correlation", "upstream_paired", problem is None,
                  f"upstream {name}: {problem}" if problem else f"paired with upstream {name}, answered once",
                  request, response)
    return [paired, _passed(said, _task_result(response, legs, key) or response, answer)]


def _task_result(response: Event, legs: _Legs, key: str) -> Event | None:
    """For a tool run as an MCP task, the response to its ``tasks/result``: what the host's
    answer passes on (``client/tool_tasks.py``); None for a plain call. For a task of the
    2026-07-28 tasks extension, the answer its end gives (``_ext_task_result``)."""
    result = response.get("message", {}).get("result")
    if created_ext_task(result) is not None:
        return _ext_task_result(response, legs, key)
    task = result.get("task") if isinstance(result, dict) else None
    task_id = task.get("taskId") if isinstance(task, dict) else None
    if task_id is None:
        return None
    for request in legs.sent_for.get(key, []):
        message = request.get("message", {})
        if message.get("method") == "tasks/result" and (message.get("params") or {}).get("taskId") == task_id:
            triple = (request.get("server"), request.get("connection"), request.get("mcp_id"))
            answered = legs.responses.get(triple, [])
            return answered[0] if len(answered) == 1 else None
    return None


def _ext_task_result(response: Event, legs: _Legs, key: str) -> Event | None:
    """The answer an upstream tasks-extension task gives its tools/call, read from the first
    ``tasks/get`` answer showing it ended, as the proxy's client read it (``settled_answer``)."""
    message = response.get("message", {})
    task_id = message.get("result", {}).get("taskId")
    for request in legs.sent_for.get(key, []):
        asked = request.get("message", {})
        if asked.get("method") != "tasks/get" or (asked.get("params") or {}).get("taskId") != task_id:
            continue
        triple = (request.get("server"), request.get("connection"), request.get("mcp_id"))
        answered = legs.responses.get(triple, [])
        shown = answered[0].get("message", {}) if len(answered) == 1 else {}
        status = (shown.get("result") or {}).get("status") if isinstance(shown.get("result"), dict) else None
        if status not in TERMINAL_TASK_STATUSES:
            continue
        settled = settled_message(message.get("id"), shown)
        return None if isinstance(settled, str) else {**answered[0], "message": settled}
    return None


def _passed(said: Say, response: Event, answer: Event) -> Finding:
    error = passed_error(said, response, answer)
    if error is not None:
        return error
    upstream, host = response.get("message", {}), answer.get("message", {})
    result, got = upstream.get("result"), host.get("result")
    if not isinstance(result, dict) or not isinstance(got, dict):
        return said("feedback", "passed_on", False, "the host's answer is not the upstream result",
                    response, answer)
    if bool(result.get("isError")) != bool(got.get("isError")):
        return said("feedback", "passed_on", False, f"isError {bool(result.get('isError'))} upstream, "
                    f"{bool(got.get('isError'))} to the host", response, answer)
    same = passed_on(result) == passed_on(got)
    return said("feedback", "passed_on", same, "the upstream result passed on unchanged" if same
                else "the host's result differs from the upstream result it answers", response, answer)


def _cancelled(said: Say, answers: list[Event], route: Event, legs: _Legs, key: str) -> Finding:
    cancels = list(legs.sent_for.get(key, []))
    return said("correlation", "host_answered_once", not answers,
                "cancelled by the host (or its leaving): not answered" if not answers
                else "cancelled, yet answered", route, *answers, *cancels)


def _is_error(answer: Event) -> bool:
    result = answer.get("message", {}).get("result")
    return isinstance(result, dict) and result.get("isError") is True


def _text(answer: Event) -> str:
    result = answer.get("message", {}).get("result") or {}
    blocks = result.get("content", [])
    return " ".join(str(block.get("text", "")) for block in blocks if isinstance(block, dict))
