"""``ModernServer`` directly (no transport): a 2026-07-28 tool call asks a roots-declaring
client for its roots only when the service uses them, names an unknown tool before any
round trip, and hands the roots of the retried call to the service."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolrelay.errors import RpcError
from toolrelay.protocol import request_envelope
from toolrelay.protocol.jsonrpc import JSONObject, Request
from toolrelay.server.app import CallContext
from toolrelay.server.stateless import ModernServer

WITH_ROOTS = request_envelope.request_meta("2026-07-28", {"roots": {}}, "t", "0")


class Recording:
    """A one-tool service that notes the context of each call."""

    name, version, instructions = "rec", "1", None

    def __init__(self, uses_roots: bool) -> None:
        self.uses_client_roots = uses_roots
        self.contexts: list[CallContext] = []

    def tools(self) -> list[JSONObject]:
        return [{"name": "look", "inputSchema": {"type": "object"}}]

    def call(self, name: str, arguments: JSONObject, context: CallContext) -> JSONObject:
        self.contexts.append(context)
        return {"content": [{"type": "text", "text": "seen"}]}


def call(server: ModernServer, params: dict[str, Any]) -> JSONObject:
    outcome = server.handle(Request(1, "tools/call", params, {}))
    return outcome if isinstance(outcome, dict) else asyncio.run(_wait(outcome))


async def _wait(outcome: Any) -> JSONObject:
    result: JSONObject = await outcome
    return result


def test_a_service_without_roots_answers_at_once() -> None:
    service = Recording(uses_roots=False)
    result = call(ModernServer(service), {"name": "look", "_meta": WITH_ROOTS})
    assert result["resultType"] == "complete" and service.contexts[0].client_roots is None


def test_a_roots_service_asks_then_uses_the_answer() -> None:
    service = Recording(uses_roots=True)
    server = ModernServer(service)
    asked = call(server, {"name": "look", "_meta": WITH_ROOTS})
    assert asked["resultType"] == "input_required"
    assert asked["inputRequests"] == {"roots": {"method": "roots/list", "params": {}}}
    assert service.contexts == []
    answer = {"roots": {"roots": [{"uri": "file:///srv/a"}, {"name": "no uri"}]}}
    done = call(server, {"name": "look", "_meta": WITH_ROOTS, "inputResponses": answer})
    assert done["resultType"] == "complete"
    assert service.contexts[0].client_roots == ["file:///srv/a"]
    broken = call(server, {"name": "look", "_meta": WITH_ROOTS, "inputResponses": {"roots": {}}})
    assert broken["resultType"] == "complete" and service.contexts[1].roots_error is not None


def test_an_unknown_tool_is_named_before_asking_for_roots() -> None:
    with pytest.raises(RpcError) as caught:
        call(ModernServer(Recording(uses_roots=True)), {"name": "nope", "_meta": WITH_ROOTS})
    assert caught.value.code == -32602 and "nope" in caught.value.rpc_message
