"""``UnknownTool`` is the JSON-RPC error -32602 whether a service raises it at once or from
inside its coroutine (it is an ``RpcError`` of the one tree)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from toolrelay.server.app import CallContext, ServerSession, UnknownTool


class _Service:
    name = "unknown-tool-test"
    version = "1"
    instructions = None

    def __init__(self, raise_later: bool) -> None:
        self.raise_later = raise_later

    def tools(self) -> list[dict[str, Any]]:
        return []

    def call(self, name: str, arguments: dict[str, Any], context: CallContext) -> Any:
        if not self.raise_later:
            raise UnknownTool(name)

        async def later() -> dict[str, Any]:
            await asyncio.sleep(0)
            raise UnknownTool(name)

        return later()


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode()


@pytest.mark.parametrize("raise_later", [False, True], ids=["at once", "from its coroutine"])
def test_unknown_tool_is_answered_with_invalid_params(raise_later: bool) -> None:
    async def scenario() -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []
        answered = asyncio.Event()

        def send(message: dict[str, Any]) -> None:
            sent.append(message)
            if message.get("id") == 2:
                answered.set()

        session = ServerSession(_Service(raise_later), send)
        client = {"name": "t", "version": "1"}
        initialize = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
        session.receive_line(_line({"id": 1, "method": "initialize", "params": initialize}))
        call = {"name": "nope", "arguments": {}}
        session.receive_line(_line({"id": 2, "method": "tools/call", "params": call}))
        await asyncio.wait_for(answered.wait(), 10)
        return sent

    answer = asyncio.run(scenario())[-1]
    assert answer == {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "Unknown tool: nope"}}
