"""The rows of a proxy transcript's host leg: the host's requests and the proxy's answers as
arrows between the Host lane and the proxy (App) lane; how each was routed, what hosts
are offered and the proxy's start and end as notes on the proxy's lane. The upstream leg
is drawn as every MCP exchange is (``rows._mcp``), its call badge the same key."""

from __future__ import annotations

from typing import Any, Final

from .compact_json import compact
from .model import Badge, Row, RowState

__all__ = ["HOST_LANE", "PROXY_DESCRIBERS"]

HOST_LANE: Final = "user"
"""The left lane: titled Host in a proxy transcript (``build._lanes``)."""


def _badges(record: dict[str, Any]) -> list[Badge]:
    badges = [Badge(kind="call", text=str(record.get("key")))]
    if record.get("host_id") is not None:
        badges.append(Badge(kind="mcp", text=f"host id {record.get('host_id')}"))
    if record.get("host_call_id"):
        badges.append(Badge(kind="call", text=f"host call {record.get('host_call_id')}"))
    return [*badges, *_exchange(record)]


def _exchange(record: dict[str, Any]) -> list[Badge]:
    """A 2026-07-28 HTTP host's message: the exchange it crossed in (two hosts may share an id)."""
    number = record.get("exchange")
    return [Badge(kind="mcp", text=f"exchange {number}")] if number is not None else []


def _host(record: dict[str, Any]) -> Row:
    message = _object(record.get("message"))
    incoming = record.get("direction") == "in"
    label, detail, state = _request_text(message) if incoming else _answer_text(message)
    return Row(seq=int(record.get("seq", 0)), kind=str(record.get("kind")),
               stage="call" if incoming else "result",
               source=HOST_LANE if incoming else "app", target="app" if incoming else HOST_LANE,
               label=label, detail=detail, badges=_badges(record), state=state, message=True,
               call_id=str(record.get("key")))


def _wire(record: dict[str, Any]) -> Row:
    """A host-leg message as on the wire (stdio hosts): the handshake, lists, each answer as sent."""
    message = _object(record.get("message"))
    incoming = record.get("direction") == "in"
    if "method" in message:
        label, detail = f"wire: {message.get('method')}", compact(message.get("params"))
    else:
        answered = message.get("result", message.get("error"))
        label, detail = f"wire: answer to id {message.get('id')}", compact(answered)
    badges = [Badge(kind="mcp", text=f"host id {message['id']}")] if message.get("id") is not None else []
    badges += _exchange(record)
    return Row(seq=int(record.get("seq", 0)), kind="proxy_wire", stage="host",
               source=HOST_LANE if incoming else "app", target="app" if incoming else HOST_LANE,
               label=label, detail=detail, badges=badges, message=True)


def _request_text(message: dict[str, Any]) -> tuple[str, str, RowState]:
    params = _object(message.get("params"))
    method = message.get("method", "tools/call")
    if method != "tools/call":  # a resource, prompt or completion request
        named = params.get("uri") or params.get("name") or _object(params.get("ref")).get("name") \
            or _object(params.get("ref")).get("uri") or ""
        shown = {k: v for k, v in params.items() if k != "_meta"}
        return f"host: {method} {named}".rstrip(), compact(shown), "ok"
    return f"host: tools/call {params.get('name')}", "arguments " + compact(params.get("arguments")), "ok"


def _answer_text(message: dict[str, Any]) -> tuple[str, str, RowState]:
    if "error" in message:
        error = _object(message["error"])
        return f"to host: error {error.get('code', '?')}", str(error.get("message", "")), "failed"
    result = _object(message.get("result"))
    failed = result.get("isError") is True
    return ("to host: tool error" if failed else "to host: result"), compact(result.get("content", result)), \
        ("warn" if failed else "ok")


def _route(record: dict[str, Any]) -> Row:
    decision = str(record.get("decision"))
    where = f"{record.get('server')}#{record.get('connection')} id {record.get('mcp_id')}" \
        if record.get("mcp_id") is not None else ""
    state: RowState = "ok" if decision in ("forwarded", "listed", "listened", "task") \
        else "warn" if decision in ("denied", "withheld") else "failed"
    return Row(seq=int(record.get("seq", 0)), kind="proxy_route", stage="route", source="app", target="app",
               label=f"{record.get('alias')} → {decision} {where}".strip(),
               detail=str(record.get("reason") or ""),
               badges=_badges(record), state=state, call_id=str(record.get("key")))


class _Fields(dict[str, Any]):
    """A record's fields for a note's text; one a (tampered) record lacks reads as ``?``."""

    def __missing__(self, key: str) -> str:
        return "?"


