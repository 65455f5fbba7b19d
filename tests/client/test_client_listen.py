"""toolrelay's client listens (``subscriptions/listen``) to a 2026-07-28 server declaring
list changes, here the official SDK's: over HTTP the listen POST's stream brings the
tool-list change (the catalog's hook is told) and the update of a followed resource, and
closing the connection cancels it; over stdio a restarted server is listened to again; a
refused listen request and an acknowledgement leaving out a followed URI are warnings."""

from __future__ import annotations

import subprocess
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from client_helpers import (
    PYTHON,
    Recorder,
    async_wait_until,
    free_port,
    open_connection,
    run,
    spawned,
    stdio_config,
    wait_port,
)

from testkit.servers import SERVERS
from toolrelay.client.config import ServerConfig
from toolrelay.errors import ServerExited
from toolrelay.events import McpMessage

LISTEN_SERVER = SERVERS / "sdk_listen_server.py"


@pytest.fixture(scope="module")
def listen_url() -> Iterator[str]:
    port = free_port()
    with spawned([PYTHON, str(LISTEN_SERVER), "http", str(port)],
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as process:
        wait_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"


def messages(recorder: Recorder, method: str) -> list[McpMessage]:
    return [e for e in recorder.seen if isinstance(e, McpMessage) and e.method == method]


def test_over_http_the_listen_stream_brings_changes_and_closing_cancels_it(listen_url: str,
                                                                            tmp_path: Path) -> None:
    recorder, changed = Recorder(), []
    config = ServerConfig(name="h", transport="http", url=listen_url)

    async def scenario() -> None:
        async with open_connection(config, tmp_path, recorder, protocol_version="2026-07-28") as connection:
            connection.on_tools_changed = changed.append
            assert await async_wait_until(lambda: connection._link is not None
                                          and connection._link.listener.acknowledged.is_set())
            (await connection.call_tool("grow", {})).raise_for_error()
            assert await async_wait_until(lambda: changed == ["h"])
            await connection.watch_resource("note://daily")
            (await connection.call_tool("touch", {})).raise_for_error()
            told = "server h: resource note://daily was updated"
            assert await async_wait_until(lambda: told in recorder.notices())

    run(scenario())
    listens = messages(recorder, "subscriptions/listen")
    assert [m.message["params"]["notifications"] for m in listens] == [
        {"toolsListChanged": True, "resourcesListChanged": True},
        {"toolsListChanged": True, "resourcesListChanged": True, "resourceSubscriptions": ["note://daily"]},
    ]
    acks = messages(recorder, "notifications/subscriptions/acknowledged")
    assert [a.message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] for a in acks] == \
        [m.mcp_id for m in listens]
    cancelled = [m.message["params"]["requestId"] for m in messages(recorder, "notifications/cancelled")]
    assert cancelled == [m.mcp_id for m in listens]
    assert not [n for n in recorder.notices() if "failed" in n]  # the cancellations were accepted (202)


def test_a_restarted_server_is_listened_to_again(tmp_path: Path) -> None:
    recorder = Recorder()
    config = stdio_config("sdk_listen_server.py", "stdio", name="s")

    async def scenario() -> None:
        def acknowledged() -> int:
            return len(messages(recorder, "notifications/subscriptions/acknowledged"))

        async with open_connection(config, tmp_path, recorder, protocol_version="2026-07-28") as connection:
            assert await async_wait_until(lambda: acknowledged() == 1)
            with pytest.raises(ServerExited):
                await connection.call_tool("crash", {})
            (await connection.call_tool("grow", {})).raise_for_error()  # restarts it
            assert connection.number == 2
            assert await async_wait_until(lambda: acknowledged() == 2)

    run(scenario())
    assert [m.connection for m in messages(recorder, "subscriptions/listen")] == [1, 2]


def test_a_server_that_declares_no_list_changes_is_not_listened_to(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    recorder = Recorder()
    config = ServerConfig(name="fs", transport="stdio", command=PYTHON,
                          args=("-m", "toolrelay", "files", str(root)))

    async def scenario() -> None:
        async with open_connection(config, tmp_path, recorder, protocol_version="2026-07-28") as connection:
            await connection.list_tools()

    run(scenario())
    assert not messages(recorder, "subscriptions/listen")


QUIRKY = textwrap.dedent('''
    import json, sys
    listens = 0
    def send(message):
        print(json.dumps({"jsonrpc": "2.0", **message}), flush=True)
    for line in sys.stdin:
        msg = json.loads(line)
        method = msg.get("method")
        if method == "server/discover":
            send({"id": msg["id"], "result": {"supportedVersions": ["2026-07-28"], "resultType": "complete",
                  "capabilities": {"tools": {"listChanged": True}, "resources": {"subscribe": True}}}})
        elif method == "subscriptions/listen":
            listens += 1
            if listens != 2:  # the second is acknowledged without its URIs; the others are refused
                send({"id": msg["id"], "error": {"code": -32603, "message": "no listening today"}})
            else:
                meta = {"io.modelcontextprotocol/subscriptionId": msg["id"]}
                send({"method": "notifications/subscriptions/acknowledged",
                      "params": {"_meta": meta, "notifications": {"toolsListChanged": True}}})
''')


def test_a_refused_listen_and_a_uri_left_out_are_warnings(tmp_path: Path) -> None:
    script = tmp_path / "quirky.py"
    script.write_text(QUIRKY, encoding="utf-8")
    recorder = Recorder()
    config = ServerConfig(name="q", transport="stdio", command=PYTHON, args=(str(script),),
                          request_timeout=20)
    refused = ("server q: subscriptions/listen refused: no listening today; changes to its tools and "
               "resources are no longer heard on this connection")
    left_out = ("server q will not tell updates of note://x: its subscriptions/listen acknowledgement leaves "
                "it out")

    async def scenario() -> None:
        async with open_connection(config, tmp_path, recorder, protocol_version="2026-07-28") as connection:
            assert await async_wait_until(lambda: refused in recorder.notices())
            await connection.watch_resource("note://x")  # returns once acknowledged
            assert left_out in recorder.notices()
            started = time.monotonic()
            await connection.watch_resource("note://y")  # returns once refused, not after request_timeout
            assert time.monotonic() - started < 10

    run(scenario())
    assert [n for n in recorder.notices() if "subscriptions/listen" in n] == [refused, left_out, refused]
