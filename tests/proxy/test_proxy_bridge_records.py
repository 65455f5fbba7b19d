"""What ``toolrelay proxy`` records of its hosts' tasks, and how ``verify``, ``explain`` and
``view`` read it: the era of the host that owns each task (a 2025 stdio host's and a
2026-07-28 host's tasks are both ``host`` None), the upstream request a bridged answer
rests on named by its own method, and the tasks the proxy forgets past its cap of 1,000.

The upstream is ``quick_tasks.py`` (standard library, tasks made in microseconds), once
pinned to 2025-11-25 (``old``: tasks passed through) and once to 2026-07-28 (``new``: the
tasks extension, bridged); the hosts speak JSON-RPC over stdio (``task_host.py``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from conftest import PYTHON
from toolrelay.verify import load_run
from toolrelay.verify import verify as check
from toolrelay.verify.explain import explain
from toolrelay.view.rows import describe

from .proxy_helpers import (
    HERE,
    broken_as,
    events,
    proxy_args,
    script_entry,
    verify,
    verify_tampered,
    write_config,
)
from .task_host import TaskHost

QUICK = HERE / "quick_tasks.py"
TASK = {"ttl": 60000}
CAP = 1000
"""The most tasks of each kind the proxy keeps (``proxy/tasks.py``, ``proxy/task_bridge.py``)."""
EXTENSION = "io.modelcontextprotocol/tasks"


def _pinned(version: str) -> dict[str, Any]:
    entry = script_entry(QUICK)
    entry["toolrelay"]["protocolVersion"] = version
    return entry


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_config(tmp_path, {"old": _pinned("2025-11-25"), "new": _pinned("2026-07-28")})


async def _made(host: TaskHost, tool: str, text: str = "hi") -> str:
    made = await host.request("tools/call", {"name": tool, "arguments": {"text": text}, "task": TASK})
    return str(made["task"]["taskId"])


async def _ended(host: TaskHost, task_id: str) -> dict[str, Any]:
    for _ in range(500):
        state = await host.request("tasks/get", {"taskId": task_id})
        if state["status"] == "completed":
            return state
        await asyncio.sleep(0.02)
    raise AssertionError(f"task {task_id} never completed")


# -- a 2025-11-25 host: its tasks passed through and bridged ---------------------------------

async def _old_host(config: Path, transcript: Path) -> dict[str, Any]:
    host = await TaskHost.start(config, transcript)
    try:
        passed, bridged = await _made(host, "old__quick", "one"), await _made(host, "new__quick", "two")
        await _ended(host, bridged)
        return {"ids": (passed, bridged), "results": [await host.request("tasks/result", {"taskId": task})
                                                      for task in (passed, bridged)]}
    finally:
        await host.close()


def test_explain_names_each_upstream_request_a_bridged_answer_rests_on_by_its_own_method(
    config: Path, tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    seen = asyncio.run(_old_host(config, transcript))
    assert [r["content"][0]["text"] for r in seen["results"]] == ["quick one", "quick two"]
    recorded = events(transcript)
    tasks = [e for e in recorded if e["kind"] == "proxy_task"]
    assert [t.get("host_version") for t in tasks] == ["2025-11-25", "2025-11-25"]
    checked = verify(transcript)
    assert checked.returncode == 0, checked.stdout
    run = load_run(transcript)
    told = explain(run, check(run))
    blocks = {block.splitlines()[1].split("   ", 1)[1]: block for block in told.split("\n\n")
              if block.startswith("host request")}
    bridged = seen["ids"][1]
    made_by = next(t["key"] for t in tasks if t["task_id"] == bridged)
    result = blocks[f'tasks/result {{"taskId": "{bridged}"}}']
    # the host's tasks/result rests on the proxy's own last poll, sent for the call that made the task
    polls = [e for e in recorded if e["kind"] == "mcp_request" and e["server"] == "new"
             and e["message"]["method"] == "tasks/get"]
    assert (f"  proxy → new   tasks/get q-1 · connection 1 · upstream id {polls[-1]['mcp_id']!r} · "
            f"sent for host request {made_by}") in result.splitlines(), result
    created = blocks['tools/call new__quick arguments {"text": "two"}']
    assert "  proxy → new   tools/call quick · connection 1" in created  # the call itself: its own
    assert "sent for host request" not in created
    assert f"{bridged} ↔ new task 'q-1' · connection 1 · a 2025 host's" in created
    passed = blocks[f'tasks/result {{"taskId": "{seen["ids"][0]}"}}']
    assert "  proxy → old   tasks/result q-1 · connection 1" in passed and "sent for host" not in passed
    rows = [describe(event, 0.0) for event in recorded if event["kind"] == "proxy_task"]
    detail = "the host's id ↔ the upstream's (host None, a 2025-11-25 host)"
    assert [row.detail for row in rows] == [detail] * 2


# -- a 2026-07-28 host: its tasks are host None too, told apart by their era ------------------

MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION: {}}},
               "io.modelcontextprotocol/clientInfo": {"name": "modern-host", "version": "1"}}


async def _modern_ask(host: TaskHost, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return (await host.raw(method, {**params, "_meta": MODERN_META}))["result"]


async def _modern_host(config: Path, transcript: Path) -> list[dict[str, Any]]:
    proc = await asyncio.create_subprocess_exec(
        PYTHON, *proxy_args(config, transcript), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, limit=2**22)
    host = TaskHost(proc, None)
    ended = []
    try:
        for tool in ("new__quick", "old__quick"):  # an extension task, a 2025 server's task
            task = await _modern_ask(host, "tools/call", {"name": tool, "arguments": {"text": tool}})
            for _ in range(500):
                task = await _modern_ask(host, "tasks/get", {"taskId": task["taskId"],
                                                             "requestState": task["requestState"]})
                if task["status"] == "completed":
                    break
                await asyncio.sleep(0.02)
            ended.append(task)
        return ended
    finally:
        await host.close()


def test_a_2026_07_28_hosts_tasks_are_recorded_with_its_era_and_held_to_it(
    config: Path, tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    ended = asyncio.run(_modern_host(config, transcript))
    texts = [task["result"]["content"][0]["text"] for task in ended]
    assert texts == ["quick new__quick", "quick old__quick"]
    tasks = [e for e in events(transcript) if e["kind"] == "proxy_task"]
    assert [(t["host"], t["host_version"]) for t in tasks] == [(None, "2026-07-28")] * 2
    checked = verify(transcript)
    assert checked.returncode == 0, checked.stdout
    run = load_run(transcript)
    assert "· a 2026-07-28 host's (the host names it by the proxy's id)" in explain(run, check(run))

    def said_2025(lines: list[dict[str, Any]]) -> None:  # the task said to be a 2025 stdio host's
        next(e for e in lines if e["kind"] == "proxy_task")["host_version"] = "2025-11-25"

    broken_as(verify_tampered(transcript, said_2025, tmp_path),
              "no task of this host's stands for the upstream task it was answered from (a 2025 host's, and "
              "this is a 2026-07-28 host's request)")

    def older(lines: list[dict[str, Any]]) -> None:  # a transcript from before the era was recorded
        for line in lines:
            line.pop("host_version", None)

    assert verify_tampered(transcript, older, tmp_path).returncode == 0


# -- past the cap: the oldest tasks forgotten, recorded, and not expected in tasks/list ------

async def _all_ended(host: TaskHost, count: int) -> list[dict[str, Any]]:
    for _ in range(500):
        listed = (await host.request("tasks/list"))["tasks"]
        if len(listed) == count and all(task["status"] == "completed" for task in listed):
            return list(listed)
        await asyncio.sleep(0.05)
    raise AssertionError("the tasks never all completed")


async def _past_the_cap(config: Path, transcript: Path) -> dict[str, Any]:
    host = await TaskHost.start(config, transcript)
    try:
        made = await asyncio.gather(*(host.request("tools/call", {
            "name": f"{server}__quick", "arguments": {"text": str(n)}, "task": TASK})
            for server in ("old", "new") for n in range(CAP)))
        first = [made[0]["task"]["taskId"], made[CAP]["task"]["taskId"]]
        await _all_ended(host, 2 * CAP)
        more = [await _made(host, "old__quick", "more"), await _made(host, "new__quick", "more")]
        listed = await _all_ended(host, 2 * CAP)
        gone = [await host.raw("tasks/get", {"taskId": task}) for task in first]
        return {"first": first, "more": more, "listed": {task["taskId"] for task in listed}, "gone": gone}
    finally:
        await host.close()


def test_tasks_forgotten_past_the_cap_are_recorded_and_not_expected_in_the_list(
    config: Path, tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    seen = asyncio.run(_past_the_cap(config, transcript))
    assert not set(seen["first"]) & seen["listed"] and set(seen["more"]) <= seen["listed"]
    assert [answer["error"]["code"] for answer in seen["gone"]] == [-32602, -32602]
    forgotten = [e for e in events(transcript) if e["kind"] == "proxy_task_forgotten"]
    assert [(e["task_id"], e["kept"]) for e in forgotten] == [(task, CAP) for task in seen["first"]]
    assert forgotten[0]["reason"] == "the proxy keeps at most 1000 tasks; the oldest is forgotten first"
    assert forgotten[1]["reason"] == ("the proxy keeps at most 1000 bridged tasks; the oldest ended one is "
                                      "forgotten first")
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert f"task {seen['first'][1]!r} forgotten (the proxy keeps at most 1000 bridged tasks; the oldest " \
           "ended one is forgotten first): not listed or answered from afterwards" in checked.stdout

    def unrecorded(lines: list[dict[str, Any]]) -> None:  # as the proxy recorded it before: not at all
        lines[:] = [e for e in lines if e["kind"] != "proxy_task_forgotten"]

    broken_as(verify_tampered(transcript, unrecorded, tmp_path),
              f"left out: ['{seen['first'][0]}', '{seen['first'][1]}']")

    def early(lines: list[dict[str, Any]]) -> None:  # a forgetting the proxy had no cause for
        next(e for e in lines if e["kind"] == "proxy_task_forgotten")["kept"] = 5000

    broken_as(verify_tampered(transcript, early, tmp_path),
              "the proxy held 2000 tasks then, fewer than the 5000 it keeps")


# -- what an upstream asks while no request of the host's about the task is pending ----------

async def _asked_between(config: Path, transcript: Path) -> dict[str, Any]:
    answered = asyncio.Event()

    async def answer(request: dict[str, Any]) -> dict[str, Any]:
        answered.set()
        return {"action": "accept", "content": {"colour": "teal"}}

    host = await TaskHost.start(config, transcript, answer=answer)
    try:
        made = await host.request("tools/call", {"name": "old__ask_later", "arguments": {}, "task": TASK})
        task_id = made["task"]["taskId"]
        await host.request("tasks/list")  # the server asks right after it answers the proxy's list
        await asyncio.wait_for(answered.wait(), 30)  # with no tasks/get or tasks/result of it pending
        for _ in range(500):
            if (await host.request("tasks/get", {"taskId": task_id}))["status"] == "completed":
                break
            await asyncio.sleep(0.02)
        return {"task": task_id, "asked": host.asked,
                "result": await host.request("tasks/result", {"taskId": task_id})}
    finally:
        await host.close()


def test_an_upstream_ask_while_no_host_request_of_the_task_is_pending_is_tagged_with_the_task(
    config: Path, tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    seen = asyncio.run(_asked_between(config, transcript))
    assert seen["result"]["content"][0]["text"] == 'heard {"action": "accept", "content": {"colour": "teal"}}'
    [asked] = seen["asked"]
    assert asked["params"]["_meta"] == {"io.modelcontextprotocol/related-task": {"taskId": seen["task"]}}
    [ask] = [e for e in events(transcript) if e["kind"] == "proxy_ask"]
    assert (ask["key"], ask.get("task_id"), ask["answered_by"], ask["outcome"]) == (
        "", seen["task"], "host", "accept")
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    said = "elicitation/create of server old (its id 9000): asked of the host for its task " \
        f"{seen['task']!r}, no request of the host's about it pending: accept"
    assert said in checked.stdout, checked.stdout

    def other_answer(lines: list[dict[str, Any]]) -> None:  # the host's answer, changed on its way up
        reply = next(e for e in lines if e["kind"] == "mcp_reply")
        reply["message"]["result"]["content"]["colour"] = "red"

    broken_as(verify_tampered(transcript, other_answer, tmp_path),
              "(its id 9000): what went upstream is not the host's answer")

    def other_task(lines: list[dict[str, Any]]) -> None:  # the upstream asked for another task of its own
        asked = next(e for e in lines if e["kind"] == "mcp_server_request")
        asked["message"]["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"] = "q-9"

    broken_as(verify_tampered(transcript, other_task, tmp_path),
              "its related-task meta does not name the task's upstream id 'q-1'")


# -- a 2026-07-28 host's requestState: one the proxy never gave for the task is refused ------

async def _stale_states(config: Path, transcript: Path) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        PYTHON, *proxy_args(config, transcript), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, limit=2**22)
    host = TaskHost(proc, None)
    try:
        task = await _modern_ask(host, "tools/call", {"name": "new__quick", "arguments": {"text": "s"}})
        task_id = task["taskId"]
        forged = f"{task_id}-state-99"

        async def asked(method: str, state: str, **more: Any) -> dict[str, Any]:
            params = {"taskId": task_id, "requestState": state, **more}
            return await host.raw(method, {**params, "_meta": MODERN_META})

        refused = {method: await asked(method, forged, **more) for method, more in (
            ("tasks/get", {}), ("tasks/update", {"inputResponses": {}}), ("tasks/cancel", {}))}
        taken = await asked("tasks/get", task["requestState"])
        stateless = await host.raw("tasks/get", {"taskId": task_id, "_meta": MODERN_META})
        return {"task": task_id, "forged": forged, "refused": refused, "taken": taken, "stateless": stateless}
    finally:
        await host.close()


def test_a_requeststate_the_proxy_never_gave_for_the_task_is_refused_and_verified(
    config: Path, tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    seen = asyncio.run(_stale_states(config, transcript))
    said = f"requestState {seen['forged']!r} is not one the proxy gave for task {seen['task']}"
    refusal = {"code": -32602, "message": said}
    assert list(seen["refused"]) == ["tasks/get", "tasks/update", "tasks/cancel"]
    assert [answer["error"] for answer in seen["refused"].values()] == [refusal] * 3
    assert "result" in seen["taken"] and "result" in seen["stateless"]  # a host that keeps no state is served
    sent = [e["message"]["method"] for e in events(transcript) if e["kind"] == "mcp_request"
            and e["server"] == "new" and e["call_id"] not in (None, "h1")]
    assert sent == []  # nothing of the refused requests went upstream (the follower's polls are h1's)
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert f"refused: requestState {seen['forged']!r} was never given for task {seen['task']!r}" \
        in checked.stdout

    def given_state(lines: list[dict[str, Any]]) -> None:  # the refused request said to name a given state
        refused = next(e for e in lines if e["kind"] == "proxy_host" and e["direction"] == "in"
                       and (e["message"].get("params") or {}).get("requestState") == seen["forged"])
        refused["message"]["params"]["requestState"] = f"{seen['task']}-state-1"

    broken_as(verify_tampered(transcript, given_state, tmp_path),
              f"refused requestState '{seen['task']}-state-1', which the proxy gave")

    def forged_taken(lines: list[dict[str, Any]]) -> None:  # a request taken with a state never given
        taken = [e for e in lines if e["kind"] == "proxy_host" and e["direction"] == "in"
                 and (e["message"].get("params") or {}).get("requestState") == f"{seen['task']}-state-1"]
        taken[-1]["message"]["params"]["requestState"] = seen["forged"]

    broken_as(verify_tampered(transcript, forged_taken, tmp_path),
              f"taken though requestState {seen['forged']!r} was never given")


async def _asked_at_once(config: Path, transcript: Path) -> dict[str, Any]:
    async def answer(request: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"colour": "plum"}}

    host = await TaskHost.start(config, transcript, answer=answer)
    try:
        made = await host.request("tools/call", {"name": "old__ask_now", "arguments": {}, "task": TASK})
        task_id = made["task"]["taskId"]
        return {"task": task_id, "result": await host.request("tasks/result", {"taskId": task_id}),
                "asked": host.asked}
    finally:
        await host.close()


def test_an_upstream_that_asks_as_it_answers_the_tools_call_reaches_the_host(
    config: Path, tmp_path: Path,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    seen = asyncio.run(_asked_at_once(config, transcript))
    assert seen["result"]["content"][0]["text"] == 'heard {"action": "accept", "content": {"colour": "plum"}}'
    [asked] = seen["asked"]  # not answered by the proxy's --elicit: the task was kept before the ask was read
    assert asked["params"]["_meta"] == {"io.modelcontextprotocol/related-task": {"taskId": seen["task"]}}
    [ask] = [e for e in events(transcript) if e["kind"] == "proxy_ask"]
    assert (ask["answered_by"], ask["outcome"]) == ("host", "accept")
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
