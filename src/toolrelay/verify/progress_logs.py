"""Correlation of what servers report during a call: progress and log messages.

Every ``tools/call`` toolrelay sends carries ``_meta.progressToken``. A
``notifications/progress`` names one: it belongs to the pending tools/call that sent that
token on the same server connection (sent before it, not yet answered or cancelled), and
is recorded with that call's ``call_id``; its ``progress`` grows from one notification to
the next. Progress naming no pending call is recorded without a call_id (toolrelay
ignored it): a finding says so, without failing the run. A log message
(``notifications/message``) recorded with a call_id arrived on that call's stream: on
its server connection, after its tools/call and before its answer.
"""

from __future__ import annotations

from operator import methodcaller
from typing import Any

from ..events import MCP_NOTIFICATION, MCP_REQUEST, MCP_RESPONSE
from .evidence import call_finding, seqs_of
from .facts import RunFacts
from .record import CallTrace, RunRecord
from .server_requests import outside_call
from .verdict import Finding

__all__ = ["check_progress_and_logs"]

_CALL = "tools/call"
_PROGRESS = "notifications/progress"
_LOG = "notifications/message"
_CANCELLED = "notifications/cancelled"
Event = dict[str, Any]
_METHOD = methodcaller("get", "method")


def check_progress_and_logs(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """correlation: each progress notification on its pending call, growing; each log
    message attached to a call inside it."""
    findings = _progress_pairs(run)
    for call in run.calls:
        if call.mcp_other:  # most calls: no other MCP message, and nothing to say
            findings.extend(_during(call))
    return findings


def _progress_pairs(run: RunRecord) -> list[Finding]:
    if _PROGRESS not in map(_METHOD, run.of_kind(MCP_NOTIFICATION)):
        return []  # only progress is judged here; the calls' requests matter only to it (found in C)
    pending = _Pending()
    last: dict[tuple[Any, Any, Any], Any] = {}
    findings: list[Finding] = []
    for event in run.mcp:
        kind, method = event["kind"], event.get("method")
        session = (event.get("server"), event.get("connection"))
        if kind == MCP_REQUEST and method == _CALL:
            token = _token(event)
            if token is not None:
                pending.open((*session, token), event)
        elif kind == MCP_RESPONSE and method == _CALL:
            pending.close(session, event.get("mcp_id"))
        elif kind == MCP_NOTIFICATION and method == _CANCELLED and event.get("direction") == "out":
            pending.close(session, _params(event).get("requestId"))
        elif kind == MCP_NOTIFICATION and method == _PROGRESS and event.get("direction") == "in":
            problem = _judge_progress(event, pending, last, session)
            if problem is not None:
                findings.append(problem)
    return findings


class _Pending(dict[tuple[Any, Any, Any], Event]):
    """(server, connection, token) → the tools/call request that sent it, while pending;
    found again by (server, connection, mcp id) when answered or cancelled (not by
    walking every pending request: with 16 calls in flight that was most of this check)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_id: dict[tuple[Any, Any, Any], list[tuple[Any, Any, Any]]] = {}

    def open(self, key: tuple[Any, Any, Any], request: Event) -> None:
        self[key] = request
        self.by_id.setdefault((*key[:2], request.get("mcp_id")), []).append(key)

    def close(self, session: tuple[Any, Any], mcp_id: Any) -> None:
        """Forget every pending request of ``session`` with ``mcp_id``."""
        if isinstance(mcp_id, dict | list):  # a requestId no request has (ids are hashable): none
            _close(self, session, mcp_id)
            return
        for key in self.by_id.pop((*session, mcp_id), ()):
            request = self.get(key)
            if request is not None and request.get("mcp_id") == mcp_id:
                del self[key]


def _judge_progress(
    event: Event, pending: dict[tuple[Any, Any, Any], Event], last: dict[tuple[Any, Any, Any], Any],
    session: tuple[Any, Any],
) -> Finding | None:
    params = _params(event)
    token, progress = params.get("progressToken"), params.get("progress")
    key = (*session, token) if isinstance(token, (str, int)) and not isinstance(token, bool) else None
    request = pending.get(key) if key is not None else None
    server, call_id = event.get("server"), event.get("call_id")
    if request is None or key is None:
        said = f"server {server} sent progress for token {token!r}, which no pending tools/call sent"
        if call_id is not None:
            return _finding(False, f"{said}, yet it is recorded with call {call_id}", event)
        return _finding(True, f"{said}: recorded, ignored", event)
    if call_id != request.get("call_id"):
        owner = request.get("call_id")
        return _finding(False, f"progress for token {token!r} is recorded with call_id {call_id!r}, the "
                               f"tools/call that sent the token with {owner!r}", event, request)
    before = last.get(key)
    last[key] = progress
    if not _number(progress) or (before is not None and _number(before) and progress <= before):
        return _finding(False, f"server {server} sent progress {progress!r} for token {token!r} after "
                               f"{before!r}: progress must be a number that increases", event)
    return None


def _during(call: CallTrace) -> list[Finding]:
    """The call's progress and log messages lie inside its tools/call; one finding counts them."""
    reported = [e for e in call.mcp_other
                if e.get("method") in (_PROGRESS, _LOG) and e.get("direction") == "in"]
    if not reported:
        return []
    first = call.input_rounds[0][0] if call.input_rounds else call.first("mcp_requests")
    response = call.first("mcp_responses")
    for event in reported:
        outside = outside_call(event, first, response)
        if outside is not None:
            said = f"{call.call_id}: the server's {event.get('method')} is recorded with this call, {outside}"
            return [call_finding(call, "correlation", False, said, "progress_logs", event, first, response)]
    progress = [e for e in reported if e.get("method") == _PROGRESS]
    logs = len(reported) - len(progress)
    parts = []
    if progress:
        params = _params(progress[-1])
        total = f"/{params['total']}" if "total" in params else ""
        parts.append(f"{len(progress)} progress notification(s) (last {params.get('progress')}{total})")
    if logs:
        parts.append(f"{logs} log message(s)")
    message = f"{call.call_id}: during its tools/call the server sent " + " and ".join(parts)
    return [call_finding(call, "correlation", True, message, "progress_logs", *reported)]


def _close(pending: dict[tuple[Any, Any, Any], Event], session: tuple[Any, Any], mcp_id: Any) -> None:
    for key, request in list(pending.items()):
        if key[:2] == session and request.get("mcp_id") == mcp_id:
            del pending[key]


def _token(event: Event) -> Any:
    meta = _params(event).get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None


def _params(event: Event) -> dict[str, Any]:
    message = event.get("message")
    params = message.get("params") if isinstance(message, dict) else None
    return params if isinstance(params, dict) else {}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _finding(ok: bool, message: str, *events: Event | None) -> Finding:
    first = next((e for e in events if e is not None), {})
    return Finding(link="correlation", ok=ok, check="progress_logs", message=message,
                   server=first.get("server"), call_id=first.get("call_id"), seqs=seqs_of(*events))