def _note(label: str, detail: str) -> Any:
    def describe(record: dict[str, Any]) -> Row:
        fields = _Fields(record)
        return Row(seq=int(record.get("seq", 0)), kind=str(record.get("kind")), stage="proxy", source="app",
                   target="app", label=label.format_map(fields), detail=detail.format_map(fields))
    return describe


def _offer(record: dict[str, Any]) -> Row:
    routes = _object(record.get("routes"))
    withheld = _list(record.get("withheld"))
    return Row(seq=int(record.get("seq", 0)), kind="proxy_offer", stage="declare", source="app", target="app",
               label=f"hosts offered {len(routes)} tools ({record.get('reason')})",
               detail=", ".join(routes) + (f"; {len(withheld)} withheld" if withheld else ""))


def _ask(record: dict[str, Any]) -> Row:
    """An upstream's ask during a host call: to the host (an arrow) or answered by the proxy (a note)."""
    by_host = record.get("answered_by") == "host"
    outcome = str(record.get("outcome"))
    state: RowState = "ok" if outcome in ("accept", "sampled") else "warn"
    badges = _badges(record)
    if by_host and record.get("host_request_id") is not None:
        badges.append(Badge(kind="mcp", text=f"to host id {record.get('host_request_id')}"))
    return Row(seq=int(record.get("seq", 0)), kind="proxy_ask", stage="ask", source="app",
               target=HOST_LANE if by_host else "app",
               label=f"{record.get('server')} asks {record.get('method')} → "
                     + (f"the host: {outcome}" if by_host else f"the proxy: {outcome}"),
               detail=str(record.get("reason") or compact(_object(record.get("host_answer")).get("result"))),
               badges=badges, state=state, message=by_host, call_id=str(record.get("key")))


def _relayed(record: dict[str, Any]) -> Row:
    token = record.get("upstream_token")
    detail = (f"token {token!r} → {record.get('host_token')!r}" if token is not None
              else compact(record.get("host")))
    return Row(seq=int(record.get("seq", 0)), kind="proxy_relayed", stage="notify", source="app",
               target=HOST_LANE, label=f"to host: {record.get('method')} (from {record.get('server')})",
               detail=detail, badges=_badges(record) if record.get("key") else [], message=True,
               call_id=str(record.get("key")) if record.get("key") else None)


def _task(record: dict[str, Any]) -> Row:
    """A host's own task: the proxy's id of it and the upstream task it stands for."""
    return Row(seq=int(record.get("seq", 0)), kind="proxy_task", stage="route", source="app", target="app",
               label=f"task {record.get('task_id')} ↔ {record.get('server')}#{record.get('connection')} "
                     f"task {record.get('upstream_task_id')}",
               detail=f"the host's id ↔ the upstream's (host {record.get('host')}{_era(record)})",
               badges=[Badge(kind="call", text=str(record.get("key")))], call_id=str(record.get("key")))


def _era(record: dict[str, Any]) -> str:
    """The revision the task's host spoke, as recorded (older transcripts: not said)."""
    version = record.get("host_version")
    return f", a {version} host" if version else ""


def _task_status(record: dict[str, Any]) -> Row:
    status = _object(record.get("host")).get("status")
    told = _object(record.get("upstream"))  # a bridged task's: the tasks/get answer it tells
    said = told.get("result") if record.get("mcp_id") is not None else told.get("params")
    upstream = _object(said).get("taskId")
    return Row(seq=int(record.get("seq", 0)), kind="proxy_task_status", stage="notify", source="app",
               target=HOST_LANE, label=f"to host: task {record.get('task_id')} {status} (from "
                                       f"{record.get('server')}'s {upstream})",
               detail=compact(record.get("host")), message=True)


def _task_abandoned(record: dict[str, Any]) -> Row:
    """A bridged task the proxy cancelled upstream itself (its host did not answer, or left)."""
    return Row(seq=int(record.get("seq", 0)), kind="proxy_task_abandoned", stage="route", source="app",
               target="app", label=f"task {record.get('task_id')} given up: tasks/cancel to "
                                   f"{record.get('server')}#{record.get('connection')} task "
                                   f"{record.get('upstream_task_id')}",
               detail=str(record.get("reason")))


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


PROXY_DESCRIBERS: Final = {
    "proxy_host": _host,
    "proxy_route": _route,
    "proxy_wire": _wire,
    "proxy_offer": _offer,
    "proxy_ask": _ask,
    "proxy_relayed": _relayed,
    "proxy_task": _task,
    "proxy_task_status": _task_status,
    "proxy_task_abandoned": _task_abandoned,
    "proxy_start": _note("proxy {name} starts ({transport})", "servers: {servers}"),
    "proxy_end": _note("proxy ends", "{reason}"),
}
"""Event kind → its row, for the proxy's own kinds."""
