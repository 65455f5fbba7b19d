"""The rows of ``subscriptions/listen`` (MCP 2026-07-28): the request toolrelay leaves open
so that a server can say what changed, its acknowledgement, and what arrives on it. None
carries a call_id, so the trace draws them on the server's lane, outside every call."""

from __future__ import annotations

from typing import Any

from ..protocol.listen import ACKNOWLEDGED, LISTEN, subscription_id
from .model import RowState

__all__ = ["listen_text"]

_ASKED = (("toolsListChanged", "tool list"), ("promptsListChanged", "prompt list"),
          ("resourcesListChanged", "resource list"))


def listen_text(method: str, message: dict[str, Any]) -> tuple[str, str, RowState] | None:
    """A listen row's label, detail and state; None for other messages."""
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    if method == LISTEN:
        return "subscriptions/listen", "asks: " + _filter_text(params.get("notifications")), "ok"
    listen_id = subscription_id(message)
    if listen_id is None:
        return None
    if method == ACKNOWLEDGED:
        honoured = _filter_text(params.get("notifications"))
        return "listening", f"subscription {listen_id} acknowledged: {honoured}", "ok"
    named = f" {params['uri']}" if isinstance(params.get("uri"), str) else ""
    return f"{method}{named}", f"on subscription {listen_id}", "ok"


def _filter_text(wanted: Any) -> str:
    if not isinstance(wanted, dict):
        return "nothing"
    parts = [text for key, text in _ASKED if wanted.get(key) is True]
    uris = wanted.get("resourceSubscriptions")
    if isinstance(uris, list) and uris:
        parts.append("updates of " + ", ".join(str(uri) for uri in uris))
    return ", ".join(parts) if parts else "nothing"
