"""``toolrelay files`` on stdio, raw JSON lines: the first request chooses the era, once. An
enveloped request opens a 2026-07-28 connection (no initialize; the envelope checked on
every request); anything else opens a handshake one, which refuses enveloped requests."""

from __future__ import annotations

import json
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.processes import spawn

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Files:
    """``toolrelay files ROOT`` as a subprocess: one request line in, one answer line out."""

    def __init__(self, root: Path) -> None:
        self.proc = spawn([sys.executable, "-m", "toolrelay", "files", str(root)],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0

    def ask(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], 10)
        assert ready, "no answer from toolrelay files"
        answer: dict[str, Any] = json.loads(self.proc.stdout.readline())
        assert answer["id"] == self.next_id
        return answer

    def close(self) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        code = self.proc.wait(10)
        self.proc.stdout.close()
        return code


@pytest.fixture()
def files(tmp_path: Path) -> Iterator[Files]:
    (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
    server = Files(tmp_path)
    yield server
    assert server.close() == 0


def test_an_enveloped_first_request_opens_the_modern_era(files: Files) -> None:
    discovered = files.ask("server/discover", {"_meta": META})["result"]
    assert discovered["supportedVersions"] == ["2026-07-28"] and discovered["resultType"] == "complete"
    read = {"name": "read_text_file", "arguments": {"path": "a.txt"}, "_meta": META}
    called = files.ask("tools/call", read)
    assert called["result"]["content"][0]["text"] == "alpha\n"
    assert called["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "toolrelay-files"
    assert files.ask("tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})[
        "error"]["code"] == -32602
    assert files.ask("ping", {"_meta": META})["error"]["code"] == -32601
    refused = files.ask("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                       "clientInfo": {"name": "late", "version": "0"}})["error"]
    assert refused["code"] == -32022 and refused["data"]["supported"] == ["2026-07-28"]


def test_a_handshake_first_keeps_the_connection_legacy(files: Files) -> None:
    init = files.ask("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "old", "version": "0"}})
    assert init["result"]["protocolVersion"] == "2025-11-25"
    assert len(files.ask("tools/list")["result"]["tools"]) == 6
    assert files.ask("tools/list", {"_meta": META})["error"]["code"] == -32600
