"""Tools that must run as MCP tasks (``execution.taskSupport: "required"``, 2025-11-25),
against the task test server: from ``toolrelay call`` (completed, failed, cancelled on
timeout), cancelled when the caller is, hidden where tasks cannot run, and in a scripted
offline run whose transcript verifies, catches a tampered task id, and draws the task's
rows inside its call."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from client_helpers import Recorder, async_wait_until, open_connection, run, wait_until

from conftest import PYTHON
from testkit.processes import spawned
from testkit.servers import TASK_SERVER
from testkit.transcripts import transcript_events
from toolrelay.client.config import ServerConfig
from toolrelay.client.task_rules import settled_problem, tasks_unavailable
from toolrelay.events import MCP_REQUEST, MCP_RESPONSE, McpMessage
from toolrelay.protocol.exchange import Exchange
from toolrelay.view.build import build_trace

SCRIPT = {
    "turns": [
        {"calls": [{"name": "ts__slow_sum", "arguments": {"a": 2, "b": 3}}]},
        {"calls": [{"name": "ts__breaks", "arguments": {}}]},
        {"calls": [{"name": "ts__asks", "arguments": {}}]},
        {"calls": [{"name": "ts__echo", "arguments": {"text": "hi"}}]},
        {"calls": [{"name": "ts__forever", "arguments": {}}]},
        {"message": "Done."},
    ],
}
"""One call per turn: a task that completes, one that fails, one that asks, an optional one,
one that never ends (cancelled at the run's ``--call-timeout``)."""


def toolrelay(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "toolrelay", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mcp.json: ``ts`` (tasks for tools/call) and ``nt`` (the same tools, no tasks capability)."""
    root = tmp_path_factory.mktemp("tasks")
    servers = {"ts": {"command": PYTHON, "args": [str(TASK_SERVER)]},
               "nt": {"command": PYTHON, "args": [str(TASK_SERVER), "--no-tasks"]}}
    (root / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    (root / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def transcript(workspace: Path) -> Path:
    """The scripted offline run's transcript."""
    path = workspace / "run.jsonl"
    proc = toolrelay(["run", "add and ask", "--config", "mcp.json", "--model", "offline", "--script",
                      "script.json", "--yes", "--elicit", "defaults", "--quiet", "--call-timeout", "1",
                      "--transcript", str(path)],
                     workspace)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Done."
    return path


def events_of(path: Path) -> list[dict[str, Any]]:
    return transcript_events(path)


# -- toolrelay call -----------------------------------------------------------------------


def test_a_task_tool_runs_as_a_task_and_its_result_is_the_calls(workspace: Path) -> None:
    proc = toolrelay(["call", "ts__slow_sum", '{"a": 2, "b": 3}', "--config", "mcp.json", "--json", "--wire"],
                     workspace)
    assert proc.returncode == 0, proc.stderr
    done = json.loads(proc.stdout)
    assert done["status"] == "ok" and done["result"]["content"] == [{"type": "text", "text": "5"}]
    sent = [entry["message"] for entry in done["wire"] if entry["direction"] == "out"]
    call = next(message for message in sent if message.get("method") == "tools/call")
    assert call["params"]["task"] == {"ttl": 600000}
    task_requests = [message for message in sent if str(message.get("method")).startswith("tasks/")]
    assert [m["method"] for m in task_requests] == ["tasks/get"] * 3 + ["tasks/result"]
    assert done["mcp_id"] == call["id"]  # the outcome names the tools/call, answered by tasks/result


def test_a_failed_task_is_a_tool_error(workspace: Path) -> None:
    proc = toolrelay(["call", "ts__breaks", "--config", "mcp.json"], workspace)
    assert proc.returncode == 1
    assert "the job broke" in proc.stdout
    assert "toolrelay call: the tool reported an error (isError: true" in proc.stderr


def test_a_task_that_never_ends_is_cancelled_when_the_call_times_out(workspace: Path) -> None:
    proc = toolrelay(["call", "ts__forever", "--config", "mcp.json", "--timeout", "0.3", "--json", "--wire"],
                     workspace)
    assert proc.returncode == 3
    done = json.loads(proc.stdout)
    assert done["status"] == "transport_error" and done["transport_kind"] == "timeout"
    assert "did not end within 0.3 s; toolrelay cancelled the task (tasks/cancel)" in done["message"]
    answers = [entry["message"] for entry in done["wire"] if entry["direction"] == "in"]
    assert answers[-1]["result"]["status"] == "cancelled"  # the server's answer to tasks/cancel


def test_an_optional_task_tool_is_called_plainly(workspace: Path) -> None:
    proc = toolrelay(["call", "ts__echo", '{"text": "hi"}', "--config", "mcp.json"], workspace)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "hi (as a task: False)"


def test_tools_marks_task_tools_and_names_those_it_cannot_offer(workspace: Path) -> None:
    proc = toolrelay(["tools", "--config", "mcp.json"], workspace)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines() if "__" in line}
    assert "[task] Add two numbers" in rows["ts__slow_sum"] and "[task]" not in rows["ts__echo"]
    assert "nt__echo" in rows and not any(alias in rows for alias in ("nt__slow_sum", "nt__forever"))
    assert ("server nt: tools slow_sum, breaks, forever, asks are not offered: they must run as tasks "
            "(execution.taskSupport: required), and the server does not declare tasks for tools/call "
            "(capabilities.tasks.requests.tools.call)") in proc.stderr


def test_calling_a_task_tool_that_cannot_run_says_why(workspace: Path) -> None:
    proc = toolrelay(["call", "ts__slow_sum", '{"a": 1, "b": 2}', "--config", "mcp.json",
                      "--protocol-version", "2025-06-18"], workspace)
    assert proc.returncode == 2
    assert ("toolrelay call: error: ts__slow_sum: server ts: tool slow_sum is not offered: it must run as a "
            "task (execution.taskSupport: required), and tasks need MCP 2025-11-25; the connection speaks "
            "2025-06-18") in proc.stderr


def test_cancelling_the_call_cancels_its_task(tmp_path: Path) -> None:
    """Ctrl-C cancels the run's calls: a call running as a task sends tasks/cancel first."""
    recorder = Recorder()

    def polled() -> bool:
        return any(isinstance(e, McpMessage) and e.role == MCP_RESPONSE and e.method == "tasks/get"
                   for e in recorder.seen)

    async def main() -> list[Any]:
        config = ServerConfig(name="ts", transport="stdio", command=PYTHON, args=(str(TASK_SERVER),))
        async with open_connection(config, tmp_path, recorder) as connection:
            await connection.list_tools()
            call = asyncio.ensure_future(connection.call_tool("forever", {}, call_id="call_1"))
            assert await async_wait_until(polled)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            seen = await connection.call_tool("seen", {})
            assert seen.result is not None
            return list(json.loads(seen.result["content"][0]["text"]))

    received = run(main())
    assert received[-1][0] == "tasks/cancel"
    cancels = [e for e in recorder.seen if isinstance(e, McpMessage) and e.method == "tasks/cancel"]
    assert cancels and cancels[0].role == MCP_REQUEST and cancels[0].call_id == "call_1"


def test_tasks_run_only_where_the_revision_and_the_server_allow_them() -> None:
    declared = {"tasks": {"requests": {"tools": {"call": {}}}}}
    assert tasks_unavailable("2025-11-25", declared) is None
    assert tasks_unavailable("2026-07-28", declared) == (
        "MCP 2026-07-28 has no task-augmented calls: in its tasks extension the server decides which "
        "calls become tasks")
    assert tasks_unavailable("2025-11-25", {"tasks": {"requests": {"sampling": {}}}}) == (
        "the server does not declare tasks for tools/call (capabilities.tasks.requests.tools.call)")


def test_a_task_that_failed_yet_answers_a_success_is_no_success() -> None:
    final = Exchange(7, "tasks/result", {})
    final.result = {"content": [{"type": "text", "text": "fine"}]}
    assert settled_problem("ts", "slow_sum", "t1", "failed", final) == (
        "server ts: the task t1 of tools/call slow_sum ended failed, yet tasks/result answered with a "
        "result that is not an error")
    assert settled_problem("ts", "slow_sum", "t1", "completed", final) is None


# -- a scripted run: recorded, verified, drawn ---------------------------------------------


def test_a_scripted_run_records_its_tasks_and_verifies(transcript: Path, workspace: Path) -> None:
    events = events_of(transcript)
    outcomes = [e["outcome"]["status"] for e in events if e["kind"] == "call_outcome"]
    assert outcomes == ["ok", "tool_error", "ok", "ok", "transport_error"]
    first = "call_offline_0001"
    tagged = {e["method"] for e in events if e["kind"] == "mcp_request" and e.get("call_id") == first}
    assert tagged == {"tools/call", "tasks/get", "tasks/result"}
    asked = [e for e in events if e["kind"] == "mcp_server_request" and e["method"] == "elicitation/create"]
    assert [e["call_id"] for e in asked] == ["call_offline_0003"]  # by the task's related-task meta
    verdict = toolrelay(["verify", str(transcript), "--all"], workspace)
    assert verdict.returncode == 0, verdict.stdout
    for line in (
        "as task ", "working ×3 → completed → result: a result (ok)",
        "working → failed → result: isError: true (tool error): \"the job broke\"",
        "call_offline_0001: task ", "its 4 task request(s) name the task its tools/call created",
        "call_offline_0003: during its tools/call the server asked elicitation/create",
        "call_offline_0005: task ", "→ cancelled by toolrelay (tasks/cancel);",
    ):
        assert line in verdict.stdout, (line, verdict.stdout)


def test_verify_catches_a_task_request_naming_another_task(transcript: Path, tmp_path: Path) -> None:
    events = events_of(transcript)
    poll = next(e for e in events if e["kind"] == "mcp_request" and e["method"] == "tasks/get")
    created = poll["message"]["params"]["taskId"]
    poll["message"]["params"]["taskId"] = "someone-elses-task"
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    verdict = toolrelay(["verify", str(tampered)], tmp_path)
    assert verdict.returncode == 1
    assert (f"call_offline_0001: tasks/get mcp id {poll['mcp_id']} names task 'someone-elses-task', but its "
            f"tools/call created task {created!r}") in verdict.stdout


def test_view_draws_a_task_inside_its_call_compactly(transcript: Path) -> None:
    trace = build_trace(events_of(transcript), None, source="run.jsonl")
    calls = {call.call_id: call for group in trace.groups for call in group.calls()}
    rows = [(row.label, row.detail) for row in calls["call_offline_0001"].rows if row.message]
    labels = [label for label, _ in rows]
    assert labels == ["tools/call slow_sum · as a task", "task created", "tasks/get", "task working ×2",
                      "tasks/get", "task completed", "tasks/result", "result"]
    created = dict(rows)["task created"]
    assert created.startswith("task ") and created.endswith("… working ×3 → completed → result")
    failed = [row for row in calls["call_offline_0002"].rows if row.label == "task failed"]
    assert failed and failed[0].state == "failed"


def test_ctrl_c_cancels_a_running_task_and_the_run_verifies_as_unfinished(workspace: Path) -> None:
    script = workspace / "forever.json"
    script.write_text(json.dumps({"turns": [{"calls": [{"name": "ts__forever", "arguments": {}}]}]}))
    transcript = workspace / "stopped.jsonl"
    command = [PYTHON, "-m", "toolrelay", "run", "wait", "--config", "mcp.json", "--model", "offline",
               "--script", str(script), "--yes", "--transcript", str(transcript)]
    with spawned(command, cwd=workspace, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, text=True) as proc:
        assert wait_until(lambda: transcript.exists() and '"method": "tasks/get"' in transcript.read_text(),
                          timeout=60), "the task was never polled"
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    assert proc.returncode == 130
    events = events_of(transcript)
    cancels = [e for e in events if e["kind"] == "mcp_request" and e["method"] == "tasks/cancel"]
    assert [e.get("call_id") for e in cancels] == ["call_offline_0001"]
    call = next(e for e in events if e["kind"] == "mcp_request" and e["method"] == "tools/call")
    [outcome] = [e["outcome"] for e in events if e["kind"] == "call_outcome"]
    assert (outcome["status"], outcome["mcp_id"]) == ("cancelled", call["mcp_id"])
    verdict = toolrelay(["verify", str(transcript)], workspace)
    assert verdict.returncode == 0 and "BROKEN" not in verdict.stdout, verdict.stdout
