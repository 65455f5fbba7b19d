"""Progress and log lines on stderr, from the recorded messages: on a terminal the bar is
redrawn in place and cleared before any other line; long log data is cut to one line;
progress for a token no call sent is not shown."""

from __future__ import annotations

import io
from typing import Any

from toolrelay.cli.server_activity import ServerActivityPrinter
from toolrelay.events import McpMessage, ServerReady


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def message(role: str, direction: str, method: str, params: dict[str, Any]) -> McpMessage:
    return McpMessage(role=role, direction=direction, server="ev", connection=1, mcp_id=None, method=method,
                      message={"jsonrpc": "2.0", "method": method, "params": params})


def progress(token: str, done: int) -> McpMessage:
    return message("mcp_notification", "in", "notifications/progress",
                   {"progressToken": token, "progress": done, "total": 4})


def test_the_bar_is_redrawn_in_place_and_cleared_before_a_log_line() -> None:
    stream = Terminal()
    printer = ServerActivityPrinter(stream)
    printer(ServerReady(server="ev", connection=1, protocol_version="2025-11-25", server_info={},
                        capabilities={}))
    printer(message("mcp_request", "out", "tools/call", {"name": "slow", "_meta": {"progressToken": "c-1"}}))
    printer(progress("c-1", 1))
    printer(progress("c-1", 2))
    printer(progress("someone-else", 3))  # no call of ours sent it: not shown
    printer(message("mcp_notification", "in", "notifications/message",
                    {"level": "error", "data": {"text": "x" * 400, "lines": "a\nb"}}))
    printer(message("mcp_notification", "in", "notifications/message", {"level": "info", "data": "hidden"}))
    assert stream.getvalue() == (
        "\r\x1b[K  ev/slow [#####---------------] 1/4"
        "\r\x1b[K  ev/slow [##########----------] 2/4"
        "\r\x1b[K"
        '[ev] error: {"text":"' + "x" * 290 + "…\n"  # 300 characters in all
    )
