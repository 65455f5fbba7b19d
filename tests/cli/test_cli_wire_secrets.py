"""``toolrelay call --wire`` logs every JSON-RPC line, but never a secret from the config:
a server that echoes its environment back has its token redacted in the wire lines, as in a
transcript. (The tool's own result, which the user asked for, is printed as it came.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from testkit.processes import run
from testkit.servers import TOOLBOX_SERVER

TOKEN = "tok-wire-0123456789abcdef"


def call(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    server = {"command": sys.executable, "args": [str(TOOLBOX_SERVER)], "env": {"SERVICE_TOKEN": TOKEN}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"box": server}}))
    env = {k: v for k, v in os.environ.items() if k != "SERVICE_TOKEN"}
    command = [sys.executable, "-m", "toolrelay", "call", "box__env", "{}", "--config", "mcp.json", *extra]
    return run(command, cwd=tmp_path, text=True, timeout=60, env=env)


def test_the_wire_lines_redact_a_secret_the_server_echoes(tmp_path: Path) -> None:
    proc = call(tmp_path, "--wire")
    assert proc.returncode == 0, proc.stderr
    wire = [line for line in proc.stdout.splitlines() if line.startswith((">> box#", "<< box#"))]
    [answer] = [line for line in wire if "SERVICE_TOKEN" in line]
    assert answer.startswith("<< box#1 ")
    assert '\\"SERVICE_TOKEN\\": \\"[redacted]\\"' in answer
    assert not any(TOKEN in line for line in wire)


def test_the_wire_in_json_is_redacted_too(tmp_path: Path) -> None:
    proc = call(tmp_path, "--wire", "--json")
    assert proc.returncode == 0, proc.stderr
    answers = [m["message"] for m in json.loads(proc.stdout)["wire"] if m["direction"] == "in"]
    [echoed] = [a["result"]["content"][0]["text"] for a in answers if "SERVICE_TOKEN" in json.dumps(a)]
    assert json.loads(echoed)["SERVICE_TOKEN"] == "[redacted]"
    assert TOKEN not in json.dumps(answers)
