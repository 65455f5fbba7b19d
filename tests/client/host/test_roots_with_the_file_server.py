"""Roots from the config and toolrelay's own file server together: the server narrows the
directories it was started with to the client's roots, and follows a change of them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from conftest import PYTHON
from toolrelay.client.config import load_config
from toolrelay.client.connection import Connection
from toolrelay.events import EventStream


def test_the_file_server_narrows_to_the_configured_roots_and_follows_their_change(tmp_path: Path) -> None:
    served = tmp_path / "served"
    (served / "notes").mkdir(parents=True)
    (served / "notes" / "in.txt").write_text("inside\n")
    (served / "out.txt").write_text("outside\n")
    config_file = tmp_path / "mcp.json"
    entry = {"command": PYTHON, "args": ["-m", "toolrelay", "files", str(served)],
             "toolrelay": {"roots": ["served/notes"]}}  # relative: against the config's folder
    config_file.write_text(json.dumps({"mcpServers": {"files": entry}}))
    [config] = load_config(config_file, environ={})

    async def scenario() -> list[tuple[bool, str]]:
        seen = []
        connection = Connection(config, EventStream(), log_dir=tmp_path)
        await connection.start()
        try:
            for path in (served / "notes" / "in.txt", served / "out.txt"):
                result = (await connection.call_tool("read_text_file", {"path": str(path)})).result or {}
                seen.append((bool(result.get("isError")), result["content"][0]["text"]))
            connection.set_roots([served])  # the server is told, and asks again
            result = (await connection.call_tool("read_text_file", {"path": str(served / "out.txt")})).result
            seen.append((bool((result or {}).get("isError")), (result or {})["content"][0]["text"]))
        finally:
            await connection.close()
        return seen

    inside, outside, widened = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert inside == (False, "inside\n")
    assert outside == (True, "Access denied - path outside allowed directories")
    assert widened == (False, "outside\n")
