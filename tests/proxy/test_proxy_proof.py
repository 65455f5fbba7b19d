"""A proxy transcript is proof: a real run verifies, and each tampered copy is rejected on
the link it breaks (an answer swapped between two requests, a result altered, an isError
flipped, an answer's id changed, a denied call passed off as run, the host sent another answer
than the one recorded). The policy's denial
reaches the host as a tool error naming the rule, and nothing is sent upstream."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as t
import pytest
from mcp.client import Client

from toolrelay.verify import load_run
from toolrelay.verify import verify as check
from toolrelay.verify.explain import explain
from toolrelay.view.build import build_trace
from toolrelay.view.rows import describe

from .proxy_helpers import (
    ECHO,
    events,
    files_entry,
    script_entry,
    stdio_proxy,
    verify,
    verify_tampered,
    write_config,
)

POLICY = {"rules": [{"server": "fs", "tool": "read_text_file", "arguments": {"/path": "**/secret*"},
                     "decision": "deny", "reason": "no secrets"}]}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("proof")
    (folder / "a.txt").write_text("alpha\n", encoding="utf-8")
    (folder / "secret.txt").write_text("hush\n", encoding="utf-8")
    config = write_config(folder, {"fs": files_entry(folder), "echo": script_entry(ECHO)})
    policy = folder / "policy.json"
    policy.write_text(json.dumps(POLICY), encoding="utf-8")
    transcript = folder / "proxy.jsonl"

    async def host() -> dict[str, Any]:
        async with Client(stdio_proxy(config, transcript, "--policy", str(policy)), mode="legacy") as client:
            first = await client.call_tool("echo__echo", {"text": "one"})
            second = await client.call_tool("echo__echo", {"text": "two"})
            failed = await client.call_tool("fs__read_text_file", {"path": str(folder / "nope.txt")})
            denied = await client.call_tool("fs__read_text_file", {"path": str(folder / "secret.txt")})
            return {"texts": [_text(first), _text(second)], "failed": failed.is_error,
                    "denied": (denied.is_error, _text(denied))}

    return transcript, anyio.run(host)


def _text(result: t.CallToolResult) -> str:
    block = result.content[0]
    return block.text if isinstance(block, t.TextContent) else ""


def test_the_run_verifies_and_the_denial_names_the_rule(recorded: tuple[Path, dict[str, Any]]) -> None:
    transcript, found = recorded
    assert found["texts"] == ["one", "two"]
    assert found["failed"] is True
    is_error, text = found["denied"]
    assert is_error is True
    assert 'denied by policy rule #1 of' in text and '"no secrets"' in text
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "denied: denied by policy rule #1" in checked.stdout
    sent = [e for e in events(transcript) if e["kind"] == "mcp_request" and e.get("method") == "tools/call"]
    assert len(sent) == 3  # the denied call never went upstream


def _answers(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in lines if e["kind"] == "proxy_host" and e["direction"] == "out"]


def _swap(lines: list[dict[str, Any]]) -> None:
    first, second = _answers(lines)[:2]
    first, second = first["message"], second["message"]
    first["result"], second["result"] = second["result"], first["result"]


def _alter(lines: list[dict[str, Any]]) -> None:
    _answers(lines)[0]["message"]["result"]["content"][0]["text"] = "ONE"


def _flip(lines: list[dict[str, Any]]) -> None:
    _answers(lines)[2]["message"]["result"]["isError"] = False


def _renumber(lines: list[dict[str, Any]]) -> None:
    _answers(lines)[1]["message"]["id"] = 999


def _run_denied(lines: list[dict[str, Any]]) -> None:
    _answers(lines)[3]["message"]["result"] = {"content": [{"type": "text", "text": "hush\n"}]}


def _sent_otherwise(lines: list[dict[str, Any]]) -> None:
    first = _answers(lines)[0]["message"]["id"]
    sent = next(e for e in lines if e["kind"] == "proxy_wire" and e["message"].get("id") == first
                and "result" in e["message"])
    sent["message"]["result"]["content"][0]["text"] = "ONE"


TAMPERED: dict[str, tuple[Callable[[list[dict[str, Any]]], None], str]] = {
    "answer swapped": (_swap, "the host's result differs from the upstream result it answers"),
    "result altered": (_alter, "the host's result differs from the upstream result it answers"),
    "isError flipped": (_flip, "isError True upstream, False to the host"),
    "answer id changed": (_renumber, "answered with id 999"),
    "denied call shown as run": (_run_denied, "but the host's answer is not a tool error naming it"),
    "another answer sent": (_sent_otherwise, "no message sent to the host on the wire is this answer"),
}


@pytest.mark.parametrize("case", list(TAMPERED))
def test_a_tampered_copy_is_rejected(
    recorded: tuple[Path, dict[str, Any]], tmp_path: Path, case: str,
) -> None:
    transcript, _ = recorded
    tamper, said = TAMPERED[case]
    checked = verify_tampered(transcript, tamper, tmp_path)
    assert checked.returncode == 1, checked.stdout
    assert "BROKEN link" in checked.stdout and said in checked.stdout


def test_explain_and_view_draw_both_legs(recorded: tuple[Path, dict[str, Any]]) -> None:
    transcript, _ = recorded
    run = load_run(transcript)
    text = explain(run, check(run))
    assert "host → proxy   tools/call echo__echo" in text
    assert "proxy → echo   tools/call echo · connection 1 · upstream id" in text
    assert "decision       denied: denied by policy rule #1" in text
    recorded_events = events(transcript)
    trace = build_trace(recorded_events, check(run))
    assert [lane.title for lane in trace.lanes][:2] == ["Host", "Proxy"]
    rows = [describe(event, 0.0) for event in recorded_events]
    host = [(row.source, row.target, row.label) for row in rows if row.kind == "proxy_host"]
    assert host[:2] == [("user", "app", "host: tools/call echo__echo"), ("app", "user", "to host: result")]
    routes = [row.label for row in rows if row.kind == "proxy_route"]
    assert routes[0].startswith("echo__echo → forwarded echo#1 id ")
    assert routes[-1] == "fs__read_text_file → denied"
