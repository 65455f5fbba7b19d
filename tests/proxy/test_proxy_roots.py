"""The proxy does not read its hosts' roots, so a host that declares ``roots`` is not asked
for them before its first call (a round trip for nothing; the file server, which reads
them, still asks: ``tests/files``). An upstream that asks for roots during a call is
another matter: that ask is relayed (``test_proxy_asks.py``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import PYTHON

from .proxy_helpers import WOBBLY, proxy_args, script_entry, verify, write_config

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {"roots": {"listChanged": True}},
    "clientInfo": {"name": "raw", "version": "1"}}}


def test_a_host_that_declares_roots_is_not_asked_for_them_before_a_call(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"wob": script_entry(WOBBLY)})
    transcript = tmp_path / "proxy.jsonl"
    asked = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "wob__echo", "arguments": {"text": "hi"}}}]
    with subprocess.Popen([PYTHON, *proxy_args(config, transcript)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(line) + "\n" for line in asked))
        proc.stdin.flush()
        seen = [json.loads(proc.stdout.readline()) for _ in range(2)]
        proc.stdin.close()
        proc.wait(20)
    assert [message.get("id") for message in seen] == [1, 2]  # the answers, and no roots/list between
    assert seen[1]["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert verify(transcript).returncode == 0
