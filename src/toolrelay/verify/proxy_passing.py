"""Verify what a proxy passed through a host's call besides its answer (``proxy_legs`` calls it).

- ``ask_answered`` (correlation), for each ``proxy_ask``: the upstream's request is recorded
  during that host call (its ``call_id`` is the call's key), was answered exactly once, on
  its server, with its own id; when the host answered, the proxy's request to the host was
  made while the host's call was open, the host's answer is the one that went upstream
  (sampling: the same result; elicitation: the same action and content; an error: the
  same code), and, where the host leg is on the wire, the request and the answer are the
  ones that crossed it, with the recorded id;
- ``progress_mapped`` (correlation), per host call: every progress notification passed on
  carries the upstream request's token as the upstream sent it and the host's own token
  (the token of the host request it was passed on during: a 2026-07-28 call's round) to
  the host, its other params unchanged; every notification comes before that request's
  answer; a log message reaches a 2026-07-28 request only if it asked for log messages
  (``io.modelcontextprotocol/logLevel``), at that level or above;
- ``cancel_honoured`` (correlation), per cancelled host call that went upstream: the
  upstream request was cancelled (a ``notifications/cancelled`` naming its id, on its
  connection) and never answered to the host.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..protocol.request_envelope import LOG_LEVEL_KEY
from ..protocol.versions import MODERN_VERSIONS
from ..server.request_stream import at_least
from .verdict import Finding

__all__ = ["Passing", "passing_findings"]

Event = dict[str, Any]
Say = Callable[..., Finding]
PROGRESS: Final = "notifications/progress"
CANCELLED: Final = "notifications/cancelled"


@dataclass(slots=True)
class Passing:
    """The events these checks read, gathered in one pass."""

    asks: list[Event] = field(default_factory=list)
    relayed: dict[str, list[Event]] = field(default_factory=dict)
    server_requests: dict[tuple[Any, Any], list[Event]] = field(default_factory=dict)
    """(server, upstream id) → the ``mcp_server_request`` events."""
    replies: dict[tuple[Any, Any], list[Event]] = field(default_factory=dict)
    """(server, upstream id) → our replies to it."""
    cancels: set[tuple[Any, Any, Any]] = field(default_factory=set)
    """(server, connection, request id) of each ``notifications/cancelled`` sent upstream."""
    wire: dict[tuple[Any, str, str], list[Event]] = field(default_factory=dict)
    """(host, ``ask`` or ``answer``, id) → the proxy's requests to a host and the host's
    answers to them, as on the wire."""

    def add(self, event: Event) -> None:
        kind = event.get("kind")
        if kind == "proxy_ask":
            self.asks.append(event)
        elif kind == "proxy_relayed" and event.get("key"):
            self.relayed.setdefault(str(event["key"]), []).append(event)
        elif kind == "mcp_server_request":
            self.server_requests.setdefault((event.get("server"), event.get("mcp_id")), []).append(event)
        elif kind == "mcp_reply":
            self.replies.setdefault((event.get("server"), event.get("mcp_id")), []).append(event)
        elif kind == "mcp_notification" and event.get("direction") == "out":
            if event.get("method") == CANCELLED and event.get("delivered", True):
                wanted = (event.get("message", {}).get("params") or {}).get("requestId")
                self.cancels.add((event.get("server"), event.get("connection"), _id(wanted)))
        elif kind == "proxy_wire":
            message, out = event.get("message") or {}, event.get("direction") == "out"
            if "id" in message and out == ("method" in message):  # the proxy's requests, the host's answers
                way = "ask" if out else "answer"
                self.wire.setdefault((event.get("host"), way, _id(message["id"])), []).append(event)


def _id(value: Any) -> str:
    return f"{type(value).__name__}:{value}"


def passing_findings(
    passing: Passing, host_in: dict[str, list[Event]], host_out: dict[str, list[Event]],
    routes: dict[str, list[Event]], sent_for: dict[str, list[Event]], said_for: Callable[[str], Say],
    wire_hosts: Iterable[Any], task_keys: Iterable[str] = (), tasks: Mapping[str, Event] | None = None,
) -> list[Finding]:
    """The findings of every ask, relayed notification and cancellation. ``task_keys``: the
    host calls that created a host's own task, whose progress goes on after their answer
    until the task ends (``proxy_tasks``); ``tasks``: the bridged tasks by the proxy's id."""
    tasked = set(task_keys)
    hosts = set(wire_hosts)
    made_by = _made_by(routes, tasks or {})
    found = [_ask(ask, passing, host_in, host_out, said_for(str(ask.get("key"))), hosts,
                  made_by.get(str(ask.get("key"))))
             for ask in passing.asks if ask.get("key")]
    for key, relayed in passing.relayed.items():
        answered = host_out if key not in tasked else {}
        found.append(_progress(key, relayed, host_in, answered, sent_for, said_for(key)))
    for key, routed in routes.items():
        if routed and routed[-1].get("decision") == "cancelled":
            found.extend(_cancel(routed[-1], sent_for.get(key, []), passing, said_for(key)))
    return found


