"""The stdio client against real server processes: stdlib servers, well-behaved and hostile."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path

import pytest
from client_helpers import (
    Recorder,
    async_wait_until,
    elapsed,
    open_connection,
    process_running,
    run,
    stdio_config,
)

from toolrelay.client.config import ServerConfig
from toolrelay.errors import (
    MessageTooLarge,
    ProtocolError,
    RequestTimeout,
    ServerExited,
    TransportError,
    UsageError,
    VersionMismatch,
)
from toolrelay.events import McpMessage


def received_lines(record: Path) -> list[dict]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines() if line.strip()]


def test_handshake_list_and_call_are_recorded_with_ids(tmp_path: Path) -> None:
    recorder = Recorder()

    async def scenario() -> None:
        async with open_connection(stdio_config("minimal_echo_server.py"), tmp_path, recorder,
                                   protocol_version="2025-11-25") as conn:  # the handshake alone
            assert (conn.number, conn.protocol_version, conn.alive) == (1, "2025-11-25", True)
            assert conn.server_info == {"name": "minimal-echo", "version": "1"}
            assert [tool["name"] for tool in await conn.list_tools()] == ["echo"]
            exchange = await conn.call_tool("echo", {"text": "héllo"}, call_id="call_A")
            assert exchange.result == {"content": [{"type": "text", "text": "héllo"}]}
            assert exchange.request["params"] == {"name": "echo", "arguments": {"text": "héllo"},
                                                  "_meta": {"progressToken": "call_A-1"}}

    run(scenario())
    messages = [e for e in recorder.seen if isinstance(e, McpMessage)]
    assert [(m.role, m.method) for m in messages] == [
        ("mcp_request", "initialize"), ("mcp_response", "initialize"),
        ("mcp_notification", "notifications/initialized"),
        ("mcp_request", "tools/list"), ("mcp_response", "tools/list"),
        ("mcp_request", "tools/call"), ("mcp_response", "tools/call"),
    ]
    call, answer = messages[-2:]
    assert call.call_id == answer.call_id == "call_A"
    assert call.mcp_id == answer.mcp_id == call.message["id"] == answer.message["id"]
    assert all(m.server == "t" and m.connection == 1 for m in messages)
    assert recorder.kinds()[0] == "server_starting" and recorder.kinds()[-1] == "server_exited"
    exited = recorder.of("server_exited")[0]
    assert (exited.expected, exited.returncode) == (True, 0)


def test_tools_list_follows_next_cursor_and_calls_keep_the_deny_list(tmp_path: Path) -> None:
    """The listing is the server's (the catalog's offer chain withholds denied tools); a
    denied tool is still never called."""
    config = stdio_config("toolbox_server.py", "--page-size", "3", deny=("crash", "h*"))
    recorder = Recorder()

    async def scenario() -> tuple[list[str], Exception]:
        async with open_connection(config, tmp_path, recorder) as conn:
            names = [tool["name"] for tool in await conn.list_tools()]
            try:
                await conn.call_tool("hang", {})
            except UsageError as exc:
                return names, exc
        raise AssertionError("a denied tool was called")

    names, error = run(scenario())
    assert names == ["echo", "crash", "hang", "huge", "env", "pid", "spawn", "sleep", "list_changed",
                     "ask_client", "malformed", "stop_reading"]
    assert str(error) == "tool 'hang' of server t is excluded by its allow/deny list"
    pages = [e.message.get("params") for e in recorder.of("mcp_request") if e.method == "tools/list"]
    assert pages == [None, {"cursor": "3"}, {"cursor": "6"}, {"cursor": "9"}]


def test_server_requests_are_answered_and_list_changed_is_reported(tmp_path: Path) -> None:
    changed: list[str] = []

    async def scenario() -> tuple[dict, dict]:
        async with open_connection(stdio_config("toolbox_server.py"), tmp_path) as conn:
            conn.on_tools_changed = changed.append
            ping = await conn.call_tool("ask_client", {"method": "ping"})
            roots = await conn.call_tool("ask_client", {"method": "roots/list"})
            await conn.call_tool("list_changed", {})
            assert conn.instructions == "Test tools."
            return ping.raise_for_error(), roots.raise_for_error()

    ping, roots = run(scenario())
    assert json.loads(ping["content"][0]["text"]) == {"jsonrpc": "2.0", "id": "srv-1", "result": {}}
    roots_answer = json.loads(roots["content"][0]["text"])  # no roots named: none declared, so -32601
    assert roots_answer["error"] == {"code": -32601,
                                     "message": "Method not found: roots/list (toolrelay does not offer it)"}
    assert changed == ["t"]


def test_garbage_on_stdout_is_skipped_and_reported(tmp_path: Path) -> None:
    recorder = Recorder()
    config = stdio_config("toolbox_server.py", "--garbage")

    async def scenario() -> list[str]:
        async with open_connection(config, tmp_path, recorder) as conn:
            texts = []
            for word in ("one", "two"):
                exchange = await conn.call_tool("echo", {"text": word})
                texts.append(exchange.raise_for_error()["content"][0]["text"])
            return texts

    assert run(scenario()) == ["one", "two"]
    invalid = recorder.of("mcp_invalid")
    assert [event.preview for event in invalid][:2] == [
        "Welcome to the toolbox server v1 (this banner is not JSON)", "debug: about to answer"]
    assert len(invalid) == 5  # banner + one line before each of server/discover, initialize, echo, echo
    garbage_notices = [n for n in recorder.notices() if "not JSON-RPC" in n]
    assert garbage_notices == ["server t printed something that is not JSON-RPC on stdout (skipped): "
                               "'Welcome to the toolbox server v1 (this banner is not JSON)'"]
    log_text = (tmp_path / "t.log").read_text()
    assert "skipped a line on stdout that is not JSON-RPC: 'debug: about to answer'" in log_text


def test_oversized_result_fails_only_its_request(tmp_path: Path) -> None:
    recorder = Recorder()

    async def scenario() -> tuple[Exception, str, int]:
        async with open_connection(stdio_config("toolbox_server.py"), tmp_path, recorder) as conn:
            big = asyncio.ensure_future(conn.call_tool("huge", {"megabytes": 50}))
            await recorder.sent("huge")  # it took id 2
            small = await conn.call_tool("echo", {"text": "meanwhile"})
            with pytest.raises(MessageTooLarge) as caught:
                await big
            after = await conn.call_tool("echo", {"text": "still here"})
            assert small.raise_for_error()["content"][0]["text"] == "meanwhile"
            return caught.value, after.raise_for_error()["content"][0]["text"], conn.number

    error, after, number = run(scenario())
    size = len(json.dumps({"jsonrpc": "2.0", "id": 3, "result": {"content": [
        {"type": "text", "text": "x" * 50 * 1024 * 1024}]}}))
    assert str(error) == f"response to tools/call request 3 is {size:,} bytes, above the 4 MiB limit"
    assert error.mcp_id == 3
    assert (after, number) == ("still here", 1)
    assert recorder.of("mcp_invalid")[0].reason == str(error)
    assert any("refused (the connection stays open)" in text for text in recorder.notices())


def test_malformed_answer_fails_only_its_request(tmp_path: Path) -> None:
    async def scenario() -> tuple[Exception, dict]:
        async with open_connection(stdio_config("toolbox_server.py"), tmp_path) as conn:
            with pytest.raises(ProtocolError) as caught:
                await conn.call_tool("malformed", {})
            return caught.value, (await conn.call_tool("echo", {"text": "ok"})).raise_for_error()

    error, after = run(scenario())
    assert str(error) == ("server t sent a malformed answer to tools/call request 3: "
                          "Invalid Request: malformed response")
    assert after["content"][0]["text"] == "ok"


def test_crash_fails_pending_calls_at_once_and_next_use_restarts(tmp_path: Path) -> None:
    recorder = Recorder()
    restarted: list[str] = []

    async def on_restart(name: str) -> None:
        restarted.append(name)

    async def scenario() -> None:
        async with open_connection(stdio_config("toolbox_server.py"), tmp_path, recorder) as conn:
            conn.on_restart = on_restart
            first_pid = conn.pid
            hanging = asyncio.ensure_future(conn.call_tool("hang", {}, call_id="call_h"))
            await recorder.sent("hang")
            took, crash = await elapsed(conn.call_tool("crash", {"code": 3, "message": "boom: disk on fire"}))
            assert took < 1.5
            assert isinstance(crash, ServerExited)
            assert str(crash) == "server t exited (code 3): boom: disk on fire"
            with pytest.raises(ServerExited):
                await hanging
            assert not conn.alive and restarted == []
            exchange = await conn.call_tool("echo", {"text": "back"})
            assert exchange.raise_for_error()["content"][0]["text"] == "back"
            assert (conn.number, restarted) == (2, ["t"])
            assert conn.pid != first_pid and first_pid is not None and not process_running(first_pid)

    run(scenario())
    assert "server t exited (code 3); restarted (connection 2)" in recorder.notices()
    exits = recorder.of("server_exited")
    assert (exits[0].returncode, exits[0].expected, exits[0].stderr_tail) == (3, False, "boom: disk on fire")
    log_text = (tmp_path / "t.log").read_text()
    assert "starting server t (connection 1)" in log_text and "starting server t (connection 2)" in log_text
    assert "boom: disk on fire" in log_text


def test_timeout_sends_cancelled_with_the_request_id(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    config = stdio_config("toolbox_server.py", "--record", str(record), call_timeout=0.3)

    async def scenario() -> tuple[float, BaseException | object, dict]:
        async with open_connection(config, tmp_path) as conn:
            took, outcome = await elapsed(conn.call_tool("hang", {}))
            after = (await conn.call_tool("echo", {"text": "alive"})).raise_for_error()
            return took, outcome, after

    took, outcome, after = run(scenario())
    assert isinstance(outcome, RequestTimeout)
    assert str(outcome) == "tools/call request 3 got no answer within 0.3 s (a cancellation was sent)"
    assert 0.3 <= took < 1.5
    cancelled = [m for m in received_lines(record) if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in cancelled] == [3]
    assert after["content"][0]["text"] == "alive"


def test_cancelling_a_call_sends_cancelled(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    recorder = Recorder()
    config = stdio_config("toolbox_server.py", "--record", str(record))

    async def scenario() -> None:
        async with open_connection(config, tmp_path, recorder) as conn:
            task = asyncio.ensure_future(conn.call_tool("hang", {}, timeout=30))
            await recorder.sent("hang")
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await conn.ping()  # the server has read everything before this answer

    run(scenario())
    cancelled = [m for m in received_lines(record) if m.get("method") == "notifications/cancelled"]
    assert cancelled == [{"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": 3, "reason": "cancelled by the client"}}]


def test_unsupported_version_answer_is_refused_naming_both(tmp_path: Path) -> None:
    config = stdio_config("toolbox_server.py", "--answer-version", "1999-01-01")

    async def scenario() -> tuple[Exception, int | None]:
        async with open_connection(config, tmp_path, start=False) as conn:
            with pytest.raises(VersionMismatch) as caught:
                await conn.start()
            return caught.value, conn.pid

    error, _ = run(scenario())
    assert str(error).startswith("server t answered protocol version '1999-01-01' to our '2025-11-25'")


def test_other_versions_can_be_asked_for(tmp_path: Path) -> None:
    async def scenario() -> str | None:
        async with open_connection(stdio_config("minimal_echo_server.py"), tmp_path,
                                   protocol_version="2025-03-26") as conn:
            return conn.protocol_version

    assert run(scenario()) == "2025-03-26"


def test_server_that_dies_at_start_reports_its_stderr(tmp_path: Path) -> None:
    config = stdio_config("toolbox_server.py", "--exit-at-start", "4")

    async def scenario() -> Exception:
        async with open_connection(config, tmp_path, start=False) as conn:
            with pytest.raises(ServerExited) as caught:
                await conn.start()
            return caught.value

    assert str(run(scenario())) == "server t exited (code 4): fatal: cannot start"


def test_missing_command_and_missing_cwd_are_named(tmp_path: Path) -> None:
    missing = ServerConfig(name="ghost", transport="stdio", command="no-such-mcp-server-xyz")
    spaced = ServerConfig(name="spaced", transport="stdio", command="npx -y some-server")
    bad_cwd = stdio_config("minimal_echo_server.py", cwd=str(tmp_path / "nowhere"))

    async def failure(config: ServerConfig) -> str:
        async with open_connection(config, tmp_path, start=False) as conn:
            with pytest.raises(TransportError) as caught:
                await conn.start()
            return str(caught.value)

    assert run(failure(missing)) == "cannot start server ghost: command 'no-such-mcp-server-xyz' not found"
    assert run(failure(spaced)) == ("cannot start server spaced: command 'npx -y some-server' not found "
                                    '(the command must name one program; put its arguments in "args")')
    assert run(failure(bad_cwd)) == (f"cannot start server t: cwd {tmp_path / 'nowhere'}: "
                                     "No such file or directory")


def test_initialize_timeout_and_the_silent_process_is_stopped(tmp_path: Path) -> None:
    config = ServerConfig(name="mute", transport="stdio", command="sleep", args=("60",),
                          request_timeout=0.3, shutdown_grace=0.3)

    async def scenario() -> tuple[Exception, int | None]:
        async with open_connection(config, tmp_path, start=False) as conn:
            with pytest.raises(RequestTimeout) as caught:
                await conn.start()
            return caught.value, conn.pid

    error, _ = run(scenario())
    assert str(error) == "server mute did not answer initialize within 0.3 s"


def test_close_stops_server_and_grandchildren(tmp_path: Path) -> None:
    async def scenario() -> tuple[int, int]:
        async with open_connection(stdio_config("toolbox_server.py"), tmp_path) as conn:
            grandchild = int((await conn.call_tool("spawn", {})).raise_for_error()["content"][0]["text"])
            server = conn.pid
            assert server is not None and process_running(server) and process_running(grandchild)
            return server, grandchild

    server, grandchild = run(scenario())
    assert not process_running(server)
    assert not process_running(grandchild)


def test_crashed_server_leaves_no_grandchild(tmp_path: Path) -> None:
    async def scenario() -> int:
        async with open_connection(stdio_config("toolbox_server.py"), tmp_path) as conn:
            grandchild = int((await conn.call_tool("spawn", {})).raise_for_error()["content"][0]["text"])
            with pytest.raises(ServerExited):
                await conn.call_tool("crash", {"code": 1})
            assert await async_wait_until(lambda: not process_running(grandchild), 5.0)
            return grandchild

    assert not process_running(run(scenario()))


def test_server_ignoring_sigterm_is_killed(tmp_path: Path) -> None:
    recorder = Recorder()
    config = stdio_config("toolbox_server.py", "--ignore-term", shutdown_grace=0.4)

    async def scenario() -> tuple[int, float]:
        async with open_connection(config, tmp_path, recorder) as conn:
            pid = conn.pid
            assert pid is not None
            started = time.monotonic()
            await conn.close()
            return pid, time.monotonic() - started

    pid, took = run(scenario())
    assert not process_running(pid)
    assert 0.8 <= took < 3.0  # stdin closed → 0.4 s → SIGTERM (ignored) → 0.4 s → SIGKILL
    assert recorder.of("server_exited")[0].returncode == -signal.SIGKILL


def test_default_shutdown_grace_is_two_seconds() -> None:
    assert stdio_config("minimal_echo_server.py").shutdown_grace == 2.0


def test_use_after_close_is_refused(tmp_path: Path) -> None:
    async def scenario() -> str:
        async with open_connection(stdio_config("minimal_echo_server.py"), tmp_path) as conn:
            await conn.close()
            with pytest.raises(TransportError) as caught:
                await conn.call_tool("echo", {"text": "x"})
            return str(caught.value)

    assert run(scenario()) == "connection to server t is closed"


def test_concurrent_calls_are_paired_by_id(tmp_path: Path) -> None:
    async def scenario() -> list[str]:
        async with open_connection(stdio_config("minimal_echo_server.py"), tmp_path) as conn:
            exchanges = await asyncio.gather(*(
                conn.call_tool("echo", {"text": f"n{i}"}, call_id=f"call_{i}") for i in range(50)))
            return [e.raise_for_error()["content"][0]["text"] for e in exchanges]

    assert run(scenario()) == [f"n{i}" for i in range(50)]


def test_close_fails_pending_calls_with_a_clear_message(tmp_path: Path) -> None:
    recorder = Recorder()

    async def scenario() -> str:
        async with open_connection(stdio_config("toolbox_server.py"), tmp_path, recorder) as conn:
            pending = asyncio.ensure_future(conn.call_tool("hang", {}))
            await recorder.sent("hang")
            await conn.close()
            with pytest.raises(TransportError) as caught:
                await pending
            return str(caught.value)

    assert run(scenario()) == "connection to server t was closed"



def test_server_that_stops_reading_is_reported_and_stopped(tmp_path: Path) -> None:
    """Closing stdin while staying alive: pending requests fail, the process is stopped."""
    config = ServerConfig(name="deaf", transport="stdio", command="sh",
                          args=("-c", "exec 0<&-; echo 'not listening' >&2; exec sleep 30"),
                          shutdown_grace=0.3)

    async def scenario() -> tuple[float, object]:
        async with open_connection(config, tmp_path, start=False) as conn:
            return await elapsed(conn.start())

    took, outcome = run(scenario())
    assert isinstance(outcome, ServerExited)
    assert str(outcome) == f"server deaf exited (code {-signal.SIGTERM}): not listening"
    assert took < 3.0
