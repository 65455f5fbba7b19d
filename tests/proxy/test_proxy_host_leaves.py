"""A host that goes away while an upstream's ask waits on it, with real processes: a
2026-07-28 host that never retries its ``input_required`` call (``--input-wait``), and a
2025 host that leaves while the proxy's request to it is open (stdio: closes stdin;
HTTP: ends its session). Each time the upstream request is cancelled, the ask is
recorded ``host_left`` with the reason, the user is told why, and the transcript verifies."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import httpx2
import pytest

from conftest import PYTHON

from .proxy_helpers import (
    WOBBLY,
    broken_as,
    events,
    http_proxy,
    proxy_args,
    script_entry,
    verify,
    verify_tampered,
)
from .proxy_helpers import write_config as config_of

FORM = {"message": "Your favourite colour?", "requestedSchema": {
    "type": "object", "properties": {"colour": {"type": "string", "default": "blue"}}}}
ASK = {"name": "wob__ask", "arguments": {"method": "elicitation/create", "params": FORM}}
MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
               "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
    "clientInfo": {"name": "raw", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


@pytest.fixture
def wobbly(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "wobbly.log"
    return config_of(tmp_path, {"wob": script_entry(WOBBLY, "--log", str(log))}), log


def _start(config: Path, transcript: Path, *more: str) -> subprocess.Popen[str]:
    return subprocess.Popen([PYTHON, *proxy_args(config, transcript, *more)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _send(proc: subprocess.Popen[str], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()


def _read(out: IO[str] | None) -> dict[str, Any]:
    assert out is not None
    line = out.readline()
    assert line, "the proxy closed its stdout"
    found: dict[str, Any] = json.loads(line)
    return found


def _upstream_call_id(transcript: Path) -> Any:
    deadline = time.monotonic() + 15
    while True:
        found = [e for e in events(transcript) if e["kind"] == "mcp_request" and e.get("call_id")] \
            if transcript.exists() else []
        if found:
            return found[0]["mcp_id"]
        assert time.monotonic() < deadline, "the call never went upstream"
        time.sleep(0.05)


def _cancelled_upstream(log: Path, mcp_id: Any) -> None:
    deadline = time.monotonic() + 15
    while f"cancelled {mcp_id}" not in (log.read_text(encoding="utf-8") if log.exists() else ""):
        assert time.monotonic() < deadline, "the upstream was not told the call was cancelled"
        time.sleep(0.05)


def _stopped(proc: subprocess.Popen[str]) -> str:
    """Close the proxy's stdin (the host leaves); what it wrote on stderr."""
    assert proc.stdin is not None and proc.stderr is not None
    proc.stdin.close()
    proc.wait(30)
    said = proc.stderr.read()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    return said


def _last_round_completed(lines: list[dict[str, Any]]) -> None:
    """As if the host's call had been answered in full after all."""
    answer = [e for e in lines if e["kind"] == "proxy_host" and e["direction"] == "out"][-1]
    answer["message"]["result"] = {"content": [{"type": "text", "text": "done"}], "resultType": "complete"}


def test_a_2026_host_that_never_retries_gets_its_call_cancelled_upstream(
    wobbly: tuple[Path, Path], tmp_path: Path,
) -> None:
    config, log = wobbly
    transcript = tmp_path / "proxy.jsonl"
    proc = _start(config, transcript, "--input-wait", "0.5")
    try:
        first = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**ASK, "_meta": MODERN_META}}
        _send(proc, first)
        asked = _read(proc.stdout)["result"]
        assert asked["resultType"] == "input_required"
        assert [r["method"] for r in asked["inputRequests"].values()] == ["elicitation/create"]
        _cancelled_upstream(log, _upstream_call_id(transcript))  # no retry within 0.5 s
        late = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            **ASK, "_meta": MODERN_META, "requestState": asked["requestState"],
            "inputResponses": {key: {"action": "decline"} for key in asked["inputRequests"]}}}
        _send(proc, late)
        refused = _read(proc.stdout)["error"]
    finally:
        said = _stopped(proc)
    assert refused["code"] == -32602
    said_late = refused["message"]
    assert "its call was given up (no retry came within 0.5 s, the proxy's --input-wait)" in said_late
    assert "given up: no retry of its input_required answer came within 0.5 s (--input-wait); cancelled " \
           "upstream" in said
    recorded = events(transcript)
    routes = [(e["decision"], e["reason"]) for e in recorded if e["kind"] == "proxy_route"]
    assert routes == [("cancelled", "the host gave no answer: no retry of its input_required answer came "
                                    "within 0.5 s (--input-wait)")]
    assert [(e["outcome"], e["answered_by"]) for e in recorded if e["kind"] == "proxy_ask"] == [
        ("host_left", "host")]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "cancelled upstream too (wob id" in checked.stdout
    broken_as(verify_tampered(transcript, _last_round_completed, tmp_path),
              "recorded as never retrying, yet its call's last answer asks nothing of it")


def _left_ask(transcript: Path) -> dict[str, Any]:
    asks = [e for e in events(transcript) if e["kind"] == "proxy_ask"]
    assert [(e["method"], e["answered_by"], e["outcome"]) for e in asks] == [
        ("elicitation/create", "host", "host_left")]
    return asks[0]


def test_a_stdio_host_that_leaves_during_an_ask(wobbly: tuple[Path, Path], tmp_path: Path) -> None:
    config, log = wobbly
    transcript = tmp_path / "proxy.jsonl"
    proc = _start(config, transcript)
    try:
        _send(proc, INITIALIZE)
        assert _read(proc.stdout)["id"] == 1
        _send(proc, INITIALIZED)
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ASK})
        request = _read(proc.stdout)  # the proxy asks the host what the upstream asked
        assert request["method"] == "elicitation/create" and "id" in request
    finally:
        _stopped(proc)  # and the host leaves without an answer
    _cancelled_upstream(log, _upstream_call_id(transcript))
    assert _left_ask(transcript)["reason"].startswith("the host did not answer")
    assert [e["decision"] for e in events(transcript) if e["kind"] == "proxy_route"] == ["cancelled"]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout


HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def _sse(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if line.startswith("data:") and line[5:].strip():
            yield json.loads(line[5:])


def test_an_http_host_that_leaves_during_an_ask(wobbly: tuple[Path, Path], tmp_path: Path) -> None:
    config, log = wobbly
    transcript = tmp_path / "proxy.jsonl"
    with http_proxy(config, transcript) as url, httpx2.Client(timeout=15) as client:
        opened = client.post(url, json=INITIALIZE, headers=HEADERS)
        session = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"],
                   "mcp-protocol-version": "2025-11-25"}
        assert client.post(url, json=INITIALIZED, headers=session).status_code == 202
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ASK}
        with client.stream("POST", url, json=call, headers=session) as stream:
            request = next(m for m in _sse(stream.iter_lines()) if "method" in m)
            assert request["method"] == "elicitation/create"
            with httpx2.Client(timeout=15) as other:  # the host ends its session instead of answering
                assert other.delete(url, headers=session).status_code in (200, 204)
        _cancelled_upstream(log, _upstream_call_id(transcript))
    assert _left_ask(transcript)["reason"].startswith("the host did not answer")
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