def _made_by(routes: dict[str, list[Event]], tasks: Mapping[str, Event]) -> dict[str, str]:
    """Each host request answered from a bridged task → the host call that made the task
    (a 2025-11-25 server asks during its task's ``tasks/result``, under that call)."""
    made: dict[str, str] = {}
    for key, routed in routes.items():
        task = tasks.get(str(routed[-1].get("alias"))) if routed and routed[-1].get("decision") == "bridged" \
            else None
        if task is not None and task.get("key"):
            made[key] = str(task["key"])
    return made


def _ask(ask: Event, passing: Passing, host_in: dict[str, list[Event]], host_out: dict[str, list[Event]],
         said: Say, wire_hosts: set[Any], made_by: str | None = None) -> Finding:
    key, server, method = str(ask.get("key")), ask.get("server"), ask.get("method")
    name = f"{method} of server {server} (its id {ask.get('upstream_id')!r})"
    asked = passing.server_requests.get((server, ask.get("upstream_id")), [])
    mine = [e for e in asked if e.get("call_id") in (key, made_by)]
    replies = passing.replies.get((server, ask.get("upstream_id")), [])
    if asked and (not mine or len(replies) != 1):
        problem = "was not asked during this host call" if not mine else f"was answered {len(replies)} times"
        return said("correlation", "ask_answered", False, f"{name} {problem}", ask, *asked, *replies)
    if ask.get("answered_by") != "host":
        why = f"{ask.get('outcome')}: {ask.get('reason')}"
        return said("correlation", "ask_answered", True, f"{name} answered by the proxy ({why})",
                    ask, *replies)
    came = int(mine[0]["seq"]) if mine else None
    wrong = _host_problem(ask, replies, host_in.get(key, []), host_out.get(key, []), passing, wire_hosts,
                          came)
    if wrong is not None:
        return said("correlation", "ask_answered", False, f"{name}: {wrong}", ask, *replies)
    return said("correlation", "ask_answered", True,
                f"{name} answered by the host (the proxy's request {ask.get('host_request_id')!r}): "
                f"{ask.get('outcome')}", ask, *replies)


def _host_problem(ask: Event, replies: list[Event], received: list[Event], answered: list[Event],
                  passing: Passing, wire_hosts: set[Any], came: int | None = None) -> str | None:
    """What is wrong with an ask the host answered (None: nothing). ``came``: when the upstream's
    request was recorded (an ask that came during the call may be answered after its answer:
    a task's, its ``tools/call`` answered in the meantime)."""
    opened = received[0]["seq"] if received else None
    closed = answered[-1]["seq"] if answered else None  # (input_required rounds: the last)
    if ask.get("round") is not None and ask.get("outcome") == "host_left":
        # a 2026-07-28 host that never retried: its ask is settled after its last round
        return _never_retried(answered)
    if opened is None or not any(seq is not None and opened <= seq and (closed is None or seq <= closed)
                                 for seq in (ask["seq"], came)):
        return "the host was asked outside the host call it belongs to"
    answer = ask.get("host_answer") or {}
    if replies and ask.get("outcome") != "host_left" and not _same_answer(ask.get("method"), answer,
                                                                           replies[0].get("message", {})):
        return "what went upstream is not the host's answer"
    host = received[0].get("host")
    if ask.get("round") is not None or _modern_host(received):  # its answer came in a retry's inputResponses
        retried = [e for e in received if ((e.get("message") or {}).get("params") or {}).get("requestState")
                   == ask.get("round")]
        given = [((e.get("message") or {}).get("params") or {}).get("inputResponses") or {} for e in retried]
        if not any(isinstance(g, dict) and g.get(str(ask.get("host_request_id"))) == answer.get("result")
                   for g in given):
            return "the host's answer recorded is not in a retry of its call"
    elif host in wire_hosts and ask.get("outcome") != "host_left":
        request_id = _id(ask.get("host_request_id"))
        sent = passing.wire.get((host, "ask", request_id), [])
        got = passing.wire.get((host, "answer", request_id), [])
        if len(sent) != 1 or sent[0].get("message", {}).get("method") != ask.get("method"):
            return f"the proxy's request {ask.get('host_request_id')!r} to the host is not on the wire once"
        if not any(g.get("message") == answer for g in got):
            return "the host's answer recorded is not the one on the wire"
    return None


def _modern_host(received: list[Event]) -> bool:
    """Whether the host call was a 2026-07-28 host's: one that answers in ``inputResponses``,
    with no ``requestState`` where it keeps none (a bridged task's ``tasks/update`` on the
    locked spec), so the ask's ``round`` is None."""
    return bool(received) and received[0].get("protocol_version") in MODERN_VERSIONS


def _never_retried(answered: list[Event]) -> str | None:
    """What is wrong with an ask recorded as given up for want of the host's retry (None: nothing)."""
    last = (answered[-1].get("message") or {}).get("result") if answered else None
    if not isinstance(last, dict) or last.get("resultType") != "input_required":
        return "the host is recorded as never retrying, yet its call's last answer asks nothing of it"
    return None


