"""A 2025-11-25 host's own tasks, run by a 2026-07-28 upstream as tasks of the tasks
extension (SEP-2663), bridged by ``toolrelay proxy`` (``proxy/task_bridge.py``).

The upstream is the official SDK's server carrying the extension as the locked 2026-07-28
spec writes it (``sdk_tasks_ext_server.py``: ``ttlMs``, ``pollIntervalMs``, no
``requestState``), or as the older draft did (``--draft``: a new ``requestState`` on every
task message, a stale one refused; the host is told the same); the host speaks 2025-11-25
JSON-RPC judged by the SDK's own 2025-11-25 types (``task_host.py``). The host is given
the proxy's task id, its ``tasks/get`` shows the upstream's latest state in 2025 terms,
``tasks/result`` waits for the end and gives the result (or error), the task's input
request reaches the host during ``tasks/result`` as a 2025 elicitation naming its task,
and ``tasks/cancel`` sends the extension's ``tasks/cancel`` (with the latest
``requestState``, if the upstream gave one). The transcripts verify; tampered copies do
not.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from conftest import PYTHON
from testkit.servers import SDK_TASKS_EXT_SERVER
from toolrelay.verify import load_run
from toolrelay.verify import verify as check
from toolrelay.verify.explain import explain
from toolrelay.view.rows import describe

from .proxy_helpers import (
    broken_as,
    events,
    http_proxy,
    proxy_args,
    script_entry,
    verify,
    verify_tampered,
    write_config,
)
from .task_host import HttpTaskHost, TaskHost

RELATED = "io.modelcontextprotocol/related-task"
TASK = {"ttl": 60000}
MODERN = ("--protocol-version", "2026-07-28")


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_config(tmp_path, {"x": script_entry(SDK_TASKS_EXT_SERVER)})


def _ext_config(tmp_path: Path, draft: bool) -> Path:
    """The upstream on the locked 2026-07-28 spec, or on the older draft (``ttlSeconds``,
    ``pollIntervalMilliseconds``, a ``requestState``): the host is told the same either way."""
    return write_config(tmp_path, {"x": script_entry(SDK_TASKS_EXT_SERVER, *(("--draft",) if draft else ()))})


@pytest.fixture(params=["locked", "draft"])
def either_config(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    return _ext_config(tmp_path, request.param == "draft")


async def _until(host: TaskHost, task_id: str, status: str) -> dict[str, Any]:
    for _ in range(200):
        state = await host.request("tasks/get", {"taskId": task_id})
        if state["status"] == status:
            return state
        await asyncio.sleep(0.02)
    raise AssertionError(f"task {task_id} never became {status}")


async def _made(host: TaskHost, tool: str, arguments: dict[str, Any]) -> str:
    made = await host.request("tools/call", {"name": tool, "arguments": arguments, "task": TASK})
    return str(made["task"]["taskId"])


async def _tasks(config: Path, transcript: Path) -> dict[str, Any]:
    async def answer(request: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Grace"}}

    host = await TaskHost.start(config, transcript, answer=answer, more=MODERN)
    try:
        seen: dict[str, Any] = {"capabilities": host.initialized["capabilities"]}
        tools = await host.request("tools/list")
        seen["execution"] = {tool["name"]: tool.get("execution") for tool in tools["tools"]}
        made = await host.request("tools/call", {"name": "x__slow", "task": TASK,
                                                 "arguments": {"text": "late hello", "seconds": 0.3}})
        slow = made["task"]["taskId"]
        seen["created"] = made["task"]
        seen["working"] = await host.request("tasks/get", {"taskId": slow})
        seen["slow"] = await host.request("tasks/result", {"taskId": slow})
        seen["slow_after"] = await host.request("tasks/get", {"taskId": slow})
        asked = await _made(host, "x__ask", {})
        seen["input_required"] = await _until(host, asked, "input_required")
        seen["ask"] = await host.request("tasks/result", {"taskId": asked})
        seen["asked"] = [(a["method"], a["params"].get("_meta")) for a in host.asked]
        failing = await _made(host, "x__fail", {})
        seen["fail"] = await host.raw("tasks/result", {"taskId": failing})
        endless = await _made(host, "x__forever", {})
        await _until(host, endless, "working")
        seen["cancel"] = await host.request("tasks/cancel", {"taskId": endless})
        seen["cancel_again"] = await host.raw("tasks/cancel", {"taskId": endless})
        seen["plain"] = await host.request("tools/call", {"name": "x__plain", "arguments": {"text": "hi"},
                                                          "task": TASK})
        seen["upstream_id"] = await host.raw("tasks/get", {"taskId": "ext-task-1"})
        seen["list"] = await host.request("tasks/list")
        seen["ids"] = (slow, asked, failing, endless)
        seen["statuses"] = [n["params"] for n in host.notifications
                            if n["method"] == "notifications/tasks/status"]
        return seen
    finally:
        await host.close()


def test_a_2025_hosts_task_runs_as_a_2026_extension_task_upstream(either_config: Path, tmp_path: Path
                                                                  ) -> None:
    transcript = tmp_path / "proxy.jsonl"
    seen = asyncio.run(_tasks(either_config, transcript))
    assert seen["capabilities"]["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    assert seen["execution"]["x__slow"] == {"taskSupport": "optional"}  # the 2026 server alone decides
    slow, asked = seen["ids"][:2]
    assert slow.startswith("toolrelay-") and len(set(seen["ids"])) == 4
    assert seen["created"]["status"] == "working" and seen["created"]["ttl"] == 600_000
    assert seen["created"]["pollInterval"] == 20
    assert seen["working"]["status"] == "working"
    assert seen["slow"]["content"][0]["text"] == "late hello"
    assert seen["slow"]["_meta"][RELATED] == {"taskId": slow}
    assert seen["slow_after"]["status"] == "completed"
    assert seen["input_required"]["statusMessage"] == "waiting for a name"
    assert seen["ask"]["content"][0]["text"] == "hello Grace"
    assert seen["asked"] == [("elicitation/create", {RELATED: {"taskId": asked}})]
    assert seen["fail"]["error"] == {"code": -32001, "message": "backend refused the job"}
    assert seen["cancel"]["status"] == "cancelled"
    assert seen["cancel_again"]["error"] == {
        "code": -32602, "message": "Cannot cancel task: already in terminal status 'cancelled'"}
    assert seen["plain"]["content"][0]["text"] == "hi"  # the upstream made no task: a plain answer
    assert seen["upstream_id"]["error"]["code"] == -32602  # the upstream's id means nothing to the host
    listed = {task["taskId"]: task["status"] for task in seen["list"]["tasks"]}
    assert listed == dict(zip(seen["ids"], ("completed", "completed", "failed", "cancelled"), strict=True))
    # told of each status a poll of the proxy's saw change, before the tasks/result answer
    told = [(n["taskId"], n["status"]) for n in seen["statuses"]]
    assert {task_id for task_id, _ in told} <= set(seen["ids"])
    assert (slow, "completed") in told and (asked, "input_required") in told and (asked, "completed") in told
    assert (seen["ids"][2], "failed") in told

    recorded = events(transcript)
    tasks = [e for e in recorded if e["kind"] == "proxy_task"]
    assert [(t["server"], t["upstream_task_id"], t["task_id"]) for t in tasks] == [
        ("x", f"ext-task-{n}", task_id) for n, task_id in enumerate(seen["ids"], 1)]
    upstream = [e["message"] for e in recorded if e["kind"] == "mcp_request" and e.get("server") == "x"]
    cancels = [m["params"] for m in upstream if m["method"] == "tasks/cancel"]
    assert len(cancels) == 1 and cancels[0]["taskId"] == "ext-task-4"
    states = [(e["message"].get("result") or {}) for e in recorded if e["kind"] == "mcp_response"]
    last_state = [state.get("requestState") for state in states if state.get("taskId") == "ext-task-4"]
    assert cancels[0].get("requestState") == last_state[-1]  # the latest the upstream gave (if any)
    assert not [m for m in upstream if m["method"] == "tasks/result"]  # no such method in 2026
    updates = [m["params"] for m in upstream if m["method"] == "tasks/update"]
    assert [u["inputResponses"] for u in updates] == [{"name-1": {"action": "accept",
                                                                  "content": {"name": "Grace"}}}]
    checked = verify(transcript)
    assert checked.returncode == 0, checked.stdout
    run = load_run(transcript)
    told = explain(run, check(run))
    assert f"{slow} ↔ x task 'ext-task-1'" in told and "decision       bridged" in told
    rows = [describe(event, 0.0).label for event in recorded]
    assert f"task {slow} ↔ x#1 task ext-task-1" in rows
    assert f"to host: task {slow} completed (from x's ext-task-1)" in rows
    assert "the upstream task's state (completed) its tasks/get" in verify(transcript, "--all").stdout


def _answer_of(lines: list[dict[str, Any]], method: str, nth: int = 0) -> dict[str, Any]:
    found = [e for e in lines if e["kind"] == "proxy_host" and e["direction"] == "out"
             and e["method"] == method and "result" in e["message"]]
    return found[nth]


@pytest.mark.parametrize(("tamper", "said"), [
    ("notice", "its params are not the upstream task's state it rests on, in 2025 terms"),
    ("result", "the host's answer is not the result the upstream task ended with"),
    ("status", "the host's task state is not the upstream task state it rests on"),
    ("created", "the host's task state is not the upstream task state it rests on"),
    ("cancel", "the upstream tasks/cancel did not echo the latest requestState"),
    ("listed", "the host's task list is not its own tasks as their servers reported them"),
    ("unlisted", "left out: ['toolrelay-b1-"),
])
def test_a_tampered_bridged_task_is_rejected(config: Path, tmp_path: Path, tamper: str, said: str) -> None:
    transcript = tmp_path / "proxy.jsonl"
    asyncio.run(_tasks(config, transcript))

    def forge(lines: list[dict[str, Any]]) -> None:
        if tamper == "notice":  # a status the upstream poll did not show
            notice = next(e for e in lines if e["kind"] == "proxy_task_status")
            notice["host"]["status"] = "cancelled" if notice["host"]["status"] != "cancelled" else "working"
        elif tamper == "result":
            _answer_of(lines, "tasks/result")["message"]["result"]["content"][0]["text"] = "forged"
        elif tamper == "status":
            _answer_of(lines, "tasks/get")["message"]["result"]["status"] = "completed"
        elif tamper == "listed":
            _answer_of(lines, "tasks/list")["message"]["result"]["tasks"][0]["status"] = "working"
        elif tamper == "unlisted":
            del _answer_of(lines, "tasks/list")["message"]["result"]["tasks"][0]
        elif tamper == "created":
            _answer_of(lines, "tools/call")["message"]["result"]["task"]["status"] = "input_required"
        else:
            sent = next(e for e in lines if e["kind"] == "mcp_request"
                        and e["message"]["method"] == "tasks/cancel")
            sent["message"]["params"]["requestState"] = "ext-task-4-state-1"

    broken_as(verify_tampered(transcript, forge, tmp_path), said)


def test_an_http_host_is_asked_for_its_bridged_task_on_the_stream_of_its_tasks_result(
    config: Path, tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    with http_proxy(config, transcript, *MODERN) as url:
        host = HttpTaskHost(url, answer=lambda asked: {"action": "accept", "content": {"name": "Ada L."}})
        try:
            made = host.request("tools/call", {"name": "x__ask", "arguments": {}, "task": TASK})
            task_id = made["task"]["taskId"]
            result = host.request("tasks/result", {"taskId": task_id})
        finally:
            host.close()
    assert result["content"][0]["text"] == "hello Ada L."
    assert result["_meta"][RELATED] == {"taskId": task_id}
    assert [(a["method"], a["params"]["_meta"]) for a in host.asked] == [
        ("elicitation/create", {RELATED: {"taskId": task_id}})]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "elicitation/create of server x (its id 'name-1') answered by the host" in checked.stdout


# -- a 2026-07-28 host that declares the tasks extension ------------------------------------

EXTENSION = "io.modelcontextprotocol/tasks"
MODERN_CAPABILITIES = {"extensions": {EXTENSION: {}}, "elicitation": {"form": {}}}


async def _modern_host(config: Path, transcript: Path, *upstream: str) -> TaskHost:
    """A 2026-07-28 host over stdio; the proxy's upstreams speak ``upstream`` (2026-07-28 unless told)."""
    proc = await asyncio.create_subprocess_exec(
        PYTHON, *proxy_args(config, transcript, *(upstream or MODERN)), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, limit=2**22)
    return TaskHost(proc, None)


