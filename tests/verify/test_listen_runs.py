"""``subscriptions/listen`` (MCP 2026-07-28) in a real scripted run against the official
SDK's server: its tool list changes during a call and the next turn sees the new tool; the
``--resource`` URI is asked in the listen filter (no ``resources/subscribe``) and its
update is a notice; the run verifies, with every listen request ended by its cancellation;
``view`` draws the listen rows on the server's lane. Tampered copies fail on correlation,
saying what is wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import PYTHON
from testkit.servers import SERVERS
from toolrelay.view.build import build_trace

from .helpers import Event, read_events, run_cli, tampered, verdict_of

SCRIPT = {"turns": [
    {"calls": [{"name": "ls__grow", "arguments": {}}]},
    {"calls": [{"name": "ls__extra", "arguments": {}}, {"name": "ls__touch", "arguments": {}}]},
    {"message": "Done."},
]}


@pytest.fixture(scope="module")
def listened_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("listened")
    server = {"command": PYTHON, "args": [str(SERVERS / "sdk_listen_server.py"), "stdio"]}
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": {"ls": server}}), encoding="utf-8")
    (folder / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    proc = run_cli("run", "grow", "--config", "mcp.json", "--model", "offline", "--script", "script.json",
                   "--resource", "note://daily", "--yes", "--transcript", "run.jsonl", cwd=folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return folder / "run.jsonl", proc.stderr


def of(events: list[Event], method: str) -> list[Event]:
    return [e for e in events if e.get("method") == method]


def test_the_next_turn_sees_the_new_tool_and_the_update_is_told(listened_run: tuple[Path, str]) -> None:
    path, said = listened_run
    assert "4 tool(s) from 1 server(s) (tools/list_changed from ls)" in said
    assert "call ls__extra → ls/extra" in said and "· ok" in said
    assert "server ls: resource note://daily was updated" in said
    events = read_events(path)
    assert not of(events, "resources/subscribe")
    listens = of(events, "subscriptions/listen")
    assert listens[-1]["message"]["params"]["notifications"] == {
        "toolsListChanged": True, "resourcesListChanged": True, "resourceSubscriptions": ["note://daily"]}
    cancelled = [e["message"]["params"]["requestId"] for e in of(events, "notifications/cancelled")]
    assert cancelled == [e["mcp_id"] for e in listens]  # replaced, then closed at the end
    changed = of(events, "notifications/tools/list_changed")[0]
    assert changed["call_id"] is None  # the server's, though it came during grow's call


def test_the_run_verifies_with_its_listen_requests_accounted_for(listened_run: tuple[Path, str]) -> None:
    proc = run_cli("verify", str(listened_run[0]), "--all")
    assert proc.returncode == 0, proc.stdout
    assert ("ls (connection 1): 2 subscriptions/listen request(s), 2 acknowledged, 2 notification(s) heard "
            "on them, each ended by its cancellation, its answer or its server's exit") in proc.stdout


def test_view_draws_listening_on_the_servers_lane(listened_run: tuple[Path, str]) -> None:
    trace = build_trace(read_events(listened_run[0]), None, source="run.jsonl")
    rows = [r for r in trace.rows() if r.label in ("subscriptions/listen", "listening")]
    asked, acknowledged = rows[-2:]
    assert (asked.label, asked.detail) == ("subscriptions/listen",
                                           "asks: tool list, resource list, updates of note://daily")
    assert acknowledged.label == "listening"
    assert acknowledged.detail.endswith(" acknowledged: tool list, resource list, updates of note://daily")
    assert all(r.call_id is None and "ls" in (r.source + r.target) for r in rows)


def drop_the_final_cancellation(events: list[Event]) -> None:
    events.remove(of(events, "notifications/cancelled")[-1])
    for seq, event in enumerate(events, 1):
        event["seq"] = seq


def point_the_acknowledgement_elsewhere(events: list[Event]) -> None:
    meta = of(events, "notifications/subscriptions/acknowledged")[0]["message"]["params"]["_meta"]
    meta["io.modelcontextprotocol/subscriptionId"] = 99


def put_the_tool_change_inside_a_call(events: list[Event]) -> None:
    of(events, "notifications/tools/list_changed")[0]["call_id"] = "call_offline_0001"


@pytest.mark.parametrize(("change", "said"), [
    (drop_the_final_cancellation, "was dropped while the connection went on: neither answered nor cancelled"),
    (point_the_acknowledgement_elsewhere,
     "notifications/subscriptions/acknowledged from ls names subscription 99, which no subscriptions/listen "
     "request of its connection opened"),
    (put_the_tool_change_inside_a_call,
     "is recorded as part of call call_offline_0001: it belongs to the server, not to a call"),
])
def test_a_tampered_copy_breaks_correlation(listened_run: tuple[Path, str], tmp_path: Path, change: Any,
                                            said: str) -> None:
    copy = tampered(listened_run[0], tmp_path / "t.jsonl", change)
    messages = [f.message for f in verdict_of(copy).findings if not f.ok]
    assert any(said in message for message in messages), messages
