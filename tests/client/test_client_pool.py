"""ServerPool: every server started at once, the unavailable ones recorded with why, each
server's tools/list kept as sent, list_changed marks (every time), re-listing after a
restart, and nothing left running after close."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from client_helpers import PYTHON, Recorder, async_wait_until, process_running, run, stdio_config

from testkit.servers import GROWING_SERVER as GROWING
from toolrelay.client.config import ServerConfig
from toolrelay.client.pool import ServerPool
from toolrelay.errors import NoServerAvailable, ServerExited

TOOLBOX_TOOLS = ["echo", "crash", "hang", "huge", "env", "pid", "spawn", "sleep", "list_changed",
                 "ask_client", "malformed", "stop_reading"]


def growing(name: str = "grow") -> ServerConfig:
    return ServerConfig(name=name, transport="stdio", command=PYTHON, args=(str(GROWING),))


def test_servers_start_together_and_the_broken_one_is_recorded_with_why(tmp_path: Path) -> None:
    recorder = Recorder()
    box = stdio_config("toolbox_server.py", "--page-size", "4", name="box")
    broken = stdio_config("toolbox_server.py", "--exit-at-start", "5", name="broken")
    pool = ServerPool([box, broken], recorder.events, log_dir=tmp_path)

    async def scenario() -> int | None:
        await pool.open()
        try:
            assert [t["name"] for t in pool.tools["box"]] == TOOLBOX_TOOLS  # all pages, as sent
            assert pool.tools["box"][0]["inputSchema"] == {"type": "object"}
            assert "broken" not in pool.tools
            return pool.connections["box"].pid
        finally:
            await pool.close()

    pid = run(scenario())
    assert list(pool.unavailable) == ["broken"]
    assert isinstance(pool.unavailable["broken"], ServerExited)
    assert "fatal: cannot start" in str(pool.unavailable["broken"])
    assert f"server broken unavailable: {pool.unavailable['broken']}" in recorder.notices()
    assert pid is not None and not process_running(pid)


def test_when_no_server_starts_one_error_says_why_for_each(tmp_path: Path) -> None:
    broken = stdio_config("toolbox_server.py", "--exit-at-start", "5", name="broken")
    gone = ServerConfig(name="gone", transport="stdio", command="/nonexistent/toolrelay-test-server")
    recorder = Recorder()
    pool = ServerPool([broken, gone], recorder.events, log_dir=tmp_path)
    with pytest.raises(NoServerAvailable) as failed:
        run(pool.open())
    assert list(failed.value.unavailable) == ["broken", "gone"]
    assert isinstance(failed.value.unavailable["broken"], ServerExited)
    assert str(failed.value) == (
        "no server is available:\n"
        f"  server broken unavailable: {failed.value.unavailable['broken']}\n"
        f"  server gone unavailable: {failed.value.unavailable['gone']}"
    )
    assert failed.value.exit_code == 3
    assert recorder.notices() == []  # the error says it: no notice repeats it


def test_when_the_only_server_fails_the_error_is_its_unavailability(tmp_path: Path) -> None:
    broken = stdio_config("toolbox_server.py", "--exit-at-start", "5", name="broken")
    pool = ServerPool([broken], Recorder().events, log_dir=tmp_path)
    with pytest.raises(NoServerAvailable, match=r"^server broken unavailable: server broken exited"):
        run(pool.open())


def test_every_list_changed_marks_the_server_again(tmp_path: Path) -> None:
    pool = ServerPool([growing()], Recorder().events, log_dir=tmp_path)
    relisted: list[list[str]] = []

    async def scenario() -> None:
        await pool.open()
        try:
            relisted.append(await pool.relist_changed())  # nothing changed yet
            for _ in range(3):
                await pool.connections["grow"].call_tool("grow", {})
                relisted.append(await pool.relist_changed())
        finally:
            await pool.close()

    run(scenario())
    assert relisted == [[], ["grow"], ["grow"], ["grow"]]
    assert [t["name"] for t in pool.tools["grow"]] == ["grow", "tool_1", "tool_2", "tool_3"]


def test_a_restarted_server_is_relisted_and_a_different_list_is_announced(tmp_path: Path) -> None:
    pool = ServerPool([growing()], Recorder().events, log_dir=tmp_path)
    reasons: list[str] = []
    pool.on_relisted = reasons.append

    async def scenario() -> None:
        await pool.open()
        try:
            connection = pool.connections["grow"]
            await connection.call_tool("grow", {})
            await pool.relist_changed()
            assert len(pool.tools["grow"]) == 2
            assert connection.pid is not None
            os.kill(connection.pid, signal.SIGKILL)  # the new process starts with one tool again
            assert await async_wait_until(lambda: not connection.alive)
            await connection.call_tool("grow", {})  # restarts, re-lists, then calls
        finally:
            await pool.close()

    run(scenario())
    assert reasons == ["restart of grow"]
    assert [t["name"] for t in pool.tools["grow"]] == ["grow"]