def _same_answer(method: Any, host: Event, upstream: Event) -> bool:
    if "error" in host or "error" in upstream:
        return (host.get("error") or {}).get("code") == (upstream.get("error") or {}).get("code")
    given, sent = host.get("result") or {}, upstream.get("result") or {}
    if method == "elicitation/create":
        content = given.get("content") if given.get("action") == "accept" else None
        return bool(given.get("action") == sent.get("action") and content == sent.get("content"))
    return bool(given == sent)


def _progress(key: str, relayed: list[Event], host_in: dict[str, list[Event]],
              host_out: dict[str, list[Event]], sent_for: dict[str, list[Event]], said: Say) -> Finding:
    progress = [e for e in relayed if e.get("method") == PROGRESS]
    received = host_in.get(key, [])
    upstream_tokens = {_token(e.get("message", {}).get("params")) for e in sent_for.get(key, [])}
    answered = host_out.get(key, [])
    for event in relayed:
        request, answer = _round_of(event, received, answered)
        if answer is not None and event["seq"] > answer["seq"]:
            what = "progress" if event.get("method") == PROGRESS else "a log message"
            return said("correlation", "progress_mapped", False, f"{what} passed on after the host's answer",
                        event, answer)
        wrong = _unasked_log(event, request) if event.get("method") != PROGRESS else None
        if wrong is not None:
            return said("correlation", "progress_mapped", False, wrong, event, *filter(None, [request]))
    for event in progress:
        request, _ = _round_of(event, received, answered)
        host_token = _token((request.get("message") or {}).get("params")) if request else None
        upstream = (event.get("upstream") or {}).get("params") or {}
        given = event.get("host") or {}
        rest_same = {k: v for k, v in upstream.items() if k != "progressToken"} == \
            {k: v for k, v in given.items() if k != "progressToken"}
        if upstream.get("progressToken") not in upstream_tokens or event.get("upstream_token") != \
                upstream.get("progressToken"):
            return said("correlation", "progress_mapped", False,
                        "progress passed on that no upstream request of this call was sent with", event)
        if given.get("progressToken") != host_token or not rest_same:
            return said("correlation", "progress_mapped", False,
                        "progress passed on without the host's own token, or altered", event)
    logs = len(relayed) - len(progress)
    counted = f"{len(progress)} progress notifications passed on with the host's token, {logs} log messages"
    return said("correlation", "progress_mapped", True, counted, *relayed)


def _round_of(event: Event, received: list[Event], answered: list[Event]
              ) -> tuple[Event | None, Event | None]:
    """The host request a notification was passed on during (a 2026-07-28 call taking
    rounds: the round it names by id), and that request's answer (None: not answered)."""
    wanted = _id(event.get("host_id"))
    request = next((e for e in received if _id((e.get("message") or {}).get("id")) == wanted),
                   received[0] if received else None)
    answer = next((e for e in answered if _id((e.get("message") or {}).get("id")) == wanted),
                  answered[0] if answered else None)
    return request, answer


def _unasked_log(event: Event, request: Event | None) -> str | None:
    """Why a log message should not have reached a 2026-07-28 request (None: it may): such a
    request asks for them with ``io.modelcontextprotocol/logLevel``, at that level and above."""
    if request is None or request.get("protocol_version") not in MODERN_VERSIONS:
        return None  # a 2025 host's level is its session's (logging/setLevel)
    meta = ((request.get("message") or {}).get("params") or {}).get("_meta")
    wanted = meta.get(LOG_LEVEL_KEY) if isinstance(meta, dict) else None
    if not isinstance(wanted, str):
        return (f"a log message passed on to the 2026-07-28 request {request.get('host_id')!r}, which asked "
                f"for none (no {LOG_LEVEL_KEY})")
    level = (event.get("host") or {}).get("level")
    if not at_least(level, wanted):
        return f"a log message at {level!r} reached a 2026-07-28 request that asked for {wanted!r} and up"
    return None


def _token(params: Any) -> Any:
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get("progressToken") if isinstance(meta, dict) else None


_CANCELLABLE: Final = frozenset({"tools/call", "tasks/get", "tasks/result", "tasks/list", "tasks/cancel"})
"""What a host's cancelled request may have sent upstream (a host task's requests: ``proxy_tasks``)."""


def _cancel(route: Event, sent: list[Event], passing: Passing, said: Say) -> list[Finding]:
    calls = [e for e in sent if e.get("message", {}).get("method") in _CANCELLABLE]
    if not calls:
        return []  # cancelled before it went upstream
    missing = [e for e in calls
               if (e.get("server"), e.get("connection"), _id(e.get("mcp_id"))) not in passing.cancels]
    if missing:
        return [said("correlation", "cancel_honoured", False,
                     f"cancelled by the host, but the upstream request {missing[0].get('mcp_id')!r} on "
                     f"{missing[0].get('server')} was not cancelled", route, *missing)]
    return [said("correlation", "cancel_honoured", True,
                 f"cancelled upstream too ({calls[-1].get('server')} id {calls[-1].get('mcp_id')!r})",
                 route, *calls)]
