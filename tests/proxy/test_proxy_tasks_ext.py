"""A 2026-07-28 upstream's tasks of the tasks extension (SEP-2663) through ``toolrelay proxy``:
the proxy declares the extension upstream, follows a ``tools/call`` its upstream made a
task (``tasks/get`` to the end, echoing ``requestState``) and answers the host, of either
era, with the task's result or error as a plain answer. The host is the official SDK's
``Client``; the upstream the SDK's server carrying the extension as written to the SEP
(``sdk_tasks_ext_server.py``). The proxy transcript verifies; a changed task result does not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as t
import pytest
from mcp.client import Client

from testkit.servers import SDK_TASKS_EXT_SERVER

from .proxy_helpers import broken_as, events, script_entry, stdio_proxy, verify, verify_tampered, write_config


async def _host(server: Any, mode: str) -> list[tuple[str, bool]]:
    async with Client(server, mode=mode) as client:
        answers = []
        calls = (("x__slow", {"text": "late hello", "seconds": 0.2}), ("x__plain", {"text": "hi"}))
        for name, arguments in calls:
            called = await client.call_tool(name, arguments)
            block = called.content[0]
            answers.append((block.text if isinstance(block, t.TextContent) else "", bool(called.is_error)))
        return answers


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])  # legacy: the 2025 handshake
def test_an_upstream_task_reaches_either_host_as_its_result(tmp_path: Path, mode: str) -> None:
    config = write_config(tmp_path, {"x": script_entry(SDK_TASKS_EXT_SERVER)})
    transcript = tmp_path / "proxy.jsonl"
    answers = anyio.run(_host, stdio_proxy(config, transcript, "--protocol-version", "2026-07-28"), mode)
    assert answers == [("late hello", False), ("hi", False)]
    recorded = events(transcript)
    upstream = [e for e in recorded if e["kind"] == "mcp_request" and e.get("server") == "x"]
    call = next(e for e in upstream if e["message"]["method"] == "tools/call")
    declared = call["message"]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert declared["extensions"] == {"io.modelcontextprotocol/tasks": {}}
    polls = [e for e in upstream if e["message"]["method"] == "tasks/get"]
    assert polls and {e["message"]["params"]["taskId"] for e in polls} == {"ext-task-1"}
    checked = verify(transcript)
    assert checked.returncode == 0, checked.stdout

    def forge(lines: list[dict[str, Any]]) -> None:
        ended = next(e for e in lines if e["kind"] == "mcp_response" and e.get("server") == "x"
                     and (e["message"].get("result") or {}).get("status") == "completed")
        ended["message"]["result"]["result"]["content"][0]["text"] = "forged"

    broken_as(verify_tampered(transcript, forge, tmp_path),
              "the host's result differs from the upstream result it answers")
