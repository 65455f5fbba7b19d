"""The rows of an OAuth sign-in: each exchange with the authorization side (``auth_exchange``:
step, method, URL, status) and its outcome (``auth``: signed in, refreshed, needed,
failed), drawn as notes on the server's lane, so the page shows where a sign-in happened.
The records hold no secret (the transport never records one); these only lay them out."""

from __future__ import annotations

from typing import Any

from ..events import AuthExchange, AuthOutcome
from .model import Badge, Row, RowState

__all__ = ["AUTH_DESCRIBERS"]

_OUTCOMES = {"signed_in": "signed in", "refreshed": "token refreshed", "stored": "stored sign-in used",
             "needed": "needs a sign-in", "failed": "sign-in failed"}


def _note(record: dict[str, Any], label: str, detail: str, state: RowState) -> Row:
    server = str(record.get("server") or "?")
    lane = f"server:{server}"
    badge = Badge(kind="server", text=f"{server}#{record.get('connection') or '?'}")
    return Row(seq=int(record.get("seq", 0)), kind=str(record.get("kind")), stage="server", source=lane,
               target=lane, label=label, detail=detail, badges=[badge], state=state)


def _exchange(record: dict[str, Any]) -> Row:
    status = record.get("status")
    answered = f"HTTP {status}" if isinstance(status, int) else "no answer"
    state: RowState = "ok" if isinstance(status, int) and status < 400 else "warn"
    return _note(record, f"sign-in · {record.get('step')}: {record.get('method')} → {answered}",
                 str(record.get("url") or ""), state)


def _outcome(record: dict[str, Any]) -> Row:
    outcome = str(record.get("outcome") or "?")
    how = f" ({record['how']})" if record.get("how") else ""
    scopes = record.get("scopes")
    shown = " ".join(str(s) for s in scopes) if isinstance(scopes, list) and scopes else ""
    detail = " · ".join(part for part in (f"issuer {record.get('issuer')}" if record.get("issuer") else "",
                                           f"scopes {shown}" if shown else "",
                                           str(record.get("detail") or "")) if part)
    state: RowState = "failed" if outcome == "failed" else "warn" if outcome == "needed" else "ok"
    return _note(record, f"OAuth: {_OUTCOMES.get(outcome, outcome)}{how}", detail, state)


AUTH_DESCRIBERS = {AuthExchange.kind: _exchange, AuthOutcome.kind: _outcome}