async def _ask(host: TaskHost, method: str, params: dict[str, Any],
               capabilities: dict[str, Any] = MODERN_CAPABILITIES) -> dict[str, Any]:
    """One 2026-07-28 request (its envelope in ``_meta``): the proxy's whole response."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "modern-host", "version": "1"}}
    return await host.raw(method, {**params, "_meta": meta})


def _named(task: dict[str, Any], echo: bool = True) -> dict[str, Any]:
    """A 2026-07-28 host's params naming ``task``: with the proxy's ``requestState`` echoed,
    or (``echo`` False: a host on the locked spec, which has none) its ``taskId`` alone."""
    named = {"taskId": task["taskId"]}
    return {**named, "requestState": task["requestState"]} if echo else named


async def _modern_until(host: TaskHost, task: dict[str, Any], status: str, tries: int = 200, echo: bool = True
                        ) -> dict[str, Any]:
    for _ in range(tries):
        asked = _named(task, echo)
        got = await _ask(host, "tasks/get", asked)
        task = got["result"]
        if task["status"] == status and (status != "input_required" or task["inputRequests"]):
            return task
        await asyncio.sleep(0.02)
    raise AssertionError(f"task {task['taskId']} never became {status}")


async def _modern(config: Path, transcript: Path, echo: bool = True) -> dict[str, Any]:
    host = await _modern_host(config, transcript)
    seen: dict[str, Any] = {}
    try:
        discovered = await _ask(host, "server/discover", {})
        seen["extensions"] = discovered["result"]["capabilities"].get("extensions")
        slow = {"name": "x__slow", "arguments": {"text": "late", "seconds": 0.2}}
        made = await _ask(host, "tools/call", slow)
        seen["created"] = made["result"]
        seen["slow"] = await _modern_until(host, made["result"], "completed", echo=echo)
        asking = (await _ask(host, "tools/call", {"name": "x__ask", "arguments": {}}))["result"]
        seen["asking"] = await _modern_until(host, asking, "input_required", echo=echo)
        key = next(iter(seen["asking"]["inputRequests"]))
        answers = {key: {"action": "accept", "content": {"name": "Hedy"}}}
        update = {**_named(seen["asking"], echo), "inputResponses": answers}
        seen["update"] = await _ask(host, "tasks/update", update)
        seen["asked"] = await _modern_until(host, seen["asking"], "completed", echo=echo)
        endless = (await _ask(host, "tools/call", {"name": "x__forever", "arguments": {}}))["result"]
        seen["cancel"] = await _ask(host, "tasks/cancel", _named(endless, echo))
        seen["cancelled"] = await _modern_until(host, endless, "cancelled", echo=echo)
        plain = await _ask(host, "tools/call", {"name": "x__plain", "arguments": {"text": "hi"}})
        seen["plain"] = plain["result"]
        seen["unknown"] = await _ask(host, "tasks/get", {"taskId": "ext-task-1"})
        return seen
    finally:
        await host.close()


@pytest.mark.parametrize("draft", [False, True], ids=["locked", "draft"])
def test_a_2026_07_28_host_that_declares_the_extension_gets_the_proxys_task(tmp_path: Path, draft: bool
                                                                            ) -> None:
    """On the locked spec both sides send no requestState (the host is served without
    echoing the proxy's); on the older draft both echo theirs."""
    transcript = tmp_path / "proxy.jsonl"
    seen = asyncio.run(_modern(_ext_config(tmp_path, draft), transcript, echo=draft))
    assert seen["extensions"] == {EXTENSION: {}}
    created = seen["created"]
    assert created["resultType"] == "task" and created["status"] == "working"
    assert created["taskId"].startswith("toolrelay-")
    assert created["requestState"].startswith(created["taskId"])  # the proxy's own, not the upstream's
    # the locked spec's names, whichever the upstream spoke
    assert created["ttlMs"] == 600_000 and created["pollIntervalMs"] == 20
    assert "ttlSeconds" not in created and "pollIntervalMilliseconds" not in created
    assert seen["slow"]["result"]["content"][0]["text"] == "late"
    asking = seen["asking"]
    assert asking["inputRequests"]["name-1"]["method"] == "elicitation/create"
    assert asking["inputRequests"]["name-1"]["params"]["message"] == "Your name?"
    assert seen["update"]["result"]["resultType"] == "complete"
    assert seen["asked"]["result"]["content"][0]["text"] == "hello Hedy"
    assert "result" in seen["cancel"] and seen["cancelled"]["status"] == "cancelled"
    assert seen["plain"]["content"][0]["text"] == "hi" and seen["plain"]["resultType"] == "complete"
    assert seen["unknown"]["error"]["code"] == -32602
    recorded = events(transcript)
    upstream = [e["message"] for e in recorded if e["kind"] == "mcp_request" and e.get("server") == "x"]
    assert [m["params"]["inputResponses"] for m in upstream if m["method"] == "tasks/update"] == [
        {"name-1": {"action": "accept", "content": {"name": "Hedy"}}}]
    states = {m["params"].get("requestState") for m in upstream if m["method"].startswith("tasks/")}
    assert not [s for s in states if s and s.startswith("toolrelay-")]  # the host's states stay on its leg
    if not draft:  # the locked spec's upstream gave none, so none went upstream
        assert states == {None}
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "elicitation/create of server x (its id 'name-1') answered by the host" in checked.stdout

    def forge(lines: list[dict[str, Any]]) -> None:
        got = [e for e in lines if e["kind"] == "proxy_host" and e["direction"] == "out"
               and e["method"] == "tasks/get"
               and (e["message"].get("result") or {}).get("status") == "completed"]
        got[0]["message"]["result"]["result"]["content"][0]["text"] = "forged"

    broken_as(verify_tampered(transcript, forge, tmp_path),
              "the host's task state is not the upstream task state it rests on")

    def changed_answer(lines: list[dict[str, Any]]) -> None:  # the host's answer, changed on its way up
        sent = next(e for e in lines if e["kind"] == "mcp_request"
                    and e["message"]["method"] == "tasks/update")
        sent["message"]["params"]["inputResponses"]["name-1"]["content"]["name"] = "Mallory"

    broken_as(verify_tampered(transcript, changed_answer, tmp_path),
              "input responses ['name-1'] went upstream changed")


def _post(client: httpx.Client, url: str, number: int, method: str, params: dict[str, Any]
          ) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": MODERN_CAPABILITIES,
            "io.modelcontextprotocol/clientInfo": {"name": "modern-http-host", "version": "1"}}
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json",
               "mcp-protocol-version": "2026-07-28", "mcp-method": method}
    headers["mcp-name"] = params.get("name") or params["taskId"]  # the name-bearing methods' header
    body = {"jsonrpc": "2.0", "id": number, "method": method, "params": {**params, "_meta": meta}}
    reply = client.post(url, json=body, headers=headers)
    assert reply.status_code == 200, reply.text
    answer: dict[str, Any] = reply.json()
    return answer


