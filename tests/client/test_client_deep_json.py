"""A server's answer nested deeper than json_depth.MAX_DEPTH: the client records it as an
invalid line with the reason, its call fails at once (the id is read from the line), and the
connection goes on serving."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from client_helpers import Recorder, open_connection, run

from toolrelay.client.config import ServerConfig
from toolrelay.errors import ProtocolError

DEEP_SERVER = r'''
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    mid, method = message.get("id"), message.get("method")
    if mid is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "deep", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in ("deep", "echo")]}
    elif method != "tools/call":  # server/discover, as every unknown method: -32601
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601,
                                     "message": "Method not found"}}) + "\n")
        sys.stdout.flush()
        continue
    elif message["params"]["name"] == "deep":
        sys.stdout.write('{"jsonrpc":"2.0","id":%s,"result":{"structuredContent":' % json.dumps(mid)
                         + "[" * 5000 + "]" * 5000 + ',"content":[]}}\n')
        sys.stdout.flush()
        continue
    else:
        result = {"content": [{"type": "text", "text": "still here"}]}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}) + "\n")
    sys.stdout.flush()
'''


def test_an_answer_nested_too_deep_is_recorded_and_the_connection_goes_on(tmp_path: Path) -> None:
    script = tmp_path / "deep_server.py"
    script.write_text(DEEP_SERVER)
    config = ServerConfig(name="t", transport="stdio", command=sys.executable, args=(str(script),))
    recorder = Recorder()

    async def scenario() -> str:
        async with open_connection(config, tmp_path, recorder) as conn:
            # fails at once with what was wrong (a RequestTimeout after 30 s would not match)
            with pytest.raises(ProtocolError, match=r"answer to tools/call request 3: .*nested deeper"):
                await conn.call_tool("deep", {}, timeout=30.0)
            after = await conn.call_tool("echo", {})
            return str(after.raise_for_error()["content"][0]["text"])

    assert run(scenario()) == "still here"
    invalid = recorder.of("mcp_invalid")
    assert len(invalid) == 1 and "JSON nested deeper than 512 levels" in invalid[0].reason
    assert invalid[0].preview.startswith('{"jsonrpc":"2.0","id":3,"result":{"structuredContent":[[[')
