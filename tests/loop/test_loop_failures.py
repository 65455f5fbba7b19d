"""The loop when servers misbehave: a crash mid-run, a hang, consent, list changes.

The model is the offline stand-in (a real loopback Responses server); the MCP server is
the stdlib toolbox test server in a real subprocess. The tests that take ``dialect`` run
over both model dialects (``--api responses`` and ``--api chat``)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from loop_helpers import make_workspace, named, run_script, toolbox_server

from testkit.dialect import Dialect
from toolrelay.relay.loop import RunLimits
from toolrelay.relay.stages.consent import approve_all


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "workspace")


def call(name: str, **arguments: object) -> dict[str, object]:
    return {"name": name, "arguments": arguments}


def received(record: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in record.read_text().splitlines() if line.strip()]


def test_a_server_crash_mid_run_is_fed_back_and_the_server_restarts(
    workspace: Path, dialect: Dialect
) -> None:
    script = {
        "turns": [
            {"calls": [call("box__crash", code=3, message="disk on fire")]},
            {"calls": [call("box__echo", text="after the crash")]},
            {"message": "done"},
        ]
    }
    run = run_script(workspace, script, servers=[toolbox_server()], approve=approve_all, dialect=dialect)
    crashed, echoed = run.result.calls
    assert crashed.status == "transport_error" and crashed.transport_kind == "exited"
    expected = "Error (server box exited): server box exited (code 3): disk on fire"
    assert run.outputs(1)[0]["output"] == expected
    assert crashed.mcp_id is not None and crashed.connection == 1
    assert echoed.status == "ok" and echoed.connection == 2
    assert run.outputs(2)[-1]["output"] == "after the crash"
    notices = [e.to_record()["text"] for e in run.kinds("notice")]
    assert any("restarted" in text and "connection 2" in text for text in notices), notices
    assert run.result.status == "completed"


@pytest.mark.parametrize(  # consent is the same inside a namespace (which chat has not) and in chat
    ("declare", "dialect"), [("flat", "responses"), ("namespaces", "responses"), ("flat", "chat")],
    indirect=["dialect"])
def test_a_tool_not_marked_read_only_is_refused_without_approval(
    workspace: Path, declare: str, dialect: Dialect
) -> None:
    script = {"turns": [{"calls": [{**named("box__echo", declare), "arguments": {"text": "hi"}}]}]}
    run = run_script(workspace, script, servers=[toolbox_server()], declare=declare, dialect=dialect)
    [outcome] = run.result.calls
    assert outcome.status == "not_approved"
    assert run.outputs(1)[0]["output"] == (
        "Error (not approved): tool echo on server box is not marked read-only and was not approved "
        "(pass approve= to approve calls)"
    )
    assert not [e for e in run.records("mcp_request") if e["call_id"] == outcome.call_id]


def test_an_approved_call_runs(workspace: Path, dialect: Dialect) -> None:
    script = {"turns": [{"calls": [call("box__echo", text="hi")]}]}
    run = run_script(workspace, script, servers=[toolbox_server()], approve=approve_all, dialect=dialect)
    assert run.result.calls[0].status == "ok" and run.outputs(1)[0]["output"] == "hi"


def test_a_hanging_call_times_out_with_a_cancellation_and_the_run_goes_on(
    workspace: Path, tmp_path: Path, dialect: Dialect
) -> None:
    record = tmp_path / "received.jsonl"
    script = {"turns": [{"calls": [call("box__hang")]}, {"message": "gave up"}]}
    run = run_script(
        workspace,
        script,
        servers=[toolbox_server("box", "--record", str(record))],
        approve=approve_all,
        limits=RunLimits(call_timeout=0.5),
        dialect=dialect,
    )
    [outcome] = run.result.calls
    assert outcome.status == "transport_error" and outcome.transport_kind == "timeout"
    output = run.outputs(1)[0]["output"]
    assert output == (
        f"Error (timeout): tools/call request {outcome.mcp_id} got no answer within 0.5 s "
        "(a cancellation was sent)"
    )
    cancels = [m for m in received(record) if m.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels] == [outcome.mcp_id]  # type: ignore[index]
    assert run.result.status == "completed" and run.result.final_text == "gave up"


def test_the_run_timeout_ends_the_run_and_cancels_the_call(workspace: Path, tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    script = {"turns": [{"calls": [call("box__hang")]}]}
    started = time.monotonic()
    run = run_script(
        workspace,
        script,
        servers=[toolbox_server("box", "--record", str(record))],
        approve=approve_all,
        limits=RunLimits(timeout=1.0),
    )
    assert time.monotonic() - started < 10
    assert run.result.status == "timeout"
    assert run.result.reason == "the run's time limit (1 s) ran out"
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if any(m.get("method") == "notifications/cancelled" for m in received(record)):
            break
        time.sleep(0.05)
    assert any(m.get("method") == "notifications/cancelled" for m in received(record))
    [outcome] = [e.to_record()["outcome"] for e in run.kinds("call_outcome")]
    assert outcome["status"] == "cancelled"
    assert outcome["message"] == "the run's time limit (1 s) ran out before the call ended"


def test_tools_list_changed_refreshes_the_catalog_before_the_next_turn(workspace: Path) -> None:
    script = {"turns": [{"calls": [call("box__list_changed")]}, {"message": "ok"}]}
    run = run_script(workspace, script, servers=[toolbox_server()], approve=approve_all)
    reasons = [e.to_record()["reason"] for e in run.kinds("declarations")]
    assert reasons == ["initial", "tools/list_changed from box"]
    lists = [e for e in run.records("mcp_request") if e["method"] == "tools/list"]
    assert len(lists) == 2
    # The second tools/list was answered before the second model request went out.
    seqs = {e.seq: e.event_kind for e in run.events}
    second_list = lists[1]["seq"]
    second_request = [e.seq for e in run.kinds("model_request")][1]
    assert second_list < second_request and seqs[second_list] == "mcp_request"


def test_a_malformed_result_is_a_protocol_error_not_a_success(workspace: Path, dialect: Dialect) -> None:
    script = {"turns": [{"calls": [call("box__malformed")]}]}
    run = run_script(workspace, script, servers=[toolbox_server()], approve=approve_all, dialect=dialect)
    [outcome] = run.result.calls
    assert outcome.status in ("protocol_error", "transport_error")
    assert run.outputs(1)[0]["output"].startswith("Error (")
