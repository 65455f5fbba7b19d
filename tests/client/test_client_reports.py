"""The log level asked of a server, by era: on a 2026-07-28 connection (toolrelay's own file
server, pinned) there is no logging/setLevel, so the level rides in every request's
``_meta``; recorded in ``server_ready``, as the CLI reads it to show what reaches it."""

from __future__ import annotations

import sys
from pathlib import Path

from client_helpers import Recorder, open_connection, run

from toolrelay.client.config import ServerConfig
from toolrelay.events import McpMessage, ServerReady
from toolrelay.protocol.request_envelope import LOG_LEVEL_KEY


def test_a_2026_connection_asks_the_level_in_each_request(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
    config = ServerConfig(name="fs", transport="stdio", command=sys.executable,
                          args=("-m", "toolrelay", "files", str(tmp_path)), roots=(str(tmp_path),),
                          log_level="notice")
    recorder = Recorder()

    async def scenario() -> None:
        async with open_connection(config, tmp_path, recorder, protocol_version="2026-07-28") as connection:
            await connection.list_tools()
            (await connection.call_tool("read_text_file", {"path": "a.txt"}, call_id="c1")).raise_for_error()

    run(scenario())
    sent = [e for e in recorder.seen if isinstance(e, McpMessage) and e.role == "mcp_request"]
    assert "logging/setLevel" not in [e.method for e in sent]
    after_discover = [e for e in sent if e.method != "server/discover"]
    assert {e.method for e in after_discover} == {"tools/list", "tools/call"}
    assert all(e.message["params"]["_meta"][LOG_LEVEL_KEY] == "notice" for e in after_discover)
    calls = [e.message["params"]["_meta"]["progressToken"] for e in sent if e.method == "tools/call"]
    assert calls and set(calls) == {"c1-1"}  # a retry with the roots asked keeps the call's token
    [ready] = [e for e in recorder.seen if isinstance(e, ServerReady)]
    assert ready.log_level == "notice"
