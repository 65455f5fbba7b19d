"""Helpers for the CLI tests: the CLI as a real subprocess, a workspace, and config files
for servers that work, cannot start, cannot be reached, or end calls in every way."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from testkit.processes import run
from testkit.servers import HONEST_SERVER

HONEST = HONEST_SERVER
"""A stdio server whose tools end every way a call can end (echo, fail, reject, crash, sleep)."""
NOTES = "".join(f"line {i}\n" for i in range(1, 31))


def toolrelay(
    *args: str, cwd: Path, timeout: float = 60, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it: no model key in the environment (unless ``env`` adds
    one), no terminal on stdin."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AZURE_OPENAI_"))}
    return run([sys.executable, "-m", "toolrelay", *args], cwd=cwd, text=True, timeout=timeout,
               env={**inherited, **(env or {})})


def make_workspace(root: Path) -> Path:
    """A folder with a notes.txt of 30 lines (``line 1`` … ``line 30``)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.txt").write_text(NOTES, encoding="utf-8")
    return root


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def file_server(root: Path) -> dict[str, Any]:
    """toolrelay's own file server on ``root``, as a config entry."""
    return {"command": sys.executable, "args": ["-m", "toolrelay", "files", str(root)]}


def honest_server(*, shutdown_grace: float | None = None) -> dict[str, Any]:
    """``shutdown_grace``: for a test that leaves it in a ``sleep`` (it reads no stdin
    then), a shorter wait than the 2 s default before it is stopped by signal."""
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(HONEST)]}
    if shutdown_grace is not None:
        entry["toolrelay"] = {"shutdownGrace": shutdown_grace}
    return entry


def missing_command() -> dict[str, Any]:
    """A stdio server whose command does not exist."""
    return {"command": "/nonexistent/toolrelay-test-server"}


def crashing_at_start(words: str) -> dict[str, Any]:
    """A stdio server that writes ``words`` on stderr and exits before the handshake."""
    code = f"import sys; sys.stderr.write({words!r} + '\\n'); sys.exit(2)"
    return {"command": sys.executable, "args": ["-c", code]}


def refused_url() -> dict[str, Any]:
    """An HTTP server entry on a loopback port nobody listens on (connection refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return {"url": f"http://127.0.0.1:{port}/mcp"}


def config(path: Path, **servers: dict[str, Any]) -> Path:
    """An ``mcpServers`` config file with ``servers`` by name."""
    return write_json(path, {"mcpServers": servers})
