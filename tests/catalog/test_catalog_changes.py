"""The catalog follows a server's tool list for the whole run: every
``notifications/tools/list_changed`` is re-listed before the next turn, not only the first."""

from __future__ import annotations

import asyncio
import sys

import toolrelay
from testkit.servers import GROWING_SERVER as GROWING
from toolrelay.client.config import ServerConfig
from toolrelay.events import CatalogReady, EventStream


def test_every_list_changed_is_followed_not_only_the_first() -> None:
    server = ServerConfig(name="grow", transport="stdio", command=sys.executable, args=(str(GROWING),))
    reasons: list[str] = []
    events = EventStream()
    events.subscribe(lambda e: reasons.append(e.reason) if isinstance(e, CatalogReady) else None)
    answers: list[str] = []
    refreshed: list[bool] = []

    async def main() -> None:
        async with toolrelay.connect([server], events=events) as catalog:
            alias = "grow__grow"
            for _ in range(4):  # each call adds a tool; the next call uses the newest one
                outcome = await catalog.call(alias, "{}")
                assert outcome.status == "ok", outcome.message  # not "unknown tool"
                assert outcome.result is not None
                added = outcome.result["content"][0]["text"]
                answers.append(added)
                refreshed.append(await catalog.refresh_if_changed())
                alias = f"grow__{added}"
            assert [r.alias for r in catalog.routes] == [
                "grow__grow", "grow__tool_1", "grow__tool_2", "grow__tool_3", "grow__tool_4",
            ]
            assert await catalog.refresh_if_changed() is False  # nothing new since the last one

    asyncio.run(main())
    assert answers == ["tool_1", "tool_2", "tool_3", "tool_4"]
    assert refreshed == [True] * 4
    assert reasons == ["initial", *["tools/list_changed from grow"] * 4]
