"""A scripted offline run whose calls a 2026-07-28 server makes tasks of the tasks extension
(SEP-2663, ``sdk_tasks_ext_server.py``): the transcript verifies with the task checks in the
extension's names, tampered copies (a poll naming another task, a changed task result, a
state not echoed) are rejected, and explain and view show the task inside its call."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import PYTHON
from testkit.servers import SDK_TASKS_EXT_SERVER
from testkit.transcripts import transcript_events
from toolrelay.view.build import build_trace

SCRIPT = {
    "turns": [
        {"calls": [{"name": "x__slow", "arguments": {"text": "late hello", "seconds": 0.2}}]},
        {"calls": [{"name": "x__fail", "arguments": {}}]},
        {"calls": [{"name": "x__ask", "arguments": {}}]},
        {"calls": [{"name": "x__plain", "arguments": {"text": "hi"}}]},
        {"calls": [{"name": "x__forever", "arguments": {}}]},
        {"calls": [{"name": "x__abandon", "arguments": {}}]},
        {"message": "Done."},
    ],
}
"""A task that completes, one that fails, one that asks, a plain call, one that never ends
(cancelled at the run's ``--call-timeout``), one the server abandons."""


def toolrelay(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "toolrelay", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ext_tasks")
    servers = {"x": {"command": PYTHON, "args": [str(SDK_TASKS_EXT_SERVER)]}}
    (root / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    (root / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def transcript(workspace: Path) -> Path:
    path = workspace / "run.jsonl"
    proc = toolrelay(["run", "use the tasks", "--config", "mcp.json", "--model", "offline", "--script",
                      "script.json", "--yes", "--elicit", "defaults", "--quiet", "--call-timeout", "1",
                      "--protocol-version", "2026-07-28", "--transcript", str(path)], workspace)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Done."
    return path


def _tampered(events: list[dict[str, Any]], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "tampered.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return toolrelay(["verify", str(path)], tmp_path)


def test_the_run_records_its_extension_tasks_and_verifies(transcript: Path, workspace: Path) -> None:
    events = transcript_events(transcript)
    outcomes = [e["outcome"]["status"] for e in events if e["kind"] == "call_outcome"]
    assert outcomes == ["ok", "protocol_error", "ok", "ok", "transport_error", "protocol_error"]
    tagged = {e["method"] for e in events
              if e["kind"] == "mcp_request" and e.get("call_id") == "call_offline_0003"}
    assert tagged == {"tools/call", "tasks/get", "tasks/update"}
    feedback = [e["item"]["output"] for e in events if e["kind"] == "feedback"]
    assert feedback[:4] == ["late hello", "Error (protocol -32001): backend refused the job", "hello Ada",
                            "hi"]
    abandoned = next(e for e in events if e["kind"] == "call_outcome" and e["call_id"] == "call_offline_0006")
    assert abandoned["outcome"]["message"] == (
        f"server x sent a malformed answer to tools/call request {abandoned['outcome']['mcp_id']}: its task "
        "ext-task-5 gave no result: it ended cancelled (the server gave up)")
    verdict = toolrelay(["verify", str(transcript), "--all"], workspace)
    assert verdict.returncode == 0, verdict.stdout
    for line in (
        "call_offline_0001: task ext-task", "→ completed → result",
        "task request(s) name the task its tools/call created",
        "task request(s) echo the task's latest requestState; 1 input request(s) answered, each once and "
        "each asked",
        "call_offline_0005: task ext-task", "→ cancelled by toolrelay (tasks/cancel)",
    ):
        assert line in verdict.stdout, (line, verdict.stdout)


def test_verify_rejects_a_poll_naming_another_task(transcript: Path, tmp_path: Path) -> None:
    events = transcript_events(transcript)
    poll = next(e for e in events if e["kind"] == "mcp_request" and e["method"] == "tasks/get")
    poll["message"]["params"]["taskId"] = "someone-elses-task"
    verdict = _tampered(events, tmp_path)
    assert verdict.returncode == 1
    assert (f"call_offline_0001: tasks/get mcp id {poll['mcp_id']} names task 'someone-elses-task', but its "
            "tools/call created task 'ext-task-1'") in verdict.stdout


def test_verify_rejects_a_changed_task_result(transcript: Path, tmp_path: Path) -> None:
    events = transcript_events(transcript)
    ended = next(e for e in events if e["kind"] == "mcp_response" and e.get("call_id") == "call_offline_0001"
                 and e["message"].get("result", {}).get("status") == "completed")
    ended["message"]["result"]["result"]["content"][0]["text"] = "forged"
    verdict = _tampered(events, tmp_path)
    assert verdict.returncode == 1, verdict.stdout
    assert ('holds "late hello"; render_output gives "forged" for the recorded answer, a success (no isError)'
            in verdict.stdout)  # the task's end is the call's answer: a forged one is not what was fed back


def test_view_draws_an_extension_task_inside_its_call(transcript: Path) -> None:
    trace = build_trace(transcript_events(transcript), None, source="run.jsonl")
    calls = {call.call_id: call for group in trace.groups for call in group.calls()}
    labels = [row.label for row in calls["call_offline_0003"].rows if row.message]
    assert labels == ["tools/call ask", "task created", "tasks/get", "task input_required", "tasks/update",
                      "input given", "tasks/get", "task completed"]
    created = next(row.detail for row in calls["call_offline_0003"].rows if row.label == "task created")
    assert created == "task ext-task… working → input_required → completed → result"
    slow = [row.label for row in calls["call_offline_0001"].rows if row.message]
    assert slow[:3] == ["tools/call slow", "task created", "tasks/get"] and slow[-1] == "task completed"


def test_explain_names_each_calls_task(transcript: Path, workspace: Path) -> None:
    shown = toolrelay(["explain", str(transcript)], workspace)
    assert shown.returncode == 0, shown.stderr
    servers = [line for line in shown.stdout.splitlines() if "server checks" in line]
    assert servers[2].endswith("answered, ok · as task ext-task… working → input_required → completed → "
                               "result")
    assert "answered, protocol_error: \"backend refused the job\" · as task ext-task… working" in servers[1]
    assert servers[3].endswith("answered, ok")  # the plain call: no task
    assert servers[4].endswith("→ cancelled by toolrelay (tasks/cancel)")


def test_verify_rejects_a_request_state_the_task_never_gave(transcript: Path, tmp_path: Path) -> None:
    events = transcript_events(transcript)
    polls = [e for e in events if e["kind"] == "mcp_request" and e["method"] == "tasks/get"
             and e.get("call_id") == "call_offline_0001"]
    assert "requestState" not in polls[1]["message"]["params"]  # the locked spec's task gives none
    polls[1]["message"]["params"]["requestState"] = "made-up"
    verdict = _tampered(events, tmp_path)
    assert verdict.returncode == 1, verdict.stdout
    assert (f"call_offline_0001: tasks/get mcp id {polls[1]['mcp_id']} carries requestState 'made-up', "
            "but the task gave none before it") in verdict.stdout


def test_verify_rejects_a_request_state_of_the_older_draft_not_echoed(workspace: Path, tmp_path: Path
                                                                      ) -> None:
    servers = {"x": {"command": PYTHON, "args": [str(SDK_TASKS_EXT_SERVER), "--draft"]}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    path = tmp_path / "draft.jsonl"
    proc = toolrelay(["run", "use the tasks", "--config", str(tmp_path / "mcp.json"), "--model", "offline",
                      "--script", "script.json", "--yes", "--elicit", "defaults", "--quiet", "--call-timeout",
                      "1", "--protocol-version", "2026-07-28", "--transcript", str(path)], workspace)
    assert proc.returncode == 0, proc.stderr
    events = transcript_events(path)
    assert _tampered(events, tmp_path).returncode == 0  # as recorded, its echoes verify
    polls = [e for e in events if e["kind"] == "mcp_request" and e["method"] == "tasks/get"
             and e.get("call_id") == "call_offline_0001"]
    polls[1]["message"]["params"]["requestState"] = "made-up"
    verdict = _tampered(events, tmp_path)
    assert verdict.returncode == 1, verdict.stdout
    assert (f"call_offline_0001: tasks/get mcp id {polls[1]['mcp_id']} carries requestState 'made-up', "
            "but the task's latest before it was 'ext-task-1-state-3'") in verdict.stdout


def test_verify_rejects_an_input_answer_nobody_asked_for(transcript: Path, tmp_path: Path) -> None:
    events = transcript_events(transcript)
    update = next(e for e in events if e["kind"] == "mcp_request" and e["method"] == "tasks/update")
    update["message"]["params"]["inputResponses"]["card-number"] = {"action": "accept", "content": {"n": 1}}
    verdict = _tampered(events, tmp_path)
    assert verdict.returncode == 1, verdict.stdout
    assert (f"call_offline_0003: tasks/update mcp id {update['mcp_id']} answers input request 'card-number', "
            "which no tasks/get of the task asked") in verdict.stdout
