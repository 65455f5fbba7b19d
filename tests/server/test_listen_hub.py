"""The server side of ``subscriptions/listen`` (``server/listen_hub.py``): an open request is
acknowledged with the subset of its filter the service honours (resource subscriptions
are left out), hears only what it asked for, each message tagged with its id, and nothing
once closed."""

from __future__ import annotations

from typing import Any

from toolrelay.protocol import mcp as m
from toolrelay.protocol.jsonrpc import Request
from toolrelay.protocol.listen import ACKNOWLEDGED, SUBSCRIPTION_ID_KEY
from toolrelay.server.listen_hub import ListenHub


def _listen(request_id: int, wanted: dict[str, Any]) -> Request:
    params = {"notifications": wanted}
    raw = {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen", "params": params}
    return Request(id=request_id, method="subscriptions/listen", params=params, raw=raw)


def test_a_listen_request_hears_what_it_asked_and_was_granted() -> None:
    hub = ListenHub({"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": False})
    heard: list[dict[str, Any]] = []
    number = hub.open(_listen(7, {"toolsListChanged": True, "resourcesListChanged": True,
                                  "resourceSubscriptions": ["test://x"]}), heard.append)
    assert heard == [{"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": {
        "notifications": {"toolsListChanged": True}, "_meta": {SUBSCRIPTION_ID_KEY: 7}}}]
    hub.publish(m.PROMPTS_CHANGED)  # offered, but not asked for
    hub.publish(m.RESOURCES_CHANGED)  # asked for, but not offered
    hub.publish(m.RESOURCE_UPDATED, {"uri": "test://x"})  # subscriptions are not honoured here
    hub.publish(m.TOOLS_CHANGED)
    assert heard[1:] == [{"jsonrpc": "2.0", "method": m.TOOLS_CHANGED,
                          "params": {"_meta": {SUBSCRIPTION_ID_KEY: 7}}}]
    assert hub.listening == 1 and hub.declares("tools") and not hub.declares("resources")
    hub.close(number)
    hub.publish(m.TOOLS_CHANGED)
    assert len(heard) == 2 and hub.listening == 0
