"""A 2026-07-28 host gets an upstream's progress and log messages for its call, on that
request's own stream (stdio: before the response; HTTP: an SSE response whose last event is
the answer), and only what its request asked for: progress with its ``progressToken``, log
messages at its ``io.modelcontextprotocol/logLevel`` and above, none without one. A call
with nothing to report is answered with plain JSON. Each transcript verifies; a copy in
which a log message reached a request that asked for none is rejected."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as t
import pytest
from mcp.client import Client

from .proxy_helpers import WOBBLY, events, http_proxy, script_entry, stdio_proxy, verify, verify_tampered
from .proxy_helpers import write_config as config_of

MODERN = "2026-07-28"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json",
           "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "wob__report"}


@pytest.fixture
def wobbly(tmp_path: Path) -> Path:
    return config_of(tmp_path, {"wob": script_entry(WOBBLY)})


async def _report(server: Any, level: t.LoggingLevel | None) -> tuple[list[Any], list[str], str]:
    progress: list[tuple[float, float | None, str | None]] = []
    logged: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def on_log(params: t.LoggingMessageNotificationParams) -> None:
        logged.append(str(params.data))

    async with Client(server, mode=MODERN, logging_callback=on_log, log_level=level) as client:
        with anyio.fail_after(30):
            result = await client.call_tool("wob__report", {"steps": 3}, progress_callback=on_progress)
    block = result.content[0]
    return progress, logged, block.text if isinstance(block, t.TextContent) else ""


def _run(transport: str, config: Path, transcript: Path, level: t.LoggingLevel | None) -> Any:
    if transport == "stdio":
        return anyio.run(_report, stdio_proxy(config, transcript), level)
    with http_proxy(config, transcript) as url:
        return anyio.run(_report, url, level)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_2026_host_gets_its_calls_progress_and_log_messages(
    wobbly: Path, tmp_path: Path, transport: str,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    progress, logged, text = _run(transport, wobbly, transcript, "info")
    assert text == "reported 3"
    assert progress == [(1, 3, "1"), (2, 3, "2"), (3, 3, "3")]
    assert logged == ["info 1", "info 2", "info 3"]  # the debug ones are below the request's level
    recorded = events(transcript)
    relayed = [e for e in recorded if e["kind"] == "proxy_relayed"]
    assert [e["method"] for e in relayed] == ["notifications/progress", "notifications/message"] * 3
    wire = [e["message"] for e in recorded if e["kind"] == "proxy_wire" and e["direction"] == "out"]
    answered = next(n for n, m in enumerate(wire) if "reported 3" in json.dumps(m.get("result")))
    before = [m.get("method") for m in wire[:answered]]
    assert before[-6:] == ["notifications/progress", "notifications/message"] * 3  # the news first, in order
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "3 progress notifications passed on with the host's token, 3 log messages" in checked.stdout


def _logs_unasked(lines: list[dict[str, Any]]) -> None:
    """The host's request as if it had asked for no log messages."""
    for line in lines:
        if line["kind"] == "proxy_host" and line["direction"] == "in":
            line["message"]["params"]["_meta"].pop(LOG_LEVEL, None)


def test_a_log_message_to_a_2026_request_that_asked_for_none_is_rejected(
    wobbly: Path, tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    _run("stdio", wobbly, transcript, "info")
    checked = verify_tampered(transcript, _logs_unasked, tmp_path)
    assert checked.returncode == 1, checked.stdout
    assert "BROKEN link" in checked.stdout
    assert f"which asked for none (no {LOG_LEVEL})" in checked.stdout, checked.stdout


def test_a_2026_host_without_a_log_level_gets_no_log_messages(wobbly: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "proxy.jsonl"
    progress, logged, _ = _run("stdio", wobbly, transcript, None)
    assert len(progress) == 3 and logged == []
    assert not [e for e in events(transcript) if e["kind"] == "proxy_relayed" and e["method"] != (
        "notifications/progress")]
    assert verify(transcript).returncode == 0


def _meta(**more: Any) -> dict[str, Any]:
    return {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}, **more}


def _post(url: str, request_id: int, meta: dict[str, Any]) -> httpx2.Response:
    call = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "wob__report", "arguments": {"steps": 2}, "_meta": meta}}
    with httpx2.Client(timeout=30) as client:
        return client.post(url, json=call, headers=HEADERS)


def _sse_messages(body: str) -> list[dict[str, Any]]:
    return [json.loads(line[len("data: "):]) for line in body.splitlines() if line.startswith("data: ")]


def test_a_2026_http_answer_is_json_without_news_and_sse_with_it(wobbly: Path, tmp_path: Path) -> None:
    with http_proxy(wobbly, tmp_path / "proxy.jsonl") as url:
        plain = _post(url, 1, _meta())  # asks for neither progress nor log messages
        streamed = _post(url, 2, _meta(progressToken="mine", **{LOG_LEVEL: "debug"}))
    assert plain.headers["content-type"] == "application/json"
    assert plain.json()["result"]["content"] == [{"type": "text", "text": "reported 2"}]
    assert streamed.headers["content-type"] == "text/event-stream"
    messages = _sse_messages(streamed.text)
    step = ["notifications/progress", "notifications/message", "notifications/message"]  # debug and info
    assert [m.get("method") for m in messages] == [*step, *step, None]  # the answer last
    tokens = {m["params"]["progressToken"] for m in messages if m.get("method") == "notifications/progress"}
    assert tokens == {"mine"}
    assert messages[-1]["id"] == 2 and messages[-1]["result"]["content"][0]["text"] == "reported 2"