def test_a_2026_07_28_http_host_answers_its_tasks_input_in_tasks_update(
    config: Path, tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    with http_proxy(config, transcript, *MODERN) as url, httpx.Client(timeout=30) as client:
        task = _post(client, url, 1, "tools/call", {"name": "x__ask", "arguments": {}})["result"]
        for number in range(2, 200):
            task = _post(client, url, number, "tasks/get", {"taskId": task["taskId"],
                                                            "requestState": task["requestState"]})["result"]
            if task.get("inputRequests"):
                break
            time.sleep(0.02)
        update = {"taskId": task["taskId"], "requestState": task["requestState"],
                  "inputResponses": {"name-1": {"action": "accept", "content": {"name": "Ida"}}}}
        assert "result" in _post(client, url, 500, "tasks/update", update)
        for number in range(501, 700):
            task = _post(client, url, number, "tasks/get", {"taskId": task["taskId"],
                                                            "requestState": task["requestState"]})["result"]
            if task["status"] == "completed":
                break
            time.sleep(0.02)
    assert task["result"]["content"][0]["text"] == "hello Ida"
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "elicitation/create of server x (its id 'name-1') answered by the host" in checked.stdout


# -- a host that does not answer what its task asks: the wait bounded by --input-wait -------

SHORT_WAIT = ("--input-wait", "0.5")


def _abandoned(transcript: Path) -> list[dict[str, Any]]:
    return [e for e in events(transcript) if e["kind"] == "proxy_task_abandoned"]


def _upstream_cancels(transcript: Path) -> list[dict[str, Any]]:
    return [e["message"]["params"] for e in events(transcript) if e["kind"] == "mcp_request"
            and e.get("server") == "x" and e["message"]["method"] == "tasks/cancel"]


def _drop_cancel(lines: list[dict[str, Any]]) -> None:
    """The upstream tasks/cancel, and its answer, taken out of the copy."""
    sent = next(e for e in lines if e["kind"] == "mcp_request" and e["message"]["method"] == "tasks/cancel")
    lines[:] = [e for e in lines if not (e["kind"] in ("mcp_request", "mcp_response")
                                         and e.get("mcp_id") == sent["mcp_id"] and e.get("server") == "x")]


async def _never_asks_for_the_result(config: Path, transcript: Path) -> dict[str, Any]:
    host = await TaskHost.start(config, transcript, more=(*MODERN, *SHORT_WAIT))
    try:
        asked = await _made(host, "x__ask", {})
        await _until(host, asked, "input_required")
        await asyncio.sleep(1.2)  # no tasks/result: the question never reaches the host
        return {"state": await host.request("tasks/get", {"taskId": asked}),
                "result": await host.raw("tasks/result", {"taskId": asked}), "task": asked}
    finally:
        await host.close()


def test_a_2025_host_that_never_asks_for_the_result_has_its_task_cancelled_upstream(
    config: Path, tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    seen = asyncio.run(_never_asks_for_the_result(config, transcript))
    assert seen["state"]["status"] == "cancelled"
    assert seen["result"]["error"]["message"] == f"task {seen['task']} was cancelled"
    [abandoned] = _abandoned(transcript)
    assert abandoned["task_id"] == seen["task"] and abandoned["upstream_task_id"] == "ext-task-1"
    assert abandoned["reason"] == "its host gave no answer to its input request within --input-wait 0.5s"
    [cancel] = _upstream_cancels(transcript)
    assert cancel["taskId"] == "ext-task-1"
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert f"task '{seen['task']}' given up (its host gave no answer" in checked.stdout
    run = load_run(transcript)
    assert f"the proxy gave up on task {seen['task']}, its host gave no answer" in explain(run, check(run))
    rows = [describe(event, 0.0).label for event in events(transcript)]
    assert f"task {seen['task']} given up: tasks/cancel to x#1 task ext-task-1" in rows
    broken_as(verify_tampered(transcript, _drop_cancel, tmp_path), "no upstream tasks/cancel recorded for it")

    def stale(lines: list[dict[str, Any]]) -> None:  # the cancel echoing an older requestState
        sent = next(e for e in lines if e["kind"] == "mcp_request"
                    and e["message"]["method"] == "tasks/cancel")
        sent["message"]["params"]["requestState"] = "ext-task-1-state-1"

    broken_as(verify_tampered(transcript, stale, tmp_path),
              "given up (its host gave no answer to its input request within --input-wait 0.5s): the "
              "upstream tasks/cancel did not echo the latest requestState ('ext-task-1-state-1'")


async def _never_updates(config: Path, transcript: Path) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        PYTHON, *proxy_args(config, transcript, *MODERN, *SHORT_WAIT), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, limit=2**22)
    host = TaskHost(proc, None)
    try:
        asking = (await _ask(host, "tools/call", {"name": "x__ask", "arguments": {}}))["result"]
        asking = await _modern_until(host, asking, "input_required")
        await asyncio.sleep(1.2)  # no tasks/update
        return await _modern_until(host, asking, "cancelled")
    finally:
        await host.close()


def test_a_2026_07_28_host_that_never_answers_its_tasks_input_has_it_cancelled_upstream(
    config: Path, tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    state = asyncio.run(_never_updates(config, transcript))
    assert state["status"] == "cancelled" and "inputRequests" not in state
    [abandoned] = _abandoned(transcript)
    assert abandoned["reason"] == "its host gave no answer to its input request within --input-wait 0.5s"
    assert [c["taskId"] for c in _upstream_cancels(transcript)] == ["ext-task-1"]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    broken_as(verify_tampered(transcript, _drop_cancel, tmp_path), "no upstream tasks/cancel recorded for it")


@pytest.mark.parametrize("tool", ["x__ask", "x__forever"])
def test_a_2025_http_host_that_leaves_has_its_task_cancelled_upstream(
    config: Path, tmp_path: Path, tool: str,
) -> None:
    """Whether its task asks something (and would wait) or not (and would run on)."""
    transcript = tmp_path / "proxy.jsonl"
    with http_proxy(config, transcript, *MODERN) as url:  # the default --input-wait: not what ends it
        host = HttpTaskHost(url)
        made = host.request("tools/call", {"name": tool, "arguments": {}, "task": TASK})
        awaited = "input_required" if tool == "x__ask" else "working"  # the ask waits: no more polls
        for _ in range(200):
            if host.request("tasks/get", {"taskId": made["task"]["taskId"]})["status"] == awaited:
                break
            time.sleep(0.02)
        left = host.http.delete(url, headers={**host.HEADERS, **host.session})  # the host leaves
        assert left.status_code in (200, 202, 204), left.text
        host.close()
        for _ in range(100):
            if _abandoned(transcript):
                break
            time.sleep(0.05)
    [abandoned] = _abandoned(transcript)
    assert abandoned["task_id"] == made["task"]["taskId"]
    assert abandoned["reason"] == "its host's session ended"
    assert [c["taskId"] for c in _upstream_cancels(transcript)] == ["ext-task-1"]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout


# -- a 2026-07-28 host's task of a 2025-11-25 server's (task_upstream.py) --------------------

UPSTREAM_2025 = Path(__file__).parent / "task_upstream.py"


@pytest.fixture
def old_config(tmp_path: Path) -> Path:
    return write_config(tmp_path, {"a": script_entry(UPSTREAM_2025, "A")})


async def _modern_on_2025(config: Path, transcript: Path) -> dict[str, Any]:
    host = await _modern_host(config, transcript, "--protocol-version", "2025-11-25")
    seen: dict[str, Any] = {}
    try:
        discovered = await _ask(host, "server/discover", {})
        seen["extensions"] = discovered["result"]["capabilities"].get("extensions")
        made = (await _ask(host, "tools/call", {"name": "a__count", "arguments": {"n": 3}}))["result"]
        seen["created"] = made
        seen["counted"] = await _modern_until(host, made, "completed")
        asking = (await _ask(host, "tools/call", {"name": "a__ask", "arguments": {}}))["result"]
        seen["asking"] = await _modern_until(host, asking, "input_required")
        key = next(iter(seen["asking"]["inputRequests"]))
        seen["update"] = await _ask(host, "tasks/update", {
            "taskId": asking["taskId"], "requestState": seen["asking"]["requestState"],
            "inputResponses": {key: {"action": "accept", "content": {"colour": "teal"}}}})
        seen["asked"] = await _modern_until(host, seen["asking"], "completed")
        endless = (await _ask(host, "tools/call", {"name": "a__wait", "arguments": {}}))["result"]
        seen["cancel"] = await _ask(host, "tasks/cancel", {"taskId": endless["taskId"],
                                                           "requestState": endless["requestState"]})
        seen["cancelled"] = await _modern_until(host, endless, "cancelled")
        return seen
    finally:
        await host.close()


def test_a_2026_07_28_hosts_task_runs_as_a_2025_11_25_servers_task(old_config: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "proxy.jsonl"
    seen = asyncio.run(_modern_on_2025(old_config, transcript))
    assert seen["extensions"] == {EXTENSION: {}}
    created = seen["created"]
    assert created["resultType"] == "task" and created["status"] == "working"
    assert created["taskId"].startswith("toolrelay-") and created["taskId"] != "task-1"
    assert created["requestState"].startswith(created["taskId"])
    # the 2025 task's ttl (ms) and pollInterval, in the extension's terms
    assert created["ttlMs"] == 600_000 and created["pollIntervalMs"] == 20
    assert "ttl" not in created and "pollInterval" not in created
    assert seen["counted"]["result"]["content"][0]["text"] == "counted 3 by A"
    asking = seen["asking"]
    (ask,) = asking["inputRequests"].values()
    assert ask["method"] == "elicitation/create" and ask["params"]["message"] == "Which colour?"
    assert seen["update"]["result"]["resultType"] == "complete"
    heard = seen["asked"]["result"]["content"][0]["text"]
    assert heard == 'A heard {"action": "accept", "content": {"colour": "teal"}}'
    assert "result" in seen["cancel"] and seen["cancelled"]["status"] == "cancelled"
    recorded = events(transcript)
    upstream = [e["message"] for e in recorded if e["kind"] == "mcp_request" and e.get("server") == "a"]
    calls = [m["params"] for m in upstream if m["method"] == "tools/call"]
    assert [c["task"] for c in calls] == [{"ttl": 600000}] * 3  # created upstream as 2025 tasks
    assert [m["method"] for m in upstream].count("tasks/cancel") == 1
    assert [m["method"] for m in upstream].count("tasks/result") == 2
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "a's 2025-11-25 task 'task-2'" in checked.stdout
    assert "elicitation/create of server a (its id 5000) answered by the host" in checked.stdout
    assert "the 2025 upstream task's state (completed) in the extension's terms" in checked.stdout
    assert "cancelled upstream (the 2025 tasks/cancel), acknowledged" in checked.stdout
    # as recorded before the spec was locked (the host told the older draft's names), it verifies
    draft = verify_tampered(transcript, _as_the_older_draft, tmp_path, "--all")
    assert draft.returncode == 0, draft.stdout
    assert "the 2025 upstream task's state (completed) in the extension's terms" in draft.stdout


def _as_the_older_draft(lines: list[dict[str, Any]]) -> None:
    """The host's task states in the older draft's names, as the proxy said them then (its
    answers and the wire alike)."""
    told = [e["message"]["result"] for e in lines if e["kind"] in ("proxy_host", "proxy_wire")
            and e["direction"] == "out" and isinstance(e["message"].get("result"), dict)
            and "ttlMs" in e["message"]["result"]]
    assert told
    for state in told:
        ttl = state.pop("ttlMs")
        state["ttlSeconds"] = None if ttl is None else ttl / 1000
        if "pollIntervalMs" in state:
            state["pollIntervalMilliseconds"] = state.pop("pollIntervalMs")


def _host_answers(lines: list[dict[str, Any]], method: str, status: str) -> list[dict[str, Any]]:
    return [e["message"]["result"] for e in lines if e["kind"] == "proxy_host" and e["direction"] == "out"
            and e["method"] == method and (e["message"].get("result") or {}).get("status") == status]


def _forge_result(lines: list[dict[str, Any]]) -> None:  # the host told of an end the upstream did not give
    _host_answers(lines, "tasks/get", "completed")[0]["result"]["content"][0]["text"] = "forged"


def _forge_ttl(lines: list[dict[str, Any]]) -> None:  # the 2025 ttl (ms) said wrongly in seconds
    _host_answers(lines, "tools/call", "working")[0]["ttlMs"] = 600


def _forge_cancelled(lines: list[dict[str, Any]]) -> None:  # told cancelled, yet its upstream cancel refused
    cancel = next(e for e in lines if e["kind"] == "mcp_response" and e.get("method") == "tasks/cancel")
    cancel["message"] = {"jsonrpc": "2.0", "id": cancel["message"]["id"],
                         "error": {"code": -32602, "message": "Cannot cancel task"}}


def _forge_elicited(lines: list[dict[str, Any]]) -> None:  # the upstream's ask moved to another call
    asked = next(e for e in lines if e["kind"] == "mcp_server_request"
                 and e.get("method") == "elicitation/create")
    asked["call_id"] = "h1"


def _forge_reply(lines: list[dict[str, Any]]) -> None:  # the host's answer, changed on its way upstream
    reply = next(e for e in lines if e["kind"] == "mcp_reply")
    reply["message"]["result"]["content"]["colour"] = "red"


def _forge_no_result(lines: list[dict[str, Any]]) -> None:  # told completed, its result left out
    del _host_answers(lines, "tasks/get", "completed")[0]["result"]


@pytest.mark.parametrize(("tamper", "said"), [
    (_forge_no_result, "the host was told its task completed without its result"),
    (_forge_reply, "elicitation/create of server a (its id 5000): what went upstream is not the host's "
                   "answer"),
    (_forge_result, "the host's task state is not the upstream task state it rests on"),
    (_forge_ttl, "the host's task state is not the upstream task state it rests on"),
    (_forge_cancelled, "the upstream refused tasks/cancel"),
    (_forge_cancelled, "the host was told its task cancelled, yet the upstream refused tasks/cancel"),
    (_forge_elicited, "elicitation/create of server a (its id 5000) was not asked during this host call"),
])
def test_a_tampered_2025_servers_bridged_task_is_rejected(old_config: Path, tmp_path: Path, tamper: Any,
                                                         said: str) -> None:
    transcript = tmp_path / "proxy.jsonl"
    asyncio.run(_modern_on_2025(old_config, transcript))
    broken_as(verify_tampered(transcript, tamper, tmp_path), said)


async def _polled_through_its_end(config: Path, transcript: Path) -> list[dict[str, Any]]:
    host = await _modern_host(config, transcript, "--protocol-version", "2025-11-25")
    try:
        slow_end = {"name": "a__count", "arguments": {"n": 1, "settle": 0.5}}
        task = (await _ask(host, "tools/call", slow_end))["result"]
        states = []
        for _ in range(200):
            task = (await _ask(host, "tasks/get", {"taskId": task["taskId"],
                                                   "requestState": task["requestState"]}))["result"]
            states.append(task)
            if task["status"] == "completed":
                return states
            await asyncio.sleep(0.01)
        raise AssertionError("the task never completed")
    finally:
        await host.close()


def test_a_2025_servers_ended_task_is_said_completed_only_with_its_result(
    old_config: Path, tmp_path: Path,
) -> None:
    """The upstream says it completed; its tasks/result answers half a second later: a
    tasks/get meanwhile waits for it rather than say "completed" with no result."""
    transcript = tmp_path / "proxy.jsonl"
    states = asyncio.run(_polled_through_its_end(old_config, transcript))
    assert [s["status"] for s in states[:-1]] == ["working"] * (len(states) - 1)
    assert states[-1]["result"]["content"][0]["text"] == "counted 1 by A"
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout


# -- giving up while a 2025 server (one message at a time) waits for its ask's answer --------

SAMPLING_CAPABILITIES = {**MODERN_CAPABILITIES, "sampling": {}}


async def _given_up_on_2025(config: Path, transcript: Path, arguments: dict[str, Any],
                            capabilities: dict[str, Any] = MODERN_CAPABILITIES) -> dict[str, Any]:
    """A 2026-07-28 host that sees what its task asks and never answers it (no tasks/update)."""
    host = await _modern_host(config, transcript, "--protocol-version", "2025-11-25", *SHORT_WAIT)
    try:
        made = (await _ask(host, "tools/call", {"name": "a__ask", "arguments": arguments}, capabilities))
        asking = await _modern_until(host, made["result"], "input_required")
        for _ in range(1000):  # the proxy gives up after --input-wait 0.5: the state it settles in
            state = (await _ask(host, "tasks/get", {"taskId": asking["taskId"],
                                                    "requestState": asking["requestState"]}))["result"]
            if state["status"] != "input_required":
                return {"asking": asking, "state": state}
            await asyncio.sleep(0.02)
        raise AssertionError("the proxy never gave up on the task")
    finally:
        await host.close()


def _upstream_of(transcript: Path, *kinds: str) -> list[dict[str, Any]]:
    return [e for e in events(transcript) if e["kind"] in kinds and e.get("server") == "a"]


def test_giving_up_answers_the_2025_servers_ask_then_shows_the_end_it_gave(
    old_config: Path, tmp_path: Path,
) -> None:
    """The server completes its task with the decline before it reads the tasks/cancel, which
    it then refuses: the host is shown that end, not "cancelled"."""
    transcript = tmp_path / "proxy.jsonl"
    seen = asyncio.run(_given_up_on_2025(old_config, transcript, {}))
    assert list(seen["asking"]["inputRequests"]) == ["5000"]
    state = seen["state"]
    assert state["status"] == "completed" and "inputRequests" not in state
    assert state["result"]["content"][0]["text"] == 'A heard {"action": "cancel"}'
    [abandoned] = _abandoned(transcript)
    assert abandoned["outcome"] == "ended" and abandoned["declined"] == [5000]
    assert abandoned["reason"] == "its host gave no answer to its input request within --input-wait 0.5s"
    wire = _upstream_of(transcript, "mcp_reply", "mcp_request", "mcp_response")
    [reply] = [e for e in wire if e["kind"] == "mcp_reply"]
    assert reply["message"]["result"] == {"action": "cancel"}
    [cancel] = [e for e in wire if e["kind"] == "mcp_request" and e["method"] == "tasks/cancel"]
    assert reply["seq"] < cancel["seq"]  # answered before the cancel was sent
    [refused] = [e for e in wire if e["kind"] == "mcp_response" and e["mcp_id"] == cancel["mcp_id"]]
    assert refused["message"]["error"]["message"] == "Cannot cancel task task-1: it is completed"
    [asked] = [e for e in events(transcript) if e["kind"] == "proxy_ask"]
    assert (asked["answered_by"], asked["outcome"]) == ("proxy", "cancel")
    assert asked["reason"] == abandoned["reason"]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "elicitation/create of server a (its id 5000) answered by the proxy (cancel: its host gave no " \
           "answer" in checked.stdout
    assert "the upstream refused tasks/cancel: the task had ended (the host shown its end)" in checked.stdout

    def no_decline(lines: list[dict[str, Any]]) -> None:  # the proxy's answer to the ask taken out
        lines[:] = [e for e in lines if e["kind"] != "mcp_reply"]

    tampered = verify_tampered(transcript, no_decline, tmp_path)
    assert tampered.returncode == 1, tampered.stdout
    assert "elicitation/create (its id 5000) was not answered upstream before the tasks/cancel" in \
        tampered.stdout

    def told_cancelled(lines: list[dict[str, Any]]) -> None:  # the upstream's end said as "cancelled"
        for result in _host_answers(lines, "tasks/get", "completed"):
            del result["result"]
            result["status"] = "cancelled"

    tampered = verify_tampered(transcript, told_cancelled, tmp_path)
    assert tampered.returncode == 1, tampered.stdout
    assert "the host was told its task cancelled, yet the upstream refused the tasks/cancel" in \
        tampered.stdout


def test_giving_up_answers_the_2025_servers_ask_then_cancels_the_task(
    old_config: Path, tmp_path: Path,
) -> None:
    """The server's task stays working after the decline: the cancel is acknowledged."""
    transcript = tmp_path / "proxy.jsonl"
    seen = asyncio.run(_given_up_on_2025(old_config, transcript, {"hold": True}))
    assert seen["state"]["status"] == "cancelled" and "result" not in seen["state"]
    [abandoned] = _abandoned(transcript)
    assert abandoned["outcome"] == "cancelled" and abandoned["declined"] == [5000]
    wire = _upstream_of(transcript, "mcp_reply", "mcp_request")
    assert [e["kind"] for e in wire if e["kind"] == "mcp_reply" or e["method"] == "tasks/cancel"] == [
        "mcp_reply", "mcp_request"]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "cancelled upstream after the proxy answered 1 pending ask" in checked.stdout

    def forged_decline(lines: list[dict[str, Any]]) -> None:  # an accept went up, said to be declined
        reply = next(e for e in lines if e["kind"] == "mcp_reply")
        reply["message"]["result"] = {"action": "accept", "content": {"colour": "red"}}

    tampered = verify_tampered(transcript, forged_decline, tmp_path)
    assert tampered.returncode == 1, tampered.stdout
    assert "elicitation/create (its id 5000): what went upstream is not the proxy's decline" in \
        tampered.stdout


def test_giving_up_refuses_the_2025_servers_sampling_request_with_an_error(
    old_config: Path, tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    sampling = {"hold": True, "method": "sampling/createMessage"}
    seen = asyncio.run(_given_up_on_2025(old_config, transcript, sampling, SAMPLING_CAPABILITIES))
    assert seen["asking"]["inputRequests"]["5000"]["method"] == "sampling/createMessage"
    assert seen["state"]["status"] == "cancelled"
    [reply] = _upstream_of(transcript, "mcp_reply")
    assert reply["message"]["error"] == {
        "code": -1, "message": "toolrelay proxy: the task was given up: its host gave no answer to its input "
                               "request within --input-wait 0.5s"}
    [asked] = [e for e in events(transcript) if e["kind"] == "proxy_ask"]
    assert (asked["answered_by"], asked["outcome"]) == ("proxy", "refused")
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout


# -- a 2025 server that loses its task mid-way --------------------------------------------

SESSION = "hush-hush-session-0042"


def test_a_task_the_2025_server_lost_is_failed_for_its_2026_07_28_host(tmp_path: Path) -> None:
    """Its tasks/get answers an error after one poll: the host is told the task failed, in
    words saying the upstream lost it and quoting its error, the config's secret redacted."""
    entry = {**script_entry(UPSTREAM_2025, "A"), "env": {"TASK_SESSION": SESSION}}
    config = write_config(tmp_path, {"a": entry})
    transcript = tmp_path / "proxy.jsonl"

    async def lost() -> dict[str, Any]:
        host = await _modern_host(config, transcript, "--protocol-version", "2025-11-25")
        try:
            made = (await _ask(host, "tools/call", {"name": "a__vanish", "arguments": {}}))["result"]
            return await _modern_until(host, made, "failed")
        finally:
            await host.close()

    state = asyncio.run(lost())
    assert state["error"] == {
        "code": -32603, "message": "toolrelay proxy: server a lost the task task-1: its tasks/get answered "
                                   "-32602: Failed to retrieve task: Task not found (forgotten in session "
                                   "[redacted])"}
    assert "result" not in state and "statusMessage" not in state
    assert all(SESSION not in json.dumps(e) for e in events(transcript) if e["kind"] == "proxy_host")
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "the upstream lost the task: the host told it failed, quoting the upstream's error" in \
        checked.stdout

    def forged(lines: list[dict[str, Any]]) -> None:  # the upstream's error said otherwise
        for result in _host_answers(lines, "tasks/get", "failed"):
            result["error"]["message"] = "toolrelay proxy: server a lost the task task-1: it crashed"

    tampered = verify_tampered(transcript, forged, tmp_path)
    assert tampered.returncode == 1, tampered.stdout
    assert "the host was not told its task failed with the upstream's error (the upstream lost the task)" in \
        tampered.stdout


def _http_until(client: httpx.Client, url: str, numbers: Any, task: dict[str, Any], done: Any
                ) -> dict[str, Any]:
    """Poll a 2026-07-28 HTTP host's task until ``done(state)`` (each request its own id)."""
    for number in itertools.islice(numbers, 500):
        task = _post(client, url, number, "tasks/get", {"taskId": task["taskId"],
                                                        "requestState": task["requestState"]})["result"]
        if done(task):
            return task
        time.sleep(0.02)
    raise AssertionError(f"task {task['taskId']} never got there: {task}")


def test_a_2026_07_28_http_host_gets_its_task_of_a_2025_servers(old_config: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "proxy.jsonl"
    numbers = itertools.count(1)
    with http_proxy(old_config, transcript, "--protocol-version", "2025-11-25") as url, \
            httpx.Client(timeout=30) as client:
        made = _post(client, url, next(numbers), "tools/call", {"name": "a__count", "arguments": {"n": 2}})
        created = made["result"]
        counted = _http_until(client, url, numbers, created, lambda t: t["status"] == "completed")
        call = {"name": "a__ask", "arguments": {}}
        asking = _post(client, url, next(numbers), "tools/call", call)["result"]
        asking = _http_until(client, url, numbers, asking, lambda t: bool(t.get("inputRequests")))
        (key,) = asking["inputRequests"]
        update = {"taskId": asking["taskId"], "requestState": asking["requestState"],
                  "inputResponses": {key: {"action": "accept", "content": {"colour": "plum"}}}}
        updated = _post(client, url, next(numbers), "tasks/update", update)
        asked = _http_until(client, url, numbers, asking, lambda t: t["status"] == "completed")
        call = {"name": "a__wait", "arguments": {}}
        endless = _post(client, url, next(numbers), "tools/call", call)["result"]
        cancel = _post(client, url, next(numbers), "tasks/cancel", {"taskId": endless["taskId"],
                                                                    "requestState": endless["requestState"]})
        cancelled = _http_until(client, url, numbers, endless, lambda t: t["status"] == "cancelled")
    assert created["resultType"] == "task" and created["taskId"].startswith("toolrelay-")
    assert created["ttlMs"] == 600_000 and created["pollIntervalMs"] == 20
    assert counted["result"]["content"][0]["text"] == "counted 2 by A"
    assert asking["inputRequests"][key]["method"] == "elicitation/create"
    assert "result" in updated
    heard = asked["result"]["content"][0]["text"]
    assert heard == 'A heard {"action": "accept", "content": {"colour": "plum"}}'
    assert "result" in cancel and "result" not in cancelled
    upstream = [e["message"] for e in _upstream_of(transcript, "mcp_request")]
    assert [m["params"]["taskId"] for m in upstream if m["method"] == "tasks/cancel"] == ["task-3"]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "elicitation/create of server a (its id 5000) answered by the host" in checked.stdout
    assert "cancelled upstream (the 2025 tasks/cancel), acknowledged" in checked.stdout


@pytest.mark.parametrize(("arguments", "status"), [({"hold": True}, "cancelled"), ({}, "completed")])
def test_a_2026_07_28_hosts_cancel_answers_the_2025_servers_ask_first(
    old_config: Path, tmp_path: Path, arguments: dict[str, Any], status: str,
) -> None:
    """The host cancels while the server waits for its ask's answer: the proxy answers it
    (cancel), then sends tasks/cancel; the task ends as the server says (a server whose task
    completes on the decline refuses the cancel: the host is shown that end)."""
    transcript = tmp_path / "proxy.jsonl"

    async def cancel() -> dict[str, Any]:
        host = await _modern_host(old_config, transcript, "--protocol-version", "2025-11-25")
        try:
            made = (await _ask(host, "tools/call", {"name": "a__ask", "arguments": arguments}))["result"]
            asking = await _modern_until(host, made, "input_required")
            said = await _ask(host, "tasks/cancel", {"taskId": asking["taskId"],
                                                     "requestState": asking["requestState"]})
            assert said["result"]["resultType"] == "complete"
            return await _modern_until(host, asking, status)
        finally:
            await host.close()

    state = asyncio.run(cancel())
    assert "inputRequests" not in state
    wire = _upstream_of(transcript, "mcp_reply", "mcp_request")
    sent = [(e["kind"], e.get("method")) for e in wire
            if e["kind"] == "mcp_reply" or e["method"] == "tasks/cancel"]
    assert sent == [("mcp_reply", None), ("mcp_request", "tasks/cancel")]
    assert wire[[e["kind"] for e in wire].index("mcp_reply")]["message"]["result"] == {"action": "cancel"}
    [asked] = [e for e in events(transcript) if e["kind"] == "proxy_ask"]
    assert (asked["answered_by"], asked["outcome"]) == ("proxy", "cancel")
    assert asked["reason"] == "its host cancelled it"
    assert not _abandoned(transcript)  # the host's own cancel: no give-up of the proxy's
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout


def test_a_2025_servers_task_that_ended_as_it_was_made_is_said_completed_with_its_result(
    old_config: Path, tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"

    async def made_ended() -> dict[str, Any]:
        host = await _modern_host(old_config, transcript, "--protocol-version", "2025-11-25")
        try:
            return (await _ask(host, "tools/call", {"name": "a__count", "arguments": {"n": 0}}))["result"]
        finally:
            await host.close()

    created = asyncio.run(made_ended())
    assert created["resultType"] == "task" and created["status"] == "completed"
    assert created["result"]["content"][0]["text"] == "counted 0 by A"
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    broken_as(verify_tampered(transcript, lambda lines: _host_answers(lines, "tools/call", "completed")[0]
                              .pop("result"), tmp_path),
              "the host was told its task completed without its result")

    def forged(lines: list[dict[str, Any]]) -> None:  # an end the upstream's tasks/result did not give
        _host_answers(lines, "tools/call", "completed")[0]["result"]["content"][0]["text"] = "forged"

    broken_as(verify_tampered(transcript, forged, tmp_path),
              "the host's task state is not the upstream task state it rests on")
