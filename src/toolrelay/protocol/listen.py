"""``subscriptions/listen`` (MCP 2026-07-28, SEP-2575), sans-IO: the names, the filter,
and reading a listen stream's messages.

The revision has no standalone stream and no ``resources/subscribe``: a client that wants
to hear what changes on a server sends one ``subscriptions/listen`` request whose answer
is the stream (stdio: a request left open; HTTP: a POST whose SSE stream stays open). Its
params name what it wants (``{"notifications": {"toolsListChanged": true, ...}}``); the
server's first message on it is ``notifications/subscriptions/acknowledged`` with the
subset it honours, and every message on it carries the request's id under
``_meta["io.modelcontextprotocol/subscriptionId"]``. The client ends it by cancelling it
(stdio) or closing the stream (HTTP); a server may end it by answering it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from .jsonrpc import JSONObject

__all__ = [
    "ACKNOWLEDGED", "LISTEN", "NO_UPDATES", "SUBSCRIPTION_ID_KEY", "honoured_filter", "listen_filter",
    "named_uris", "subscription_id",
]

LISTEN: Final = "subscriptions/listen"
ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
SUBSCRIPTION_ID_KEY: Final = "io.modelcontextprotocol/subscriptionId"


NO_UPDATES: Final = "its server does not declare resources.subscribe: it tells no updates to follow"
"""Why a proxy answers a subscription to such a 2026-07-28 server ``{}`` with nothing listened
(as that server, asked in 2025 terms, would accept it and tell nothing)."""


def listen_filter(capabilities: Mapping[str, Any], resources: Sequence[str]) -> JSONObject:
    """What a client that re-lists tools and resources asks of a server declaring
    ``capabilities``: each list change it declares, and ``resources`` (URIs to follow) when
    it declares ``resources.subscribe``. Empty when there is nothing to listen for."""
    wanted: JSONObject = {}
    if _declares(capabilities, "tools", "listChanged"):
        wanted["toolsListChanged"] = True
    if _declares(capabilities, "resources", "listChanged"):
        wanted["resourcesListChanged"] = True
    if resources and _declares(capabilities, "resources", "subscribe"):
        wanted["resourceSubscriptions"] = list(dict.fromkeys(resources))
    return wanted


def named_uris(notifications: Any) -> list[str]:
    """The URIs a listen filter (or an acknowledgement's) names in ``resourceSubscriptions``,
    in order; none when it names none or is not a filter."""
    found = notifications.get("resourceSubscriptions") if isinstance(notifications, dict) else None
    return [uri for uri in found if isinstance(uri, str)] if isinstance(found, list) else []


def honoured_filter(requested: Mapping[str, Any], offers: Mapping[str, Any]) -> JSONObject:
    """The acknowledgement's subset of ``requested`` for a server that can send what
    ``offers`` says (the same keys; ``resourceSubscriptions`` as the URIs it serves)."""
    honoured: JSONObject = {}
    for key in ("toolsListChanged", "promptsListChanged", "resourcesListChanged"):
        if requested.get(key) is True and offers.get(key) is True:
            honoured[key] = True
    uris = requested.get("resourceSubscriptions")
    served = offers.get("resourceSubscriptions")
    if isinstance(uris, list) and isinstance(served, list):
        kept = [uri for uri in uris if uri in served]
        if kept:
            honoured["resourceSubscriptions"] = kept
    return honoured


def subscription_id(message: Mapping[str, Any]) -> int | str | None:
    """The listen request a notification belongs to (its ``_meta`` subscription id), or None
    (also for a value that cannot be a request id)."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    found = meta.get(SUBSCRIPTION_ID_KEY) if isinstance(meta, dict) else None
    return found if isinstance(found, (int, str)) and not isinstance(found, bool) else None


def _declares(capabilities: Mapping[str, Any], feature: str, flag: str) -> bool:
    declared = capabilities.get(feature)
    return isinstance(declared, dict) and declared.get(flag) is True
