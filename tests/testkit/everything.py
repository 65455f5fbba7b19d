"""server-everything (``@modelcontextprotocol/server-everything``, pinned 2026.8.31 as in
/work/shared/notes/conformance.md): installed once, run over stdio, or over Streamable
HTTP in a network namespace that has only loopback.

Its HTTP mode listens on every interface with no Host or Origin check, so where the
machine allows it the server and the toolrelay commands that talk to it run together in
a private namespace (``loopback_only``; ``everything_http.py`` is the program run there).
Without one the server listens briefly on every interface, as the conformance suite's
servers do.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from . import npm
from .netns import loopback_only

__all__ = ["EVERYTHING_PACKAGE", "install", "loopback_only", "run_over_http", "stdio_config"]

EVERYTHING_PACKAGE = "@modelcontextprotocol/server-everything@2026.8.31"
_INDEX = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
_HTTP_PROGRAM = Path(__file__).resolve().parent / "everything_http.py"


def install(cache: Path) -> list[str] | str:
    """The command that starts server-everything (append ``stdio`` or ``streamableHttp``),
    or why it cannot be had."""
    node = shutil.which("node")
    if node is None:
        return "node not found on PATH: cannot run server-everything"
    installed = npm.install(cache / "everything", [EVERYTHING_PACKAGE], [_INDEX])
    return [node, str(installed / _INDEX)] if isinstance(installed, Path) else installed


def stdio_config(command: list[str], roots: list[str]) -> dict[str, Any]:
    """An MCP config naming server-everything over stdio as ``ev``, with ``roots``."""
    # it keeps running after its stdin closes (its timers hold Node open): no 2 s wait per close
    entry = {"command": command[0], "args": [*command[1:], "stdio"],
             "toolrelay": {"roots": roots, "shutdownGrace": 0.2}}
    return {"mcpServers": {"ev": entry}}


def run_over_http(
    command: list[str], roots: list[str], runs: list[list[str]], cwd: Path, timeout: float = 240
) -> list[dict[str, Any]]:
    """Start server-everything over Streamable HTTP, run each toolrelay command of ``runs``
    (``--config`` naming it as ``ev`` is appended) in ``cwd``, stop the server: each run's
    ``{"code", "stdout", "stderr"}``, in order."""
    job = cwd / "everything-http.json"
    job.write_text(json.dumps({"server": command, "roots": roots, "runs": runs}), encoding="utf-8")
    proc = subprocess.run([*loopback_only(), sys.executable, str(_HTTP_PROGRAM), str(job)],
                          cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"everything_http.py failed ({proc.returncode}): {proc.stderr[-2000:]}")
    results: list[dict[str, Any]] = json.loads(proc.stdout)
    return results
