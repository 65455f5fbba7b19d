"""A 2025-11-25 SDK client of the proxy that keeps the resource updates it is told, for
the subscription tests (``test_proxy_subscriptions.py``, ``test_proxy_listen_upstream.py``)."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import AsyncIterator
from typing import Any, Final, TypeVar

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp.client import Client
from mcp.shared.exceptions import MCPDeprecationWarning

UPDATED: Final = "notifications/resources/updated"


class UpdateHost:
    """One SDK client of the proxy, and the resource updates it was told, in order."""

    def __init__(self, client: Client, updates: MemoryObjectReceiveStream[str]) -> None:
        self.client = client
        self.updates = updates
        self.told: list[str] = []

    async def subscribe(self, uri: str) -> None:
        with warnings.catch_warnings():  # the SDK warns that 2026-07-28 has none; this is 2025-11-25
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await self.client.subscribe_resource(uri)

    async def unsubscribe(self, uri: str) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await self.client.unsubscribe_resource(uri)

    async def next_update(self) -> str:
        """The next update told (kept in ``told``)."""
        self.told.append(await self.updates.receive())
        return self.told[-1]


HostType = TypeVar("HostType", bound=UpdateHost)


@contextlib.asynccontextmanager
async def update_host(server: Any, kind: type[HostType]) -> AsyncIterator[HostType]:
    """A ``kind`` of ``server`` (2025-11-25), hearing the resource updates it is told."""
    send, receive = anyio.create_memory_object_stream[str](100)

    async def on_message(message: Any) -> None:
        note = getattr(message, "root", message)
        if getattr(note, "method", None) == UPDATED:
            await send.send(str(note.params.uri))

    async with send, receive, Client(server, mode="legacy", message_handler=on_message) as client:
        yield kind(client, receive)
