"""What passes through a call besides its answer, with the SDK (or a raw client) as the host:
an upstream's progress reaches the host with the host's own token, its log messages at
the level the host set, on stdio and on the call's HTTP stream; a host's
``notifications/cancelled`` cancels the upstream request; an HTTP host that drops its
connection mid-call gets the upstream call cancelled (not only when its session ends).
Each transcript verifies."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as t
import pytest
from mcp.client import Client

from conftest import PYTHON
from toolrelay.verify import load_run
from toolrelay.verify import verify as check
from toolrelay.verify.explain import explain
from toolrelay.view.rows import describe

from .proxy_helpers import (
    WOBBLY,
    Tamper,
    events,
    http_proxy,
    proxy_args,
    script_entry,
    stdio_proxy,
    verify,
    verify_tampered,
)
from .proxy_helpers import write_config as config_of

PROGRESS = "notifications/progress"


@pytest.fixture
def wobbly(tmp_path: Path) -> tuple[Path, Path]:
    """A config of the wobbly server (its cancellations noted in a log), and that log."""
    log = tmp_path / "wobbly.log"
    return config_of(tmp_path, {"wob": script_entry(WOBBLY, "--log", str(log))}), log


async def _report(server: Any) -> tuple[list[tuple[float, float | None, str | None]], list[str], str]:
    progress: list[tuple[float, float | None, str | None]] = []
    logged: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def on_log(params: t.LoggingMessageNotificationParams) -> None:
        logged.append(str(params.data))

    async with Client(server, mode="legacy", logging_callback=on_log) as client:
        await client.set_logging_level("info")
        with anyio.fail_after(30):
            result = await client.call_tool("wob__report", {"steps": 3}, progress_callback=on_progress)
    block = result.content[0]
    return progress, logged, block.text if isinstance(block, t.TextContent) else ""


def _check_report(found: tuple[list[Any], list[str], str], transcript: Path) -> None:
    progress, logged, text = found
    assert text == "reported 3"
    assert progress == [(1, 3, "1"), (2, 3, "2"), (3, 3, "3")]
    assert logged == ["info 1", "info 2", "info 3"]  # the debug ones are below the host's level
    relayed = [e for e in events(transcript) if e["kind"] == "proxy_relayed"]
    tokens = {(e["upstream_token"], e["host_token"]) for e in relayed if e["method"] == PROGRESS}
    assert len(tokens) == 1  # one call: one upstream token, mapped to the host's own
    (upstream, host), = tokens
    assert upstream.startswith("h1-") and upstream != host
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "3 progress notifications passed on with the host's token, 3 log messages" in checked.stdout


DEPRECATED_LOGGING = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
"""The SDK warns that ``logging/setLevel`` is gone in 2026-07-28: these hosts speak 2025-11-25."""


def _rejected(transcript: Path, tamper: Tamper, said: str, folder: Path) -> None:
    """A copy of ``transcript`` changed by ``tamper`` is rejected, saying ``said``."""
    checked = verify_tampered(transcript, tamper, folder)
    assert checked.returncode == 1, checked.stdout
    assert "BROKEN link" in checked.stdout and said in checked.stdout, checked.stdout


def _progress_of(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in lines if e["kind"] == "proxy_relayed" and e["method"] == PROGRESS]


def _host_token_changed(lines: list[dict[str, Any]]) -> None:
    _progress_of(lines)[1]["host"]["progressToken"] = "someone else's"


def _progress_altered(lines: list[dict[str, Any]]) -> None:
    _progress_of(lines)[2]["host"]["progress"] = 99


def _upstream_token_changed(lines: list[dict[str, Any]]) -> None:
    relayed = _progress_of(lines)[0]
    relayed["upstream_token"] = relayed["upstream"]["params"]["progressToken"] = "h9-1"


@DEPRECATED_LOGGING
def test_progress_and_log_messages_reach_a_stdio_host(wobbly: tuple[Path, Path], tmp_path: Path) -> None:
    transcript = tmp_path / "proxy.jsonl"
    _check_report(anyio.run(_report, stdio_proxy(wobbly[0], transcript)), transcript)
    explained = explain(load_run(transcript), check(load_run(transcript)))
    assert "wob → host  notifications/progress · token 'h1-1' → the host's" in explained
    rows = [describe(event, 0.0) for event in events(transcript)]
    drawn = [(row.source, row.target, row.label) for row in rows if row.kind == "proxy_relayed"]
    assert drawn[:2] == [("app", "user", "to host: notifications/progress (from wob)"),
                         ("app", "user", "to host: notifications/message (from wob)")]
    _rejected(transcript, _host_token_changed, "without the host's own token, or altered", tmp_path)
    _rejected(transcript, _progress_altered, "without the host's own token, or altered", tmp_path)
    _rejected(transcript, _upstream_token_changed, "that no upstream request of this call was sent with",
              tmp_path)


@DEPRECATED_LOGGING
def test_progress_and_log_messages_reach_an_http_host_on_the_calls_stream(
    wobbly: tuple[Path, Path], tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    with http_proxy(wobbly[0], transcript) as url:
        found = anyio.run(_report, url)
    _check_report(found, transcript)
    wire = [e for e in events(transcript) if e["kind"] == "proxy_wire"]
    assert {e["host"] for e in wire} == {1}  # the HTTP host's leg, message by message


def _initialize(version: str = "2025-11-25") -> list[dict[str, Any]]:
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]


WAIT = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "wob__wait", "arguments": {
    "seconds": 30}}}


def _sent_upstream(transcript: Path) -> Any:
    deadline = time.monotonic() + 15
    while True:
        found = [e for e in _lines(transcript) if e["kind"] == "mcp_request" and e.get("call_id")]
        if found:
            return found[0]["mcp_id"]
        assert time.monotonic() < deadline, "the call never went upstream"
        time.sleep(0.05)


def _cancelled_upstream(log: Path, mcp_id: Any, within: float = 15) -> None:
    deadline = time.monotonic() + within
    while f"cancelled {mcp_id}" not in (log.read_text(encoding="utf-8") if log.exists() else ""):
        assert time.monotonic() < deadline, "the upstream was not told the call was cancelled"
        time.sleep(0.05)


def test_a_hosts_cancellation_cancels_the_upstream_request(wobbly: tuple[Path, Path], tmp_path: Path) -> None:
    config, log = wobbly
    transcript = tmp_path / "proxy.jsonl"
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": 7, "reason": "the user stopped it"}}
    with subprocess.Popen([PYTHON, *proxy_args(config, transcript)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(line) + "\n" for line in [*_initialize(), WAIT]))
        proc.stdin.flush()
        proc.stdout.readline()
        upstream = _sent_upstream(transcript)
        proc.stdin.write(json.dumps(cancel) + "\n")
        proc.stdin.flush()
        _cancelled_upstream(log, upstream)
        proc.stdin.close()
        assert proc.wait(20) == 0
        assert proc.stdout.read() == ""  # a cancelled request is not answered
    recorded = events(transcript)
    assert [e["decision"] for e in recorded if e["kind"] == "proxy_route"] == ["cancelled"]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "cancelled by the host" in checked.stdout and f"cancelled upstream too (wob id {upstream!r})" in \
        checked.stdout
    _rejected(transcript, _not_cancelled_upstream,
              f"the upstream request {upstream!r} on wob was not cancelled", tmp_path)
    _rejected(transcript, _answered_anyway, "cancelled, yet answered", tmp_path)


def _not_cancelled_upstream(lines: list[dict[str, Any]]) -> None:
    lines[:] = [e for e in lines if not (e["kind"] == "mcp_notification" and e["direction"] == "out"
                                          and e["method"] == "notifications/cancelled")]


def _answered_anyway(lines: list[dict[str, Any]]) -> None:
    """A cancelled call passed off as a success: an answer recorded for it."""
    asked = next(e for e in lines if e["kind"] == "proxy_host")
    result = {"content": [{"type": "text", "text": "waited"}]}
    answer = {**asked, "seq": lines[-1]["seq"] + 1, "direction": "out",
              "message": {"jsonrpc": "2.0", "id": 7, "result": result}}
    lines.append(answer)


def test_an_http_host_that_drops_its_connection_mid_call_gets_it_cancelled_upstream(
    wobbly: tuple[Path, Path], tmp_path: Path,
) -> None:
    config, log = wobbly
    transcript = tmp_path / "proxy.jsonl"
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    with http_proxy(config, transcript) as url, httpx2.Client(timeout=10) as client:
        opened = client.post(url, json=_initialize()[0], headers=headers)
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        client.post(url, json=_initialize()[1], headers={**headers, **session})
        with client.stream("POST", url, json=WAIT, headers={**headers, **session}) as answer:
            assert answer.headers["content-type"].startswith("text/event-stream")
            upstream = _sent_upstream(transcript)
        # the connection is gone; the session is not: the call is cancelled after the grace
        started = time.monotonic()
        _cancelled_upstream(log, upstream)
        assert time.monotonic() - started < 10
        echo = {"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                "params": {"name": "wob__echo", "arguments": {"text": "the session goes on"}}}
        still = client.post(url, json=echo, headers={**headers, **session})
        assert "the session goes on" in still.text
    recorded = events(transcript)
    assert [e["decision"] for e in recorded if e["kind"] == "proxy_route"] == ["cancelled", "forwarded"]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert f"cancelled upstream too (wob id {upstream!r})" in checked.stdout


def test_a_2026_host_that_closes_its_request_gets_the_call_cancelled_upstream(
    wobbly: tuple[Path, Path], tmp_path: Path,
) -> None:
    config, log = wobbly
    transcript = tmp_path / "proxy.jsonl"
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}
    call = {**WAIT, "params": {**WAIT["params"], "_meta": meta}}
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json",
               "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "wob__wait"}
    with http_proxy(config, transcript) as url:
        with httpx2.Client(timeout=1) as client, pytest.raises(httpx2.ReadTimeout):
            client.post(url, json=call, headers=headers)  # and leaves: the revision's cancellation
        _cancelled_upstream(log, _sent_upstream(transcript))
    recorded = events(transcript)
    assert [e["decision"] for e in recorded if e["kind"] == "proxy_route"] == ["cancelled"]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout


def test_an_http_host_that_resumes_in_time_keeps_its_call(wobbly: tuple[Path, Path], tmp_path: Path) -> None:
    config, log = wobbly
    transcript = tmp_path / "proxy.jsonl"
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    wait = {**WAIT, "params": {"name": "wob__wait", "arguments": {"seconds": 4}}}  # past the 3 s grace
    with http_proxy(config, transcript) as url, httpx2.Client(timeout=10) as client:
        opened = client.post(url, json=_initialize()[0], headers=headers)
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        client.post(url, json=_initialize()[1], headers={**headers, **session})
        with client.stream("POST", url, json=wait, headers={**headers, **session}) as answer:
            primed = next(line for line in answer.iter_lines() if line.startswith("id: "))
        # the connection dropped; the host resumes the call's stream at once (SEP-1699)
        resume = {"accept": "text/event-stream", "last-event-id": primed[4:], **session}
        resumed = client.get(url, headers=resume)
        assert '"text":"waited"' in resumed.text
    assert "cancelled" not in (log.read_text(encoding="utf-8") if log.exists() else "")
    recorded = events(transcript)
    assert [e["decision"] for e in recorded if e["kind"] == "proxy_route"] == ["forwarded"]
    checked = verify(transcript)
    assert checked.returncode == 0, checked.stdout


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.endswith("}")]
