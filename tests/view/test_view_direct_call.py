"""``toolrelay view`` of a ``toolrelay call --transcript`` transcript: a layout of its own.

Real calls, each recorded by the real CLI (the built-in file server over stdio, a policy
file): one that ran, one the policy refused, one whose tool the offer withheld. The page
shows the servers' setup, then one section with the call's frame, opened by the command
(``direct_call``) and closed by how it ended (``direct_call_end``), holding its parse,
route, decision and MCP exchange; then the shutdown. No model lane: no model was asked.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from toolrelay.verify import load_run, verify
from toolrelay.view.build import build_trace
from toolrelay.view.model import CallGroup, Trace

from .helpers import ARTIFACTS, TOOLRELAY, open_trace, read_events, screenshot, view, write_notes

POLICY = {"rules": [
    {"tool": "list_*", "decision": "deny", "reason": "no browsing"},
    {"arguments": {"/path": "*secret*"}, "decision": "deny", "reason": "not that one"},
    {"decision": "allow"},
]}
CALLS = {
    "ran": ("fs__read_text_file", {"path": "notes.txt", "head": 2}),
    "refused": ("fs__read_text_file", {"path": "secret.txt"}),
    "withheld": ("fs__list_directory", {"path": "."}),
}


@pytest.fixture(scope="module")
def called(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each call of ``CALLS`` made by ``toolrelay call --transcript``: name → transcript."""
    folder = tmp_path_factory.mktemp("direct-calls")
    write_notes(folder)
    (folder / "secret.txt").write_text("SECRET\n", encoding="utf-8")
    (folder / "policy.json").write_text(json.dumps(POLICY), encoding="utf-8")
    made = {}
    for name, (alias, arguments) in CALLS.items():
        path = folder / f"{name}.jsonl"
        subprocess.run([*TOOLRELAY, "call", alias, json.dumps(arguments), "--root", str(folder), "--policy",
                        "policy.json", "--transcript", path.name], capture_output=True, text=True,
                       timeout=60, cwd=folder, stdin=subprocess.DEVNULL)
        assert verify(load_run(path)).ok, name
        made[name] = path
    return made


def _trace(path: Path) -> tuple[Trace, list[dict[str, Any]]]:
    events = read_events(path)
    return build_trace(events, verify(load_run(path)), source=path.name), events


def _frame(trace: Trace) -> CallGroup:
    (section,) = [group for group in trace.groups if group.kind == "call"]
    (frame,) = section.calls()
    return frame


def test_the_call_that_ran_is_one_frame_from_the_command_to_its_end(called: dict[str, Path]) -> None:
    trace, events = _trace(called["ran"])
    assert [group.title for group in trace.groups] == [
        "Setup · connect, discover, declare", "Call · toolrelay call, no model", "Shutdown"]
    assert [lane.key for lane in trace.lanes] == ["user", "app", "server:fs"]  # no model lane
    (asked,) = [e for e in events if e["kind"] == "direct_call"]
    frame = _frame(trace)
    assert frame.call_id == asked["call_id"]
    kinds = [row.kind for row in frame.rows]
    assert kinds[:4] == ["direct_call", "call_parsed", "call_routed", "policy_decision"]
    assert kinds[-2:] == ["call_outcome", "direct_call_end"]
    exchange = frame.rows[4:-2]  # its tools/call rounds (the server asks for the roots)
    assert {row.kind for row in exchange} == {"mcp_request", "mcp_response"}
    assert exchange[0].kind == "mcp_request"
    assert [row.seq for row in exchange] == [e["seq"] for e in events if e.get("call_id") == frame.call_id
                                             and e["kind"] in ("mcp_request", "mcp_response")]
    first, last = frame.rows[0], frame.rows[-1]
    assert (first.source, first.target, first.label) == ("user", "app", "toolrelay call fs__read_text_file")
    assert first.detail == 'arguments (JSON text, as given): {"path": "notes.txt", "head": 2}'
    assert (last.source, last.target, last.label, last.state) == ("app", "user", "call ended: ok", "ok")
    sent = [e for e in events if e["kind"] == "mcp_request" and e["method"] == "tools/call"][-1]
    assert (frame.alias, frame.target, frame.mcp_id, frame.status) == (
        "fs__read_text_file", "fs / read_text_file", sent["mcp_id"], "ok")
    assert len(trace.rows()) == len(events)  # nothing recorded is left out
    assert trace.run.task == 'toolrelay call fs__read_text_file {"path": "notes.txt", "head": 2}'
    assert (trace.run.status, trace.run.reason, trace.run.turns) == ("ok", "one call, no model", 0)
    assert trace.title.startswith("toolrelay trace · toolrelay call fs__read_text_file")


def test_a_refused_call_shows_its_decision_and_no_exchange(called: dict[str, Path]) -> None:
    trace, _ = _trace(called["refused"])
    frame = _frame(trace)
    assert [row.kind for row in frame.rows] == [
        "direct_call", "call_parsed", "call_routed", "policy_decision", "call_outcome", "direct_call_end"]
    decision = frame.rows[3]
    assert (decision.label, decision.state) == ("refused by policy rule #2 of policy.json", "failed")
    assert (frame.status, frame.state, frame.mcp_id) == ("refused by policy", "failed", None)
    assert frame.rows[-1].label == "call ended: refused"
    assert (trace.run.status, trace.run.reason) == (
        "refused by policy", 'denied by policy rule #2 of policy.json: "not that one"')


def test_a_call_the_offer_withheld_is_a_frame_of_its_command_and_why(called: dict[str, Path]) -> None:
    trace, _ = _trace(called["withheld"])
    frame = _frame(trace)
    assert [row.kind for row in frame.rows] == ["direct_call", "direct_call_end"]
    said = ('fs__list_directory: server fs: tool list_directory is not offered: denied by policy rule #1 '
            'of policy.json: "no browsing"')
    assert (frame.alias, frame.status, frame.state) == ("fs__list_directory", "not offered", "failed")
    assert (frame.rows[-1].label, frame.rows[-1].detail) == ("call ended: not offered", said)
    assert (trace.run.status, trace.run.reason) == ("not offered", said)


def test_the_page_draws_the_calls_section(browser: Any, called: dict[str, Path], tmp_path: Path) -> None:
    html = tmp_path / "call.html"
    proc = view(str(called["refused"]), "-o", str(html))
    assert proc.returncode == 0, proc.stderr
    opened = open_trace(browser, html)
    page = opened.page
    assert page.locator(".lanes .lane-title").all_text_contents() == ["User", "App", "fs"]
    assert page.locator(".group-title").all_text_contents() == [
        "Setup · connect, discover, declare", "Call · toolrelay call, no model", "Shutdown"]
    frame = page.locator(".g-call .call")
    assert frame.count() == 1
    assert frame.locator(".call-head .outcome").text_content() == "refused by policy"
    assert page.locator(".facts .status dd").text_content() == "refused by policy"
    screenshot(page, ARTIFACTS / "trace-direct-call.png")
    assert opened.foreign_requests() == [] and opened.errors == []
