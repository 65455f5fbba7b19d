"""A host's own MCP tasks through ``toolrelay proxy`` (2025-11-25): a host that declares
``tasks`` is offered each tool's task support, its task-augmented ``tools/call`` is
created upstream, and it names the task by the proxy's id from then on; ``tasks/get``,
``tasks/result``, ``tasks/list``, ``tasks/cancel`` and the status notifications are
relayed with ids mapped, for the host that owns the task only; what the upstream asks
during a task reaches the host naming its task. The upstreams are real processes (two of
``task_upstream.py``, which both number their tasks ``task-1``, ...; server-everything's
``simulate-research-query``), the host speaks JSON-RPC judged by the SDK's 2025-11-25
types (``task_host.py``). A host that does not declare tasks, or speaks an older
revision, keeps being answered plainly. The transcripts verify; tampered copies do not.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as t
import pytest
from mcp.client import Client

from testkit import everything
from toolrelay.verify import load_run
from toolrelay.verify import verify as check
from toolrelay.verify.explain import explain
from toolrelay.view.rows import describe

from .proxy_helpers import (
    HERE,
    broken_as,
    events,
    http_proxy,
    script_entry,
    stdio_proxy,
    verify,
    verify_tampered,
    write_config,
)
from .task_host import HttpTaskHost, TaskHost

UPSTREAM = HERE / "task_upstream.py"
RELATED = "io.modelcontextprotocol/related-task"
TASK = {"ttl": 60000}


@pytest.fixture
def two(tmp_path: Path) -> Path:
    return write_config(tmp_path, {"a": script_entry(UPSTREAM, "A"), "b": script_entry(UPSTREAM, "B")})


async def _until(host: TaskHost, task_id: str, status: str) -> dict[str, Any]:
    for _ in range(50):
        state = await host.request("tasks/get", {"taskId": task_id})
        if state["status"] == status:
            return state
    raise AssertionError(f"task {task_id} never became {status}")


async def _two_tasks(config: Path, transcript: Path) -> dict[str, Any]:
    host = await TaskHost.start(config, transcript)
    try:
        seen: dict[str, Any] = {"capabilities": host.initialized["capabilities"]}
        tools = await host.request("tools/list")
        seen["execution"] = {tool["name"]: tool.get("execution") for tool in tools["tools"]}
        made_a = await host.request("tools/call", {"name": "a__count", "arguments": {"n": 2}, "task": TASK,
                                                   "_meta": {"progressToken": "mine-1"}})
        made_b = await host.request("tools/call", {"name": "b__count", "arguments": {"n": 1}, "task": TASK})
        a, b = made_a["task"]["taskId"], made_b["task"]["taskId"]
        seen["ids"] = (a, b)
        seen["listed_early"] = await host.request("tasks/list")
        await _until(host, a, "completed")
        await _until(host, b, "completed")
        seen["results"] = [await host.request("tasks/result", {"taskId": task}) for task in (a, b)]
        seen["unknown"] = await host.raw("tasks/get", {"taskId": "task-1"})  # the upstream's id means nothing
        seen["listed"] = await host.request("tasks/list")
        await asyncio.sleep(0.2)  # the last status notifications
        seen["statuses"] = [n["params"] for n in host.notifications
                            if n["method"] == "notifications/tasks/status"]
        seen["progress"] = [n["params"] for n in host.notifications
                            if n["method"] == "notifications/progress"]
        return seen
    finally:
        await host.close()


def test_two_servers_that_both_say_task_1_are_told_apart_by_the_proxys_task_ids(
    two: Path, tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    seen = asyncio.run(_two_tasks(two, transcript))
    assert seen["capabilities"]["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    assert seen["execution"]["a__count"] == {"taskSupport": "required"}  # as the server listed it
    assert seen["execution"]["b__ask"] == {"taskSupport": "optional"}
    a, b = seen["ids"]
    tasks = [e for e in events(transcript) if e["kind"] == "proxy_task"]
    assert [(t["server"], t["upstream_task_id"], t["task_id"]) for t in tasks] == [("a", "task-1", a),
                                                                                  ("b", "task-1", b)]
    assert a != b and "task-1" not in (a, b)
    texts = [result["content"][0]["text"] for result in seen["results"]]
    assert texts == ["counted 2 by A", "counted 1 by B"]  # each from its own server
    assert [result["_meta"][RELATED]["taskId"] for result in seen["results"]] == [a, b]
    not_found = "Failed to retrieve task: Task not found: task-1"
    assert seen["unknown"]["error"] == {"code": -32602, "message": not_found}
    assert {t["taskId"]: t["status"] for t in seen["listed_early"]["tasks"]} == {a: "working", b: "working"}
    assert {t["taskId"]: t["status"] for t in seen["listed"]["tasks"]} == {a: "completed", b: "completed"}
    assert {(s["taskId"], s["status"]) for s in seen["statuses"]} == {(a, "completed"), (b, "completed")}
    # the task's progress, after its tools/call was answered, with the host's own token (b's gave none)
    assert [(p["progressToken"], p["progress"]) for p in seen["progress"]] == [("mine-1", 1), ("mine-1", 2)]
    checked = verify(transcript)
    assert checked.returncode == 0, checked.stdout
    run = load_run(transcript)
    told = explain(run, check(run))
    assert f"{a} ↔ a task 'task-1'" in told and f"{b} ↔ b task 'task-1'" in told
    rows = [describe(event, 0.0).label for event in events(transcript)]
    assert f"task {a} ↔ a#1 task task-1" in rows and f"task {b} ↔ b#1 task task-1" in rows

    def swap_task(lines: list[dict[str, Any]]) -> None:  # the host's tasks/result of A, said to be B's
        asked = next(e for e in lines if e["kind"] == "proxy_host" and e["direction"] == "in"
                     and e["method"] == "tasks/result")
        asked["message"]["params"]["taskId"] = b

    broken_as(verify_tampered(transcript, swap_task, tmp_path),
              f"tasks/result of task '{b}': it is host None's task b/'task-1'")

    def other_server(lines: list[dict[str, Any]]) -> None:  # A's task recorded as standing for b's task-1
        next(e for e in lines if e["kind"] == "proxy_task")["server"] = "b"

    broken_as(verify_tampered(transcript, other_server, tmp_path),
              "not the task 'task-1' of this host's the upstream created")

    def changed_result(lines: list[dict[str, Any]]) -> None:
        answer = next(e for e in lines if e["kind"] == "proxy_host" and e["direction"] == "out"
                      and e["method"] == "tasks/result")
        answer["message"]["result"]["content"][0]["text"] = "counted 99 by A"

    broken_as(verify_tampered(transcript, changed_result, tmp_path),
              "the host's answer differs from the upstream answer it passes on")

    def status_elsewhere(lines: list[dict[str, Any]]) -> None:
        next(e for e in lines if e["kind"] == "proxy_task_status")["to_host"] = 2

    misdirected = verify_tampered(transcript, status_elsewhere, tmp_path)
    assert misdirected.returncode == 1 and "sent to host 2, which does not own it" in misdirected.stdout

    def other_token(lines: list[dict[str, Any]]) -> None:
        next(e for e in lines if e["kind"] == "proxy_relayed")["host"]["progressToken"] = "theirs"

    broken_as(verify_tampered(transcript, other_token, tmp_path),
              "progress passed on without the host's own token, or altered")


async def _asked_during_a_task(config: Path, transcript: Path) -> tuple[dict[str, Any], str, TaskHost]:
    async def answer(request: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"colour": "green"}}

    host = await TaskHost.start(config, transcript, answer=answer)
    try:
        made = await host.request("tools/call", {"name": "b__ask", "arguments": {}, "task": TASK})
        task_id = made["task"]["taskId"]
        assert made["task"]["status"] == "input_required"
        return await host.request("tasks/result", {"taskId": task_id}), task_id, host
    finally:
        await host.close()


def test_what_the_upstream_asks_during_a_task_reaches_the_host_naming_its_task(
    two: Path, tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    result, task_id, host = asyncio.run(_asked_during_a_task(two, transcript))
    assert result["content"][0]["text"] == 'B heard {"action": "accept", "content": {"colour": "green"}}'
    assert [asked["method"] for asked in host.asked] == ["elicitation/create"]
    assert host.asked[0]["params"]["_meta"] == {RELATED: {"taskId": task_id}}  # the host's id, not task-1
    asks = [e for e in events(transcript) if e["kind"] == "proxy_ask"]
    assert [(a["server"], a["answered_by"], a["outcome"]) for a in asks] == [("b", "host", "accept")]
    checked = verify(transcript)
    assert checked.returncode == 0, checked.stdout
    every = verify(transcript, "--all").stdout
    assert "elicitation/create of server b (its id 5000) answered by the host" in every


async def _cancelled(config: Path, transcript: Path) -> dict[str, Any]:
    host = await TaskHost.start(config, transcript)
    try:
        made = await host.request("tools/call", {"name": "a__wait", "arguments": {}, "task": TASK})
        task_id = made["task"]["taskId"]
        cancelled = await host.request("tasks/cancel", {"taskId": task_id})
        again = await host.raw("tasks/cancel", {"taskId": task_id})
        return {"id": task_id, "cancelled": cancelled, "again": again}
    finally:
        await host.close()


def test_tasks_cancel_goes_to_the_task_upstream_and_its_refusal_comes_back(two: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "proxy.jsonl"
    seen = asyncio.run(_cancelled(two, transcript))
    assert seen["cancelled"]["taskId"] == seen["id"] and seen["cancelled"]["status"] == "cancelled"
    assert seen["again"]["error"]["code"] == -32602  # a terminal task: the server's refusal, passed on
    assert "it is cancelled" in seen["again"]["error"]["message"]
    sent = [e["message"] for e in events(transcript) if e["kind"] == "mcp_request" and e["server"] == "a"]
    assert [(m["method"], m["params"]["taskId"]) for m in sent if m["method"] == "tasks/cancel"] == [
        ("tasks/cancel", "task-1"), ("tasks/cancel", "task-1")]
    checked = verify(transcript)
    assert checked.returncode == 0, checked.stdout


async def _plain(config: Path, transcript: Path, capabilities: dict[str, Any], version: str
                 ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
    host = await TaskHost.start(config, transcript, capabilities=capabilities, version=version)
    try:
        tools = await host.request("tools/list")
        called = await host.request("tools/call", {"name": "a__count", "arguments": {"n": 2}, "task": TASK})
        listed = await host.raw("tasks/list")
        return host.initialized, tools, called, listed
    finally:
        await host.close()


@pytest.mark.parametrize(("capabilities", "version"), [
    ({}, "2025-11-25"),  # declares no tasks
    ({"tasks": {"list": {}, "cancel": {}}}, "2025-06-18"),  # a revision without tasks
], ids=["no-tasks-declared", "2025-06-18"])
def test_a_host_that_takes_no_tasks_is_answered_plainly(
    two: Path, tmp_path: Path, capabilities: dict[str, Any], version: str,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    initialized, tools, called, listed = asyncio.run(_plain(two, transcript, capabilities, version))
    assert ("tasks" in initialized["capabilities"]) == (version == "2025-11-25")  # the proxy's own support
    assert all("execution" not in tool for tool in tools["tools"])
    assert called["content"][0]["text"] == "counted 2 by A"  # run as a task by the proxy, answered plainly
    assert "task" not in called
    if version == "2025-11-25":
        assert listed["result"] == {"tasks": []}  # none of its own
    else:
        assert listed["error"] == {"code": -32601, "message": "Method not found: tasks/list"}
    assert not [e for e in events(transcript) if e["kind"] == "proxy_task"]
    checked = verify(transcript)
    assert checked.returncode == 0, checked.stdout


async def _research(config: Path, transcript: Path) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    host = await TaskHost.start(config, transcript, more=("--protocol-version", "2025-11-25"))
    try:
        tools = await host.request("tools/list")
        shown = {tool["name"]: tool.get("execution") for tool in tools["tools"]}
        made = await host.request("tools/call", {"name": "ev__simulate-research-query",
                                                 "arguments": {"topic": "MCP"}, "task": TASK})
        task_id = made["task"]["taskId"]
        result = await host.request("tasks/result", {"taskId": task_id})
        state = await host.request("tasks/get", {"taskId": task_id})
        return shown, {"result": result, "state": state, "id": task_id}, [
            n["params"]["taskId"] for n in host.notifications if n["method"] == "notifications/tasks/status"]
    finally:
        await host.close()


def test_server_everythings_research_task_runs_as_the_hosts_own_task(
    everything_server: list[str], tmp_path: Path,
) -> None:
    config = tmp_path / "ev.json"
    entries = everything.stdio_config(everything_server, [str(tmp_path)])
    config.write_text(json.dumps(entries), encoding="utf-8")
    transcript = tmp_path / "proxy.jsonl"
    shown, seen, statuses = asyncio.run(_research(config, transcript))
    assert shown["ev__simulate-research-query"] == {"taskSupport": "required"}
    assert "# Research Report: MCP" in seen["result"]["content"][0]["text"]
    assert seen["result"]["_meta"][RELATED] == {"taskId": seen["id"]}
    assert seen["state"]["status"] == "completed" and seen["state"]["taskId"] == seen["id"]
    assert set(statuses) <= {seen["id"]}  # any status told names the host's id
    upstream = next(e for e in events(transcript) if e["kind"] == "proxy_task")["upstream_task_id"]
    assert upstream != seen["id"]
    checked = verify(transcript)
    assert checked.returncode == 0, checked.stdout


def test_two_http_hosts_at_once_each_see_only_their_own_tasks(two: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "proxy.jsonl"
    with http_proxy(two, transcript) as url:
        first, second = HttpTaskHost(url), HttpTaskHost(url)
        try:
            mine = first.request("tools/call", {"name": "a__count", "arguments": {"n": 2}, "task": TASK})
            theirs = second.request("tools/call", {"name": "a__count", "arguments": {"n": 1}, "task": TASK})
            one, two_id = mine["task"]["taskId"], theirs["task"]["taskId"]
            peeked = second.raw("tasks/get", {"taskId": one})  # another host's task: as unknown
            cancelled = second.raw("tasks/cancel", {"taskId": one})
            listed = [second.request("tasks/list"), first.request("tasks/list")]
            polled = [first.request("tasks/get", {"taskId": one})["status"] for _ in range(3)]
            assert polled[-1] == "completed", polled  # two polls count 2
            result = first.request("tasks/result", {"taskId": one})
            time.sleep(0.3)  # the status notification, on the GET stream
            told = [list(first.told), list(second.told)]
        finally:
            first.close()
            second.close()
    assert peeked["error"] == {"code": -32602, "message": f"Failed to retrieve task: Task not found: {one}"}
    assert cancelled["error"]["code"] == -32602
    assert [[t["taskId"] for t in page["tasks"]] for page in listed] == [[two_id], [one]]
    assert result["content"][0]["text"] == "counted 2 by A"
    statuses = [[m["params"]["taskId"] for m in messages if m.get("method") == "notifications/tasks/status"]
                for messages in told]
    assert statuses == [[one], []]  # to the host that owns it only
    recorded = [e for e in events(transcript) if e["kind"] == "proxy_task"]
    assert [(t["host"], t["upstream_task_id"]) for t in recorded] == [(1, "task-1"), (2, "task-2")]
    checked = verify(transcript)
    assert checked.returncode == 0, checked.stdout

    def peek_answered(lines: list[dict[str, Any]]) -> None:  # as if host 2 had been sent host 1's task
        route = next(e for e in lines if e["kind"] == "proxy_route" and e["decision"] == "unknown")
        task = next(e for e in lines if e["kind"] == "proxy_task")
        route.update(decision="forwarded", server="a", connection=task["connection"],
                     tool=task["upstream_task_id"])

    broken_as(verify_tampered(transcript, peek_answered, tmp_path),
              f"tasks/get of task '{one}': it is host 1's task a/'task-1'")


async def _lost(config: Path, transcript: Path) -> dict[str, Any]:
    host = await TaskHost.start(config, transcript)
    try:
        made = await host.request("tools/call", {"name": "a__wait", "arguments": {}, "task": TASK})
        crashed = await host.request("tools/call", {"name": "a__crash", "arguments": {}})
        task_id = made["task"]["taskId"]
        return {"crashed": crashed, "lost": await host.raw("tasks/get", {"taskId": task_id}), "id": task_id,
                "listed": await host.request("tasks/list"),
                "again": await host.request("tools/call", {"name": "a__count", "arguments": {"n": 1},
                                                           "task": TASK})}
    finally:
        await host.close()


def test_a_task_whose_server_died_is_lost_and_said_so(two: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "proxy.jsonl"
    seen = asyncio.run(_lost(two, transcript))
    assert seen["crashed"]["isError"] is True  # the plain call the server died in
    assert seen["lost"]["error"] == {"code": -32602, "message": f"Failed to retrieve task: Task not found: "
                                     f"{seen['id']} (server a exited or restarted since the task began; "
                                     "the task is lost)"}
    assert seen["listed"] == {"tasks": []}
    assert "task" in seen["again"]  # the server restarts for the next call, its tasks anew
    sent = [e["message"]["method"] for e in events(transcript)
            if e["kind"] == "mcp_request" and e["server"] == "a"]
    assert "tasks/get" not in sent  # the lost task was never asked of the restarted server
    checked = verify(transcript)
    assert checked.returncode == 0, checked.stdout


async def _modern(server: Any) -> tuple[list[Any], str]:
    async with Client(server, mode="2026-07-28") as client:
        tools = (await client.list_tools()).tools
        called = await client.call_tool("a__count", {"n": 2})
        block = called.content[0]
        return [tool.execution for tool in tools], block.text if isinstance(block, t.TextContent) else ""


def test_a_2026_07_28_host_is_answered_plainly(two: Path, tmp_path: Path) -> None:
    """Its tasks are the SEP-2663 extension, which the proxy does not bridge to 2025-11-25 tasks."""
    transcript = tmp_path / "proxy.jsonl"
    executions, text = anyio.run(_modern, stdio_proxy(two, transcript))
    assert set(executions) == {None} and text == "counted 2 by A"
    assert not [e for e in events(transcript) if e["kind"] == "proxy_task"]
    upstream = [e["message"]["method"] for e in events(transcript) if e["kind"] == "mcp_request"
                and e["server"] == "a" and str(e["message"].get("method")).startswith("tasks/")]
    assert upstream == ["tasks/get", "tasks/get", "tasks/result"]  # the proxy ran the task itself
    checked = verify(transcript)
    assert checked.returncode == 0, checked.stdout


async def _result_cancelled(config: Path, transcript: Path) -> dict[str, Any]:
    host = await TaskHost.start(config, transcript)
    try:
        made = await host.request("tools/call", {"name": "a__wait", "arguments": {}, "task": TASK})
        task_id = made["task"]["taskId"]
        number, waiting = host.start_request("tasks/result", {"taskId": task_id})  # waits for the end
        await asyncio.sleep(0.3)
        host.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": number}})
        await asyncio.sleep(0.3)
        cancelled = await host.request("tasks/cancel", {"taskId": task_id})
        await asyncio.sleep(0.3)
        return {"answered": waiting.done(), "cancelled": cancelled}
    finally:
        await host.close()


def test_a_hosts_cancelled_tasks_result_is_cancelled_upstream_and_never_answered(
    two: Path, tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    seen = asyncio.run(_result_cancelled(two, transcript))
    assert seen["answered"] is False and seen["cancelled"]["status"] == "cancelled"
    asked = next(e for e in events(transcript) if e["kind"] == "mcp_request" and e["server"] == "a"
                 and e["message"]["method"] == "tasks/result")
    cancels = [e["message"]["params"]["requestId"] for e in events(transcript)
               if e["kind"] == "mcp_notification" and e["server"] == "a"
               and e["message"].get("method") == "notifications/cancelled"]
    assert cancels == [asked["mcp_id"]]  # the upstream tasks/result, by its own id
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert f"cancelled upstream too (a id {asked['mcp_id']!r})" in checked.stdout


def test_an_http_host_is_asked_on_the_stream_of_its_tasks_result(two: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "proxy.jsonl"
    with http_proxy(two, transcript) as url:
        host = HttpTaskHost(url, answer=lambda asked: {"action": "accept", "content": {"colour": "red"}})
        try:
            made = host.request("tools/call", {"name": "a__ask", "arguments": {}, "task": TASK})
            task_id = made["task"]["taskId"]
            result = host.request("tasks/result", {"taskId": task_id})
        finally:
            host.close()
    assert result["content"][0]["text"] == 'A heard {"action": "accept", "content": {"colour": "red"}}'
    assert [(a["method"], a["params"]["_meta"]) for a in host.asked] == [
        ("elicitation/create", {RELATED: {"taskId": task_id}})]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "elicitation/create of server a (its id 5000) answered by the host" in checked.stdout


async def _denied(config: Path, transcript: Path, policy: Path) -> dict[str, Any]:
    host = await TaskHost.start(config, transcript, more=("--policy", str(policy)))
    try:
        return {"denied": await host.request("tools/call", {"name": "a__count", "task": TASK,
                                                            "arguments": {"n": 1, "label": "secret-job"}}),
                "allowed": await host.request("tools/call", {"name": "a__count", "arguments": {"n": 1},
                                                             "task": TASK})}
    finally:
        await host.close()


def test_the_policy_refuses_a_task_before_it_is_created_upstream(two: Path, tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    rule = {"server": "a", "tool": "count", "arguments": {"/label": "secret*"}, "decision": "deny",
            "reason": "no secret jobs"}
    policy.write_text(json.dumps({"rules": [rule]}), encoding="utf-8")
    transcript = tmp_path / "proxy.jsonl"
    seen = asyncio.run(_denied(two, transcript, policy))
    assert seen["denied"]["isError"] is True and '"no secret jobs"' in seen["denied"]["content"][0]["text"]
    assert "task" in seen["allowed"]
    created = [e["message"]["params"]["arguments"] for e in events(transcript)
               if e["kind"] == "mcp_request" and e["message"].get("method") == "tools/call"]
    assert created == [{"n": 1}]  # the refused one never went upstream
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "denied: denied by policy rule #1" in checked.stdout
