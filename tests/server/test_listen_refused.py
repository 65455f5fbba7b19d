"""``toolrelay files`` and ``subscriptions/listen`` (MCP 2026-07-28): a file server's tools
never change and it has no resources, so it declares no list changes and refuses a listen
request at once, saying why (-32601; HTTP 404), over stdio and HTTP alike; the
connection goes on."""

from __future__ import annotations

import json
import select
import subprocess
import sys
from pathlib import Path

import httpx2
from http_helpers import post, rpc_error

from testkit.mcp_http import files_http_process
from testkit.processes import spawn

VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}
LISTEN = {"_meta": META, "notifications": {"toolsListChanged": True}}
SAID = ("Method not found: subscriptions/listen (this server offers no subscriptions: its tools never "
        "change, and it has no resources)")


def test_over_stdio_a_listen_request_is_refused_and_the_connection_goes_on(tmp_path: Path) -> None:
    proc = spawn([sys.executable, "-m", "toolrelay", "files", str(tmp_path)],
                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    answers = []
    for number, (method, params) in enumerate([("server/discover", {"_meta": META}),
                                               ("subscriptions/listen", LISTEN),
                                               ("tools/list", {"_meta": META})], 1):
        line = {"jsonrpc": "2.0", "id": f"r{number}", "method": method, "params": params}
        proc.stdin.write(json.dumps(line).encode() + b"\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 10)
        assert ready, f"no answer to {method}"
        answers.append(json.loads(proc.stdout.readline()))
    proc.stdin.close()
    assert proc.wait(10) == 0
    proc.stdout.close()
    discovered, refused, listed = answers
    assert discovered["result"]["capabilities"]["tools"] == {"listChanged": False}
    assert refused == {"jsonrpc": "2.0", "id": "r2", "error": {"code": -32601, "message": SAID}}
    assert listed["result"]["tools"]


def test_over_http_a_listen_request_is_refused_with_404(tmp_path: Path) -> None:
    headers = {"mcp-protocol-version": VERSION, "mcp-method": "subscriptions/listen"}
    body = {"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": LISTEN}
    with files_http_process(tmp_path) as url, httpx2.Client(timeout=30) as client:
        reply = post(client, url, body, headers=headers)
    assert reply.status_code == 404
    assert reply.headers["content-type"] == "application/json"
    assert rpc_error(reply) == {"code": -32601, "message": SAID}
