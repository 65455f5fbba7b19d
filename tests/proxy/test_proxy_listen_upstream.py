"""The proxy in front of a 2026-07-28 upstream, which tells resource updates only on its
``subscriptions/listen`` stream (the official SDK's MCPServer, ``sdk_listen_server.py``).

A 2025-11-25 host (the SDK's client over stdio) subscribes to the proxy's URI of
``note://daily``: the proxy sends no ``resources/subscribe`` upstream but names the URI on
its listen request (route ``listened``), and the upstream's update reaches the host with
the proxy's URI. A 2026-07-28 host listening for that URI hears it too. When the upstream
crashes and is restarted by the next call, the proxy listens again, and the subscription
still delivers. The transcript verifies; a copy in which the update's URI was changed, in
which it went to a host that had not subscribed, in which no listen request named the URI
before the host was answered, or in which the restarted server's did not, is rejected.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Final

import anyio
import mcp_types as t
from mcp.client import Client

from testkit.servers import SERVERS
from toolrelay.protocol.listen import NO_UPDATES

from .proxy_helpers import (
    broken_as,
    events,
    http_proxy,
    script_entry,
    stdio_proxy,
    verify,
    verify_tampered,
    write_config,
)
from .update_hosts import UPDATED, UpdateHost, update_host

LISTEN_SERVER = SERVERS / "sdk_listen_server.py"
DAILY: Final = "toolrelay://a/note://daily"


def _config(folder: Path) -> Path:
    return write_config(folder, {"a": script_entry(LISTEN_SERVER, "stdio")})


class Host(UpdateHost):
    """One 2025-11-25 SDK client of the proxy, and the resource updates it was told."""

    async def call(self, tool: str) -> str:
        result = await self.client.call_tool(f"a__{tool}", {})
        block = result.content[0] if result.content else None
        return block.text if isinstance(block, t.TextContent) else ""

    async def heard(self) -> str:
        """The next update told (kept in ``told``)."""
        with anyio.fail_after(30):
            return await self.next_update()


def _host(server: Any) -> contextlib.AbstractAsyncContextManager[Host]:
    return update_host(server, Host)


async def _subscribe_touch_crash_touch(server: Any) -> tuple[list[str], list[str]]:
    async with _host(server) as host:
        await host.subscribe(DAILY)
        answers = [await host.call("touch")]
        await host.heard()
        answers.append(await host.call("crash"))  # the upstream's process ends: an error answer
        answers.append(await host.call("touch"))  # restarted by this call; the proxy listens again
        await host.heard()
    return host.told, answers


def test_a_2025_host_is_told_the_updates_a_2026_upstream_tells_on_its_listen_stream(tmp_path: Path) -> None:
    transcript = tmp_path / "proxy.jsonl"
    told, answers = anyio.run(_subscribe_touch_crash_touch, stdio_proxy(_config(tmp_path), transcript))
    assert told == [DAILY, DAILY]  # the proxy's URI, before the crash and after the restart
    assert answers[0] == answers[2] == "touched"
    recorded = events(transcript)
    upstream = [e["message"] for e in recorded if e["kind"] == "mcp_request"]
    assert not [m for m in upstream if m.get("method") == "resources/subscribe"]
    listens = [m["params"]["notifications"].get("resourceSubscriptions") for m in upstream
               if m.get("method") == "subscriptions/listen"]
    assert listens[-2:] == [["note://daily"], ["note://daily"]]  # named before the crash, and after
    routes = [(e["decision"], e["alias"]) for e in recorded if e["kind"] == "proxy_route"
              and e.get("alias") == DAILY]
    assert routes == [("listened", DAILY)]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "followed on the upstream's listen request (server a connection 1 id " in checked.stdout
    assert "names note://daily), " \
           "answered {}" in checked.stdout
    assert "the stdio host: told 2 resource update(s), each of a resource it subscribed to" in checked.stdout
    assert "server a: 3 subscriptions/listen request(s) over 2 connection(s), each naming every URI named " \
           "before it (note://daily)" in checked.stdout
    broken_as(verify_tampered(transcript, _forgotten_on_restart, tmp_path),
              "server a connection 2: subscriptions/listen id 3 leaves out note://daily, which an earlier "
              "one named (no longer followed upstream)")
    broken_as(verify_tampered(transcript, _update_renamed, tmp_path),
              "the stdio host: told resources/updated of toolrelay://a/note://weekly, which it had not "
              "subscribed to")
    broken_as(verify_tampered(transcript, _upstream_update_dropped, tmp_path),
              "the stdio host: told resources/updated of toolrelay://a/note://daily with no update of it "
              "from its server before")
    broken_as(verify_tampered(transcript, _said_unfollowable, tmp_path),  # yet its server declares subscribe
              "a listened subscription, yet no listen request to server a named note://daily")
    broken_as(verify_tampered(transcript, _listens_unnamed, tmp_path),
              "a listened subscription, yet no listen request to server a named note://daily before the host "
              "was answered")


def _forgotten_on_restart(lines: list[dict[str, Any]]) -> None:
    """As if the restarted server had been listened to without the URI the host follows."""
    listen = next(line for line in lines if line["kind"] == "mcp_request" and line.get("connection") == 2
                  and line["message"].get("method") == "subscriptions/listen")
    listen["message"]["params"]["notifications"].pop("resourceSubscriptions")


def _upstream_update_dropped(lines: list[dict[str, Any]]) -> None:
    """As if the proxy had told the host of an update its server never sent (the last one)."""
    told = [line for line in lines if line["kind"] == "mcp_notification" and line.get("method") == UPDATED]
    lines.remove(told[-1])


def _said_unfollowable(lines: list[dict[str, Any]]) -> None:
    """As if the proxy had not listened because the server tells no updates (it does)."""
    _listens_unnamed(lines)
    route = next(line for line in lines if line["kind"] == "proxy_route" and line["decision"] == "listened")
    route["reason"] = NO_UPDATES


def _listens_unnamed(lines: list[dict[str, Any]]) -> None:
    """As if the proxy had answered the subscription without naming the URI upstream."""
    for line in lines:
        message = line.get("message") or {}
        if line["kind"] == "mcp_request" and message.get("method") == "subscriptions/listen":
            message["params"]["notifications"].pop("resourceSubscriptions", None)


def _update_renamed(lines: list[dict[str, Any]]) -> None:
    """As if the host had been told of a resource other than the one updated."""
    update = next(line for line in lines if line["kind"] == "proxy_wire"
                  and line["message"].get("method") == UPDATED)
    update["message"]["params"]["uri"] = "toolrelay://a/note://weekly"


async def _three_hosts(url: str) -> tuple[list[str], list[str], list[Any]]:
    """A 2026-07-28 host listening for the note, a 2025 host subscribed to it and one that is
    not; the subscribed one touches it."""
    async with Client(url, mode="2026-07-28") as modern, \
            modern.listen(resource_subscriptions=[DAILY]) as listening, \
            _host(url) as subscribed, _host(url) as bystander:
        await subscribed.subscribe(DAILY)
        await bystander.call("grow")  # a host that follows nothing: told no update
        assert await subscribed.call("touch") == "touched"
        await subscribed.heard()
        with anyio.fail_after(30):
            heard = await listening.__anext__()
            while type(heard).__name__ != "ResourceUpdated":
                heard = await listening.__anext__()
        honoured = listening.honored.model_dump(exclude_none=True, by_alias=True)
    return subscribed.told, [getattr(heard, "uri", "")], [honoured]


def test_a_2026_host_listening_hears_it_too_and_a_host_that_did_not_subscribe_does_not(
    tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    with http_proxy(_config(tmp_path), transcript) as url:
        subscribed, listened, honoured = anyio.run(_three_hosts, url)
    assert subscribed == [DAILY]
    assert listened == [DAILY]
    assert honoured == [{"resourceSubscriptions": [DAILY]}]
    recorded = events(transcript)
    told = [(e.get("host"), e["message"]["params"]["uri"]) for e in recorded if e["kind"] == "proxy_wire"
            and e["message"].get("method") == UPDATED and "_meta" not in e["message"]["params"]]
    sessions = {e["host"] for e in recorded if e["kind"] == "proxy_wire" and e.get("host")}  # 0: 2026
    assert len(told) == 1 and len(sessions) == 2  # two 2025 hosts' sessions: one told
    assert not [e for e in recorded if e["kind"] == "mcp_request"
                and e["message"].get("method") == "resources/subscribe"]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "told 1 update(s) of them only" in checked.stdout
    (subscriber, _), = told
    (bystander,) = sessions - {subscriber}
    broken_as(verify_tampered(transcript, lambda lines: _moved_to(lines, bystander), tmp_path),
              f"HTTP host {bystander}: told resources/updated of {DAILY}, which it had not subscribed to")


def _moved_to(lines: list[dict[str, Any]], host: int) -> None:
    """As if the 2025 host's update had been sent to the host that never subscribed."""
    update = next(line for line in lines if line["kind"] == "proxy_wire"
                  and line["message"].get("method") == UPDATED and "_meta" not in line["message"]["params"])
    update["host"] = host
