"""``toolrelay explain`` of a proxy transcript: each host request across both legs.

One block per host request, in order (a tool call; a resource, prompt or completion
request; a host task's ``tasks/*``, with the task the call created and its status told):
the host's id (and its own call id, if it gave one), the alias or URI it named, where
the proxy sent it (server, connection, the upstream JSON-RPC id) or what it decided
instead, what came back, and each check of ``proxy_legs`` on it, ok or broken.
"""

from __future__ import annotations

from typing import Any

from .jsonpath import excerpt
from .proxy_answers import Event
from .proxy_features import host_name
from .proxy_task_owners import owner_text
from .record import RunRecord
from .verdict import LINK_TITLES, Finding, Verdict

__all__ = ["explain_proxy"]


def explain_proxy(run: RunRecord, verdict: Verdict) -> str:
    """The two legs of every host request, as text."""
    start = next((e for e in run.events if e.get("kind") == "proxy_start"), {})
    ended = next((e for e in run.events if e.get("kind") == "proxy_end"), None)
    lines = [
        f"proxy run {run.run_id} · {start.get('name', '?')} over {start.get('transport', '?')} · servers "
        f"{', '.join(map(str, start.get('servers', [])))} · "
        + (f"ended: {ended.get('reason')}" if ended else "not ended (no proxy_end)"),
        f"source: {run.source}",
        "",
    ]
    by_key: dict[str, list[Finding]] = {}
    for finding in verdict.findings:
        by_key.setdefault(str(finding.call_id), []).append(finding)
    routes = {str(e.get("key")): e for e in run.events if e.get("kind") == "proxy_route"}
    answers = {str(e.get("key")): e for e in run.events
               if e.get("kind") == "proxy_host" and e.get("direction") == "out"}
    during: dict[str, list[dict[str, Any]]] = {}
    created = {str(e.get("task_id")): str(e.get("key")) for e in run.events if e.get("kind") == "proxy_task"}
    for event in run.events:
        if event.get("kind") in ("proxy_ask", "proxy_relayed", "proxy_task") and event.get("key"):
            during.setdefault(str(event.get("key")), []).append(event)
        elif event.get("kind") in ("proxy_task_status", "proxy_task_abandoned"):  # with the task's call
            during.setdefault(created.get(str(event.get("task_id")), ""), []).append(event)
    host_in: dict[str, list[Event]] = {}
    upstream: dict[tuple[Any, Any, Any], Event] = {}
    for event in run.events:
        if event.get("kind") == "proxy_host" and event.get("direction") == "in":
            host_in.setdefault(str(event.get("key")), []).append(event)
        elif event.get("kind") == "mcp_request":
            upstream[(event.get("server"), event.get("connection"), event.get("mcp_id"))] = event
    for event in run.events:
        if event.get("kind") == "proxy_host" and event.get("direction") == "in":
            key = str(event.get("key"))
            route = routes.get(key)
            sent = upstream.get((route.get("server"), route.get("connection"), route.get("mcp_id"))) \
                if route is not None else None
            lines += _request(event, route, sent, answers.get(key), by_key.get(key, []),
                              [_during_text(e, host_in) for e in during.get(key, [])])
    broken = verdict.broken
    lines.append("verdict: " + (f"BROKEN at {LINK_TITLES.get(broken.link, broken.link)}" if broken is not None
                                else "ok, every link holds"))
    lines += [f"  unfinished: {reason}" for reason in verdict.unfinished]
    return "\n".join(lines) + "\n"


