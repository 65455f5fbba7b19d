"""The Streamable HTTP client over real loopback HTTP: the SDK's server and a stub (testkit.mcp_http_stub)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from client_helpers import (
    Recorder,
    async_wait_until,
    elapsed,
    free_port,
    run,
    sdk_http_server,
)
from client_helpers import open_connection as pinned_open_connection

from testkit.mcp_http_stub import StubBehaviour, StubServer
from toolrelay.client.config import ServerConfig
from toolrelay.client.connection import Connection
from toolrelay.errors import HttpStatusError, MessageTooLarge, RequestTimeout, TransportError


def http_config(url: str, **fields: object) -> ServerConfig:
    return ServerConfig(name="h", transport="http", url=url, **fields)  # type: ignore[arg-type]


def open_connection(config: ServerConfig, log_dir: Path, recorder: Recorder | None = None,
                    **kw: Any) -> AbstractAsyncContextManager[Connection]:
    """Pinned to 2025-11-25: these tests are about its sessions (the probe: test_client_era.py)."""
    return pinned_open_connection(config, log_dir, recorder, protocol_version="2025-11-25", **kw)


# -- against the official SDK server --------------------------------------------------------


@pytest.fixture(scope="module")
def sdk_sse_url() -> Iterator[str]:
    with sdk_http_server("http") as url:
        yield url


@pytest.fixture(scope="module")
def sdk_json_url() -> Iterator[str]:
    with sdk_http_server("http-json") as url:
        yield url


@pytest.mark.parametrize("which", ["sdk_sse_url", "sdk_json_url"])
def test_sdk_server_over_http(tmp_path: Path, which: str, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue(which)
    recorder = Recorder()
    changed: list[str] = []

    async def scenario() -> list[str]:
        async with open_connection(http_config(url, roots=(str(tmp_path),)), tmp_path, recorder) as conn:
            conn.on_tools_changed = changed.append
            assert conn.protocol_version == "2025-11-25"
            assert conn.server_info["name"] == "sdk-test"
            names = [tool["name"] for tool in await conn.list_tools()]
            texts = []
            for tool, arguments in (("echo", {"text": "over http"}), ("chatty", {"text": "hi"}),
                                    ("ping_client", {}), ("ask_roots", {})):
                exchange = await conn.call_tool(tool, arguments, call_id=f"call_{tool}")
                texts.append(exchange.raise_for_error()["content"][0]["text"])
            assert (await conn.call_tool("add", {"a": 2, "b": 3})).raise_for_error()["structuredContent"] == {
                "result": 5}
            await asyncio.gather(conn.call_tool("slow", {"seconds": 0.3}, call_id="call_slow"),
                                 conn.call_tool("chatty", {"text": "beside"}, call_id="call_beside"))
            return [*names, *texts]

    outcome = run(scenario())
    assert outcome[:6] == ["echo", "add", "slow", "chatty", "ping_client", "ask_roots"]
    assert outcome[6:8] == ["over http", "hi"]
    assert outcome[8] == "client answered ping"
    assert outcome[9] == "roots answered"  # toolrelay offers the roots named
    assert changed == ["h", "h"]  # one per chatty call
    replies = [e.message for e in recorder.of("mcp_reply")]
    assert any(reply.get("result") == {} for reply in replies)  # the answer to the server's ping
    call_ids = {e.call_id for e in recorder.of("mcp_response") if e.method == "tools/call"}
    assert {"call_echo", "call_chatty", "call_ping_client", "call_ask_roots"} <= call_ids
    logged = [e for e in recorder.of("mcp_notification") if e.method == "notifications/message"]
    if which == "sdk_sse_url":  # a log message comes on its call's POST stream: recorded with that call,
        assert [(e.call_id, e.message["params"]["data"]) for e in logged] == [  # also beside another one
            ("call_chatty", "about to echo hi"), ("call_beside", "about to echo beside")]


def test_sdk_session_loss_reinitializes_once_and_resends(tmp_path: Path, sdk_sse_url: str) -> None:
    recorder = Recorder()

    async def scenario() -> tuple[str, int, int]:
        async with open_connection(http_config(sdk_sse_url), tmp_path, recorder) as conn:
            old_session = conn._link.transport.session_id  # type: ignore[union-attr]
            assert old_session
            async with httpx2.AsyncClient() as client:  # the server forgets the session
                deleted = await client.delete(sdk_sse_url, headers={"mcp-session-id": old_session})
                assert deleted.status_code == 200
            exchange = await conn.call_tool("echo", {"text": "after loss"})
            new_session = conn._link.transport.session_id  # type: ignore[union-attr]
            assert new_session and new_session != old_session
            return exchange.raise_for_error()["content"][0]["text"], conn.number, exchange.mcp_id  # type: ignore[return-value]

    text, number, mcp_id = run(scenario())
    assert (text, number) == ("after loss", 2)
    assert "server h: the HTTP session expired (404); re-initialized (connection 2)" in recorder.notices()
    calls = [e for e in recorder.of("mcp_request") if e.method == "tools/call"]
    assert [c.mcp_id for c in calls] == [mcp_id]  # one request (POSTed again after the 404, unchanged)
    assert [e.connection for e in recorder.of("server_ready")] == [1, 2]


def test_close_deletes_the_session(tmp_path: Path, sdk_sse_url: str) -> None:
    async def scenario() -> int:
        async with open_connection(http_config(sdk_sse_url), tmp_path) as conn:
            session = conn._link.transport.session_id  # type: ignore[union-attr]
            assert session
        async with httpx2.AsyncClient() as client:
            headers = {"mcp-session-id": session, "accept": "application/json, text/event-stream",
                       "mcp-protocol-version": "2025-11-25"}
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            probe = await client.post(sdk_sse_url, json=ping, headers=headers)
            return probe.status_code

    assert run(scenario()) == 404


# -- against the stub ---------------------------------------------------------------------


def test_headers_session_and_protocol_version_are_sent(tmp_path: Path) -> None:
    with StubServer(StubBehaviour(token="s3cret-token")) as stub:
        config = http_config(stub.url, headers={"Authorization": "Bearer s3cret-token", "X-Team": "blue"})

        async def scenario() -> None:
            async with open_connection(config, tmp_path) as conn:
                await conn.list_tools()
                await conn.call_tool("echo", {"text": "x"})

        run(scenario())
        received = stub.behaviour.received
    initialize, *rest = [r for r in received if r.verb == "POST"]
    assert initialize.body["method"] == "initialize"
    assert "mcp-session-id" not in initialize.headers and "mcp-protocol-version" not in initialize.headers
    for posted in [initialize, *rest]:
        assert posted.headers["authorization"] == "Bearer s3cret-token"
        assert posted.headers["x-team"] == "blue"
        assert posted.headers["accept"] == "application/json, text/event-stream"
        assert posted.headers["content-type"] == "application/json"
    assert [r.body.get("method") for r in rest] == ["notifications/initialized", "tools/list", "tools/call"]
    assert all(r.headers["mcp-session-id"] == "session-1" for r in rest)
    assert all(r.headers["mcp-protocol-version"] == "2025-11-25" for r in rest)
    deletes = [r for r in received if r.verb == "DELETE"]
    assert [d.headers["mcp-session-id"] for d in deletes] == ["session-1"]


def test_wrong_token_is_an_http_status_error_without_the_token(tmp_path: Path) -> None:
    with StubServer(StubBehaviour(token="right-token")) as stub:
        config = http_config(stub.url, headers={"Authorization": "Bearer wrong-token"})

        async def scenario() -> HttpStatusError:
            async with open_connection(config, tmp_path, start=False) as conn:
                with pytest.raises(HttpStatusError) as caught:
                    await conn.start()
                return caught.value

        error = run(scenario())
    assert error.status == 401
    assert str(error) == ("server h answered HTTP 401 Unauthorized to initialize request 1: The access token "
                          "is invalid (check the server's headers or token in the config)")
    assert "wrong-token" not in str(error)


def test_error_status_on_a_call_carries_the_body_message(tmp_path: Path) -> None:
    body = '{"jsonrpc": "2.0", "id": null, "error": {"code": -32603, "message": "database down"}}'
    with StubServer(StubBehaviour(call_status=(500, body))) as stub:

        async def scenario() -> tuple[HttpStatusError, str]:
            async with open_connection(http_config(stub.url), tmp_path) as conn:
                with pytest.raises(HttpStatusError) as caught:
                    await conn.call_tool("fail", {})
                after = (await conn.call_tool("echo", {"text": "fine"})).raise_for_error()
                return caught.value, after["content"][0]["text"]

        error, after = run(scenario())
    assert error.status == 500
    assert str(error) == ("server h answered HTTP 500 Internal Server Error to tools/call request 2: "
                          "database down")
    assert after == "fine"


def test_expired_session_is_renewed_and_the_request_sent_again(tmp_path: Path) -> None:
    recorder = Recorder()
    with StubServer(StubBehaviour()) as stub:

        async def scenario() -> str:
            async with open_connection(http_config(stub.url), tmp_path, recorder) as conn:
                stub.behaviour.expire_next = 1
                exchange = await conn.call_tool("echo", {"text": "again"})
                return exchange.raise_for_error()["content"][0]["text"]

        assert run(scenario()) == "again"
        posts = stub.posts()
    methods = [(p.body.get("method"), p.headers.get("mcp-session-id")) for p in posts]
    assert methods == [
        ("initialize", None), ("notifications/initialized", "session-1"),
        ("tools/call", "session-1"),  # → 404: never processed
        ("initialize", None), ("notifications/initialized", "session-2"),
        ("tools/call", "session-2"),
    ]
    first_call, second_call = (p.body for p in posts if p.body.get("method") == "tools/call")
    assert first_call == second_call  # the same request, same id, sent once more
    assert "server h: the HTTP session expired (404); re-initialized (connection 2)" in recorder.notices()


def test_session_lost_twice_is_an_error(tmp_path: Path) -> None:
    with StubServer(StubBehaviour()) as stub:

        async def scenario() -> HttpStatusError:
            async with open_connection(http_config(stub.url), tmp_path) as conn:
                stub.behaviour.expire_next = 2
                with pytest.raises(HttpStatusError) as caught:
                    await conn.call_tool("echo", {"text": "x"})
                return caught.value

        error = run(scenario())
    assert error.status == 404
    assert str(error) == ("tools/call request 2 got HTTP 404 again after a fresh initialize: "
                          "the server keeps losing the session")


def test_server_request_inside_sse_reply_is_answered(tmp_path: Path) -> None:
    with StubServer(StubBehaviour(sse_ping_first=True)) as stub:

        async def scenario() -> str:
            async with open_connection(http_config(stub.url), tmp_path) as conn:
                exchange = await conn.call_tool("echo", {"text": "streamed"})
                return exchange.raise_for_error()["content"][0]["text"]

        text = run(scenario())
    assert text == 'streamed (ping answered: {"jsonrpc": "2.0", "id": "ping-1", "result": {}})'


def test_bad_sse_data_is_reported_as_what_the_http_server_sent(tmp_path: Path) -> None:
    recorder = Recorder()
    with StubServer(StubBehaviour(sse_garbage_first=b"<html>oops</html>")) as stub:

        async def scenario() -> str:
            async with open_connection(http_config(stub.url), tmp_path, recorder) as conn:
                exchange = await conn.call_tool("echo", {"text": "still answered"})
                return exchange.raise_for_error()["content"][0]["text"]

        assert run(scenario()) == "still answered"
    assert [n for n in recorder.notices() if "not JSON-RPC" in n] == [
        "server h sent something that is not JSON-RPC in an HTTP response (skipped): '<html>oops</html>'"
    ]
    assert not any("stdout" in notice for notice in recorder.notices())


HUGE_ANSWER_BYTES = len(b'{"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "'
                        + b"y" * 300_000 + b'"}]}}')


@pytest.mark.parametrize(
    ("as_sse", "said"),
    [
        (False, f"response to tools/call request 2 is {HUGE_ANSWER_BYTES:,} bytes, above the 256 KiB limit"),
        (True, "response to tools/call request 2 exceeds the 256 KiB limit"),
    ],
    ids=["json-body", "sse-event"],
)
def test_an_oversized_answer_fails_only_that_call(tmp_path: Path, as_sse: bool, said: str) -> None:
    with StubServer(StubBehaviour(huge_bytes=300_000, huge_as_sse=as_sse)) as stub:
        config = http_config(stub.url, max_message_bytes=256 * 1024)

        async def scenario() -> tuple[MessageTooLarge, str]:
            async with open_connection(config, tmp_path) as conn:
                with pytest.raises(MessageTooLarge) as caught:
                    await conn.call_tool("huge", {})
                after = (await conn.call_tool("echo", {"text": "ok"})).raise_for_error()
                return caught.value, after["content"][0]["text"]

        error, after = run(scenario())
    assert str(error) == said
    assert after == "ok"


def test_http_timeout_sends_cancelled(tmp_path: Path) -> None:
    with StubServer(StubBehaviour()) as stub:
        config = http_config(stub.url, call_timeout=0.3)

        async def scenario() -> tuple[float, object]:
            async with open_connection(config, tmp_path) as conn:
                result = await elapsed(conn.call_tool("hang", {}))
                await conn.ping()
                return result

        took, outcome = run(scenario())
        cancelled = [p.body for p in stub.posts() if p.body.get("method") == "notifications/cancelled"]
    assert isinstance(outcome, RequestTimeout)
    assert took < 1.5
    assert [c["params"]["requestId"] for c in cancelled] == [2]


def test_a_cancellation_sent_just_before_closing_still_reaches_the_server(tmp_path: Path) -> None:
    with StubServer(StubBehaviour()) as stub:

        async def scenario() -> None:
            async with open_connection(http_config(stub.url), tmp_path) as conn:
                hanging = asyncio.ensure_future(conn.call_tool("hang", {}))
                await async_wait_until(lambda: any(p.body.get("id") == 2 for p in stub.posts()))
                hanging.cancel()  # sends notifications/cancelled; the connection closes at once
                await asyncio.gather(hanging, return_exceptions=True)

        run(scenario())
        cancelled = [p.body for p in stub.posts() if p.body.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancelled] == [2]


def test_connection_refused_names_the_url(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"

    async def scenario() -> str:
        async with open_connection(http_config(url), tmp_path, start=False) as conn:
            with pytest.raises(TransportError) as caught:
                await conn.start()
            return str(caught.value)

    assert run(scenario()) == f"cannot connect to server h at {url}: connection refused"


def test_concurrent_http_calls(tmp_path: Path) -> None:
    with StubServer(StubBehaviour()) as stub:

        async def scenario() -> list[str]:
            async with open_connection(http_config(stub.url), tmp_path) as conn:
                calls = (conn.call_tool("echo", {"text": str(i)}) for i in range(20))
                exchanges = await asyncio.gather(*calls)
                return [e.raise_for_error()["content"][0]["text"] for e in exchanges]

        assert run(scenario()) == [str(i) for i in range(20)]
