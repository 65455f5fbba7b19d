"""Link 6, correlation, the other way round: what a server asked toolrelay, and its answers.

A server may send requests of its own (``roots/list``, ``sampling/createMessage``,
``elicitation/create``, ``tasks/*``, ``ping``) in its own id domain. In each session
(server + connection) every such request id is answered exactly once by toolrelay's reply
with that id, and no reply answers nothing; a request may stay unanswered only when the
session ended or the run did not finish. A server request recorded with a ``call_id``
arrived during that call: it is on the call's server and connection, after its
``tools/call`` and before its answer, and toolrelay's reply carries the same call_id.
Each call that was asked something gets a finding naming what, and how it was answered.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from ..client.refusals import CAP_HINT
from ..events import MCP_REPLY, MCP_SERVER_REQUEST
from .evidence import call_finding, seqs_of
from .facts import RunFacts
from .record import CallTrace, RunRecord
from .verdict import Finding

__all__ = ["check_server_requests", "outside_call"]

_TOLERATED_ENDINGS = frozenset({"aborted", "timeout", "error", None})
_SEQ = itemgetter("seq")


@dataclass(slots=True)
class _Asked:
    """One session's server requests still waiting for toolrelay's reply, and those answered."""

    open: dict[Any, dict[str, Any]] = field(default_factory=dict)
    answered: set[Any] = field(default_factory=set)
    replies: dict[int, dict[str, Any]] = field(default_factory=dict)
    """``id()`` of a request's event → toolrelay's reply to it."""


def check_server_requests(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """correlation: each server request answered once by its id, inside the call it names."""
    sessions: dict[tuple[Any, Any], _Asked] = {}
    findings: list[Finding] = []
    asked_of, replies = run.of_kind(MCP_SERVER_REQUEST), run.of_kind(MCP_REPLY)
    # the two kinds, in the transcript's order (most runs have none: no walk of every MCP event)
    for event in heapq.merge(asked_of, replies, key=_SEQ) if replies else asked_of:
        key = (event.get("server"), event.get("connection"))
        asked = sessions.get(key)
        if asked is None:
            asked = sessions[key] = _Asked()
        problem = _pair(asked, event)
        if problem is not None:
            findings.append(problem)
    # a server that died (not one toolrelay closed at the end) may leave a request open
    exited = {(e.get("server"), e.get("connection")) for e in run.exits if not e.get("expected")}
    for key, asked in sessions.items():
        if key in exited or run.status in _TOLERATED_ENDINGS:
            continue
        for mcp_id, request in asked.open.items():
            findings.append(_broken(f"{request.get('method')} request {mcp_id!r} from server {key[0]} "
                                    f"(connection {key[1]}) was never answered, yet the run ended normally",
                                    request))
    answers = {key: reply for asked in sessions.values() for key, reply in asked.replies.items()}
    for call in run.calls:
        if call.server_requests:  # most calls: none, and nothing to say
            findings.extend(_during(call, answers, facts))
    return findings


def _pair(asked: _Asked, event: dict[str, Any]) -> Finding | None:
    message = event.get("message") if isinstance(event.get("message"), dict) else {}
    assert isinstance(message, dict)
    mcp_id = message.get("id")
    if event.get("mcp_id") != mcp_id:
        return _broken(f"the {event['kind']} event records id {event.get('mcp_id')!r}, its message has id "
                       f"{mcp_id!r}", event)
    if event["kind"] == MCP_SERVER_REQUEST:
        if mcp_id in asked.open or mcp_id in asked.answered:
            server = event.get("server")
            return _broken(f"server {server} used request id {mcp_id!r} twice in a session", event)
        asked.open[mcp_id] = event
        return None
    request = asked.open.pop(mcp_id, None)
    if request is None:
        why = "answered twice" if mcp_id in asked.answered else "a request the server never sent"
        return _broken(f"toolrelay's reply with id {mcp_id!r} to server {event.get('server')} answers {why}",
                       event)
    if request.get("call_id") != event.get("call_id"):
        return _broken(f"the {request.get('method')} request {mcp_id!r} is recorded with call_id "
                       f"{request.get('call_id')!r}, its reply with {event.get('call_id')!r}", request, event)
    asked.answered.add(mcp_id)
    asked.replies[id(request)] = event
    return None


def _during(call: CallTrace, answers: dict[int, dict[str, Any]], facts: RunFacts) -> list[Finding]:
    """The call's server requests lie inside its tools/call; one finding says what was asked."""
    asked = [e for e in call.server_requests if e["kind"] == MCP_SERVER_REQUEST]
    if not asked:
        return []
    request, response = call.first("mcp_requests"), facts.answer(call)  # a task's: its tasks/result
    lines: list[str] = []
    for event in asked:
        outside = outside_call(event, request, response)
        if outside is not None:
            said = (f"{call.call_id}: the server's {event.get('method')} request {event.get('mcp_id')!r} "
                    f"is recorded with this call, {outside}")
            evidence = (event, request, response)
            return [call_finding(call, "correlation", False, said, "server_requests", *evidence)]
        reply = answers.get(id(event))
        lines.append(f"{event.get('method')} {event.get('mcp_id')!r} → {_answer(reply)}")
    message = f"{call.call_id}: during its tools/call the server asked " + "; ".join(lines)
    capped = sum(_over_cap(answers.get(id(event))) for event in asked)
    said = (call.outcome or {}).get("sampling_refused", 0)
    if said != capped:
        wrong = (f"{call.call_id}: its outcome says {said} sampling request(s) were refused for the per-call "
                 f"cap, but toolrelay's replies refused {capped}")
        return [call_finding(call, "correlation", False, wrong, "server_requests", *asked)]
    message += f" ({capped} sampling request(s) refused for the per-call cap)" if capped else ""
    return [call_finding(call, "correlation", True, message, "server_requests", *asked)]


def _over_cap(reply: dict[str, Any] | None) -> bool:
    """Whether toolrelay's reply refused a sampling request for the per-call cap."""
    error = (reply or {}).get("message", {}).get("error")
    return isinstance(error, dict) and error.get("code") == -1 and str(error.get("message")).endswith(
        CAP_HINT)


def outside_call(
    event: dict[str, Any], request: dict[str, Any] | None, response: dict[str, Any] | None
) -> str | None:
    """Why a message the server sent during a call lies outside it (None: it lies inside)."""
    if request is None:
        return "which sent no tools/call"
    if (event.get("server"), event.get("connection")) != (request.get("server"), request.get("connection")):
        return f"but came from {event.get('server')} (connection {event.get('connection')})"
    if event["seq"] < request["seq"]:
        return "but came before its tools/call"
    if response is not None and event["seq"] > response["seq"]:
        return "but came after its answer"
    return None


def _answer(reply: dict[str, Any] | None) -> str:
    if reply is None:
        return "not answered"
    message = reply.get("message") or {}
    error = message.get("error")
    if isinstance(error, dict):
        return f"error {error.get('code')}"
    result = message.get("result")
    action = result.get("action") if isinstance(result, dict) else None
    return f"answered ({action})" if isinstance(action, str) else "answered"


def _broken(message: str, *events: dict[str, Any] | None) -> Finding:
    first = next((e for e in events if e is not None), {})
    return Finding(link="correlation", ok=False, check="server_requests", message=message,
                   server=first.get("server"), call_id=first.get("call_id"), seqs=seqs_of(*events))
