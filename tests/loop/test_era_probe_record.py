"""``--protocol-version auto`` when the probe is slow: the handshake goes out beside it, the
probe wins against a 2026-07-28 server, and the late ``initialize`` (which may not be
cancelled) is waited for until the server refuses it, so the transcript shows every request
answered and ``verify`` holds. The race is forced by letting the probe wait no time at all."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from toolrelay.client import era_probe
from toolrelay.client.config import ServerConfig
from toolrelay.runner import RunOptions, run_async
from toolrelay.verify import load_run, verify


@pytest.mark.parametrize("declare", ["flat", "namespaces"])  # namespaces: described by the probe's answer
def test_a_late_initialize_beside_a_winning_probe_is_answered_and_the_run_verifies(
    declare: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(era_probe, "PROBE_WAIT", 0.0)  # the handshake always goes out beside the probe
    (tmp_path / "notes.txt").write_text("line 1\nline 2\n")
    server = ServerConfig(name="fs", transport="stdio", command=sys.executable,
                          args=("-m", "toolrelay", "files", str(tmp_path)), roots=[str(tmp_path)])
    script = tmp_path / "script.json"
    name = "fs__read_text_file" if declare == "flat" else "fs.read_text_file"
    script.write_text(json.dumps({"turns": [{"calls": [
        {"name": name, "arguments": {"path": str(tmp_path / "notes.txt")}}]}]}))
    options = RunOptions(model="offline", script=script, config=[server], protocol_version="auto",
                         declare=declare, transcript=tmp_path / "run.jsonl")
    result = asyncio.run(run_async("Read notes.txt", options))
    assert result.completed and [c.status for c in result.calls] == ["ok"]
    events = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    sent = [e for e in events if e["kind"] == "mcp_request" and e["server"] == "fs"]
    assert [e["method"] for e in sent[:2]] == ["server/discover", "initialize"]
    [refused] = [e for e in events if e["kind"] == "mcp_response" and e.get("method") == "initialize"]
    assert refused["message"]["error"]["code"] == -32022  # the modern server refuses the late handshake
    verdict = verify(load_run(tmp_path / "run.jsonl"))
    assert verdict.ok, [f.message for f in verdict.broken_findings()]
