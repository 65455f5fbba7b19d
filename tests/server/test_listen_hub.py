"""The server side of ``subscriptions/listen`` (``server/listen_hub.py``): an open request is
acknowledged with the subset of its filter the service honours (resource subscriptions
only where the hub follows resources, and only the URIs it can follow), hears only what it
asked for (a resource's update only where it named its URI), each message tagged with its
id, and nothing once closed."""

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
    hub.publish(m.RESOURCE_UPDATED, {"uri": "test://x"})  # a hub without follows honours none
    hub.publish(m.TOOLS_CHANGED)
    assert heard[1:] == [{"jsonrpc": "2.0", "method": m.TOOLS_CHANGED,
                          "params": {"_meta": {SUBSCRIPTION_ID_KEY: 7}}}]
    assert hub.listening == 1 and hub.declares("tools") and not hub.declares("resources")
    hub.close(number)
    hub.publish(m.TOOLS_CHANGED)
    assert len(heard) == 2 and hub.listening == 0


def test_resource_subscriptions_are_honoured_for_the_uris_the_hub_follows() -> None:
    followed: list[list[str]] = []
    hub = ListenHub({"toolsListChanged": True}, follows=lambda uri: uri.startswith("test://"),
                    follow=followed.append)
    first: list[dict[str, Any]] = []
    second: list[dict[str, Any]] = []
    hub.open(_listen(1, {"resourceSubscriptions": ["test://a", "other://b", "test://a"]}), first.append)
    hub.open(_listen(2, {"resourceSubscriptions": ["test://c"], "toolsListChanged": True}), second.append)
    assert first[0]["params"]["notifications"] == {"resourceSubscriptions": ["test://a"]}  # once, followable
    assert second[0]["params"]["notifications"] == {"toolsListChanged": True, "resourceSubscriptions": ["test://c"]}
    assert followed == [["test://a"], ["test://c"]]
    for uri in ("test://c", "test://a", "other://b"):
        hub.publish(m.RESOURCE_UPDATED, {"uri": uri})
    assert [n["params"]["uri"] for n in first[1:]] == ["test://a"]
    assert [n["params"]["uri"] for n in second[1:]] == ["test://c"]
    assert second[1]["params"]["_meta"] == {SUBSCRIPTION_ID_KEY: 2}
    assert hub.follows_resources and not ListenHub({}).follows_resources