def _request(event: dict[str, Any], route: dict[str, Any] | None, sent: Event | None,
             answer: dict[str, Any] | None, findings: list[Finding], during: list[str]) -> list[str]:
    params = (event.get("message") or {}).get("params") or {}
    method = str(event.get("method") or (event.get("message") or {}).get("method") or "tools/call")
    own = f" · host call id {event['host_call_id']}" if event.get("host_call_id") else ""
    if event.get("exchange") is not None:  # a 2026-07-28 HTTP host's request: its exchange tells it apart
        own += f" · exchange {event['exchange']}"
    asked = f"arguments {excerpt(params.get('arguments'), 80)}" if method == "tools/call" else \
        excerpt({k: v for k, v in params.items() if k != "_meta"}, 80)
    named = params.get("name") if method == "tools/call" else host_name(params) or ""
    lines = [f"host request {event.get('key')} · host id {event.get('host_id')!r}{own} · "
             f"{event.get('protocol_version') or '?'}",
             "  host → proxy   " + " ".join(str(part) for part in (method, named, asked) if part)]
    if route is not None:
        if route.get("mcp_id") is not None:
            lines.append(_upstream_text(route, sent, str(event.get("key")), method))
        lines.append(f"  decision       {route.get('decision')}"
                     + (f": {route.get('reason')}" if route.get("reason") else ""))
    lines += during
    if answer is not None:
        lines.append(f"  proxy → host   {_answer_text(answer.get('message') or {})}")
    lines += [f"  {'ok' if f.ok else 'BROKEN':>6}  {LINK_TITLES.get(f.link, f.link)}: {f.message}"
              for f in findings]
    return [*lines, ""]


def _upstream_text(route: Event, sent: Event | None, key: str, method: str) -> str:
    """The upstream request the route names, by its own method (a bridged task's answer rests
    on the proxy's own poll, its cancel or the call that made it), and the host request it
    was sent for when that is another (the one that made the task)."""
    upstream = (sent.get("message") or {}).get("method") if sent is not None else None
    said = f"{upstream}" if upstream else f"{method} (no such upstream request recorded)"
    served = sent.get("call_id") if sent is not None else None
    also = f" · sent for host request {served}" if served is not None and str(served) != key else ""
    return (f"  proxy → {route.get('server')}   {said} {route.get('tool')} · connection "
            f"{route.get('connection')} · upstream id {route.get('mcp_id')!r}{also}")


def _during_text(event: dict[str, Any], host_in: dict[str, list[Event]]) -> str:
    """What passed through the call: an upstream ask and who answered it, a notification."""
    server, method, outcome = event.get("server"), event.get("method"), event.get("outcome")
    if event.get("kind") == "proxy_task":
        upstream = event.get("upstream_task_id")
        return (f"  task           {event.get('task_id')} ↔ {server} task {upstream!r} · "
                f"connection {event.get('connection')} · {owner_text(event, host_in)}'s "
                "(the host names it by the proxy's id)")
    if event.get("kind") == "proxy_task_abandoned":
        return (f"  proxy → {server}   tasks/cancel of task {event.get('upstream_task_id')!r} (upstream id "
                f"{event.get('mcp_id')!r}): the proxy gave up on task {event.get('task_id')}, "
                f"{event.get('reason')}")
    if event.get("kind") == "proxy_task_status":
        status = (event.get("host") or {}).get("status")
        return f"  {server} → host  notifications/tasks/status {status} · task {event.get('task_id')}"
    if event.get("kind") == "proxy_ask":
        asked = f"  {server} asks    {method} (upstream id {event.get('upstream_id')!r})"
        if event.get("answered_by") == "host":
            return f"{asked} → asked of the host (id {event.get('host_request_id')!r}): {outcome}"
        return f"{asked} → answered by the proxy: {outcome} ({event.get('reason')})"
    if event.get("upstream_token") is not None:
        tokens = f"token {event.get('upstream_token')!r} → the host's {event.get('host_token')!r}"
        return f"  {server} → host  {method} · {tokens}"
    return f"  {server} → host  {method} {excerpt(event.get('host'), 80)}"


def _answer_text(message: dict[str, Any]) -> str:
    if "error" in message:
        error = message.get("error") or {}
        return f"error {error.get('code')}: {error.get('message')}"
    result = message.get("result") or {}
    marker = "isError · " if isinstance(result, dict) and result.get("isError") else ""
    shown = result.get("content", result) if isinstance(result, dict) else result  # a tool's, or any result
    return marker + excerpt(shown, 100)
