"""Shared set-up of the proxy tests: a config of real upstream servers, the proxy as a
host starts it (stdio) or as a Streamable HTTP process, and its transcript verified
(the fixtures are in conftest.py)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters

from conftest import PYTHON, REPO
from testkit.transcripts import transcript_events
from toolrelay.cli.verify_cmd import report
from toolrelay.verify import load_run
from toolrelay.verify import verify as check

HERE = Path(__file__).resolve().parent
ECHO = REPO / "tests" / "testkit" / "servers" / "minimal_echo_server.py"
WOBBLY = HERE / "wobbly_server.py"


def write_config(folder: Path, servers: dict[str, Any]) -> Path:
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def files_entry(root: Path) -> dict[str, Any]:
    return {"command": PYTHON, "args": ["-m", "toolrelay", "files", str(root)]}


def script_entry(script: Path, *args: str) -> dict[str, Any]:
    return {"command": PYTHON, "args": [str(script), *args], "toolrelay": {"shutdownGrace": 0.2}}


def proxy_args(config: Path, transcript: Path, *more: str) -> list[str]:
    return ["-m", "toolrelay", "proxy", "--config", str(config), "--transcript", str(transcript),
            "--pins", "off", *more]


def stdio_proxy(config: Path, transcript: Path, *more: str) -> StdioServerParameters:
    return StdioServerParameters(command=PYTHON, args=proxy_args(config, transcript, *more))


@contextmanager
def http_proxy(config: Path, transcript: Path, *more: str) -> Iterator[str]:
    """``toolrelay proxy --http 0`` as a subprocess; its URL; stopped with SIGINT."""
    command = [PYTHON, *proxy_args(config, transcript, "--http", "0", *more)]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if found := re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line):
                break
        else:
            raise AssertionError(f"toolrelay proxy --http printed no URL: {''.join(seen)}")
        threading.Thread(target=proc.stderr.read, daemon=True).start()  # drained: it must never fill
        yield found.group(1)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


@dataclass
class Checked:
    returncode: int
    stdout: str


def verify(path: Path, *more: str) -> Checked:
    """``toolrelay verify PATH`` (in this process: its report and exit code)."""
    verdict = check(load_run(path))
    return Checked(0 if verdict.ok else 1, report(verdict, every="--all" in more))


def events(path: Path) -> list[dict[str, Any]]:
    """The transcript's events, each line rebuilt whole (format 2 writes changes and references)."""
    return transcript_events(path)


Tamper = Callable[[list[dict[str, Any]]], None]
"""Changes a transcript's events in place, as a forger would."""


def verify_tampered(transcript: Path, tamper: Tamper, folder: Path, *more: str) -> Checked:
    """``toolrelay verify`` of a copy of ``transcript`` (written whole into ``folder``) that
    ``tamper`` changed."""
    lines = events(transcript)  # fresh copies: the tamper changes nothing the caller holds
    tamper(lines)
    copied = folder / "tampered.jsonl"
    copied.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return verify(copied, *more)


def broken_as(checked: Checked, said: str) -> None:
    """``toolrelay verify`` (of a tampered copy) exited 1 and said ``said``."""
    assert checked.returncode == 1, checked.stdout
    assert said in checked.stdout, checked.stdout
