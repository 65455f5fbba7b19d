"""A 2025 host is told the updates of the resources it subscribed to, and of no other.

Hosts (the SDK's client, 2025-11-25, over stdio and Streamable HTTP) subscribe to resources
of an upstream server whose ``touch`` tool says a resource changed, whether anybody
subscribed to it or not (``touch_server.py``). Each host hears the updates of what it
subscribed to only; ``resources/unsubscribe`` ends that; the proxy subscribes upstream
once per resource while any host follows it and unsubscribes there when the last leaves.
The transcript verifies (``updates_subscribed``); a copy in which a host was told an
update it never subscribed to is rejected.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import anyio
import mcp_types as t

from .proxy_helpers import (
    HERE,
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

TOUCH = HERE / "touch_server.py"
WATCHED: Final = "toolrelay://a/test://watched-resource"
STATIC: Final = "toolrelay://a/test://static-text"
BINARY: Final = "toolrelay://a/test://static-binary"


class Host(UpdateHost):
    """One SDK client of the proxy, and the resource updates it was told, in order."""

    async def touch(self, uri: str) -> str:
        """Have the upstream say ``uri`` changed; how many URIs it has subscribers for."""
        own = uri.removeprefix("toolrelay://a/")  # a tool's arguments are the server's own
        result = await self.client.call_tool("a__touch", {"uri": own})
        block = result.content[0]
        return block.text if isinstance(block, t.TextContent) else ""

    async def heard(self, uri: str) -> None:
        """Take the updates told since, up to the next one of ``uri`` (all kept in ``told``)."""
        with anyio.fail_after(15):
            while (await self.next_update()) != uri:
                pass


def _host(server: Any) -> contextlib.AbstractAsyncContextManager[Host]:
    return update_host(server, Host)


async def _one_host(server: Any) -> tuple[list[str], list[str]]:
    async with _host(server) as host:
        await host.subscribe(WATCHED)  # the server tells of it at once
        await host.heard(WATCHED)
        touched = [await host.touch(STATIC), await host.touch(WATCHED)]  # not subscribed; subscribed
        await host.heard(WATCHED)
        await host.unsubscribe(WATCHED)  # the last (only) host: unsubscribed upstream
        touched.append(await host.touch(WATCHED))
        await host.subscribe(BINARY)  # its update says all before it has been told
        await host.heard(BINARY)
    return host.told, touched


def test_a_stdio_host_is_told_of_what_it_subscribed_to_only(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"a": script_entry(TOUCH)})
    transcript = tmp_path / "proxy.jsonl"
    told, touched = anyio.run(_one_host, stdio_proxy(config, transcript, "--protocol-version", "2025-11-25"))
    assert told == [WATCHED, WATCHED, BINARY]  # not the static text's, nor the watched one's once left
    assert touched == ["touched 1", "touched 1", "touched 0"]  # upstream: unsubscribed when it left
    recorded = events(transcript)
    assert _upstream(recorded, "resources/subscribe") == ["test://watched-resource", "test://static-binary"]
    assert _upstream(recorded, "resources/unsubscribe") == ["test://watched-resource"]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "the stdio host: told 3 resource update(s), each of a resource it subscribed to" in checked.stdout
    broken_as(verify_tampered(transcript, _told_after_leaving, tmp_path),
              f"the stdio host: told resources/updated of {WATCHED}, which it had not subscribed to")


def _upstream(recorded: list[dict[str, Any]], method: str) -> list[str]:
    return [e["message"]["params"]["uri"] for e in recorded
            if e["kind"] == "mcp_request" and e["message"].get("method") == method]


def _told_after_leaving(lines: list[dict[str, Any]]) -> None:
    """As if the host had been told the watched resource's update after it unsubscribed."""
    update = next(line for line in lines if line["kind"] == "proxy_wire"
                  and line["message"].get("method") == UPDATED and line["message"]["params"]["uri"] == BINARY)
    update["message"]["params"]["uri"] = WATCHED


async def _two_hosts(url: str) -> tuple[list[str], list[str], list[str]]:
    async with _host(url) as second:
        first = await _first_host(url, second)
        touched = first.touched
        # the first host left (its session ended): its subscription goes at the next update
        touched.append(await second.touch(BINARY))  # told to nobody; the proxy lets it go upstream
        touched.append(await second.touch(STATIC))
        await second.heard(STATIC)
    return first.told, second.told, touched


@dataclass
class Left:
    """What a host that has left was told, and what its touches answered."""

    told: list[str]
    touched: list[str]


async def _first_host(url: str, second: Host) -> Left:
    async with _host(url) as first:
        await first.subscribe(WATCHED)  # subscribed upstream; the server tells of it at once
        await first.heard(WATCHED)
        await second.subscribe(WATCHED)  # shared: nothing sent upstream, nothing told
        await second.subscribe(STATIC)
        await second.heard(STATIC)
        touched = [await first.touch(WATCHED), await first.touch(STATIC)]  # both; the second host only
        await second.heard(STATIC)
        await first.unsubscribe(WATCHED)  # the second host still follows it: still subscribed upstream
        touched.append(await first.touch(WATCHED))
        await second.heard(WATCHED)
        await second.unsubscribe(WATCHED)  # the last to leave: unsubscribed upstream
        touched.append(await first.touch(WATCHED))  # told to nobody
        await first.subscribe(BINARY)  # its update, to the first host, says all before it has been told
        await first.heard(BINARY)
        await first.touch(STATIC)
        await second.heard(STATIC)
    return Left(first.told, touched)


def test_two_http_hosts_are_told_each_of_its_own_subscriptions(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"a": script_entry(TOUCH)})
    transcript = tmp_path / "proxy.jsonl"
    with http_proxy(config, transcript, "--protocol-version", "2025-11-25") as url:
        first, second, touched = anyio.run(_two_hosts, url)
    assert first == [WATCHED, WATCHED, BINARY]
    assert second == [STATIC, WATCHED, STATIC, WATCHED, STATIC, STATIC]
    assert touched == ["touched 2", "touched 2", "touched 2", "touched 1", "touched 2", "touched 1"]
    recorded = events(transcript)
    assert _upstream(recorded, "resources/subscribe") == [
        "test://watched-resource", "test://static-text", "test://static-binary"]  # once each
    assert _upstream(recorded, "resources/unsubscribe") == [  # the last host following each left
        "test://watched-resource", "test://static-binary"]
    shared = [e for e in recorded if e["kind"] == "proxy_route" and e["decision"] == "shared"]
    assert [(e["alias"], e["reason"]) for e in shared] == [
        (WATCHED, "followed already, for another host"), (WATCHED, "another host still follows it")]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "HTTP host 2: told 3 resource update(s), each of a resource it subscribed to" in checked.stdout
    assert "HTTP host 1: told 6 resource update(s), each of a resource it subscribed to" in checked.stdout
    tampered = verify_tampered(transcript, _static_to_the_first, tmp_path)
    assert tampered.returncode == 1, tampered.stdout
    said = f"HTTP host 2: told resources/updated of {STATIC}, which it had not subscribed to"
    assert said in tampered.stdout


def _static_to_the_first(lines: list[dict[str, Any]]) -> None:
    """As if the first host (HTTP host 2: the second opened first) had been sent the static
    text's update, which only the second asked for."""
    update = next(line for line in lines if line["kind"] == "proxy_wire" and line.get("host") == 1
                  and line["message"].get("method") == UPDATED and line["message"]["params"]["uri"] == STATIC)
    update["host"] = 2
